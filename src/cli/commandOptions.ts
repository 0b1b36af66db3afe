/**
 * Command options, declared once: each `labs` command has one table (`RUN_OPTIONS`,
 * `AUDIT_OPTIONS`, ...) of the entries built here, and everything else is derived from it, as the
 * experiment options are from theirs (src/experiments/options.ts):
 *
 *   export const COMPARE_OPTIONS = {
 *     metric: listOption('--metric', 'key', "compare this metric key (repeatable; ...)"),
 *     json: flagOption('--json', 'print the comparison as JSON'),
 *   };
 *   type CompareValues = OptionValues<typeof COMPARE_OPTIONS>; // { metric: string[]; json: boolean }
 *
 * An entry gives the flag, its value name, type, default, range or choices, help text, whether it is
 * repeatable or required, and (for `labs audit`) which presets accept it. From the table come the
 * commander flags and help text (`addOptions`), the typed values with one validation per flag
 * (`readOptions`: every mistake a LabError BAD_CLI naming the flag, exit 2), and the synopsis lines
 * of docs/cli.md (`synopsisLines`, written by `npm run docs`, checked by test/docs.test.ts).
 * An option several commands share with one meaning (`--seeds`, `--jobs`, `--shard`) is declared
 * once in sharedOptions.ts and placed into each table, with `withHelp` where the wording differs.
 *
 * This is the only file that calls commander's `.option`/`new Option` (test/cliOptions.test.ts).
 * No zod here: `labs --help` stays free of it (docs/bench-startup.md).
 */
import { type Command, Option } from 'commander';
import { LabError } from '../core/errors.js';

/** One command option: how it is spelled, shown, checked and read. */
export interface CommandOption<T = unknown> {
  /** The long flag as typed, `--zero-std-tol` (a negated boolean: `--no-progress`). */
  readonly long: string;
  /** A one-letter alias, `-e`. */
  readonly short?: string;
  /** The value's name in help (`x` shows `<x>`), or null for a flag without a value. */
  readonly value: string | null;
  /** `--html [file]`: the value may be left out. */
  readonly optionalValue?: boolean;
  readonly required?: boolean;
  /** Given several times, every value is kept (in order). */
  readonly repeatable?: boolean;
  /** Collected like a repeatable option only so that `read` can refuse a second one: shown once. */
  readonly shownOnce?: boolean;
  readonly choices?: readonly string[];
  /** The default as text (commander shows it in help as `(default: "1")` and reads it like a typed value). */
  readonly defaultText?: string;
  readonly help: string;
  /** `labs audit`: the presets that accept it (undefined: every preset). */
  readonly presets?: readonly string[];
  /** The refusal when given with another preset, after the flag, from the preset given. */
  readonly refusal?: (preset: string) => string;
  /** This option is `--preset` itself (the synopsis of a preset group shows only that group's choices). */
  readonly selectsPreset?: boolean;
  /** Synopsis: options of one group share one bracket, `[--seed N | --seeds A..B]`. */
  readonly group?: string;
  /** Synopsis: shown inside the bracket of this other flag, `[--shard K/N|auto [--shard-count N]]`. */
  readonly within?: string;
  /** Given again in the command line that reproduces a result (`labs audit`'s rerun line) when not at its default. */
  readonly rerun?: boolean;
  /** One flag per name, `--col-<name>` for each canonical column (the value: name → text given). */
  readonly family?: readonly string[];
  /** The typed value from commander's raw value (undefined: not given, no default); throws BAD_CLI. */
  readonly read: (raw: unknown) => T;
}

// biome-ignore lint/suspicious/noExplicitAny: a table holds options of every value type
export type OptionTable = Readonly<Record<string, CommandOption<any>>>;

/** The parsed values of a table: one typed field per option, named as commander names it. */
export type OptionValues<T extends OptionTable> = {
  -readonly [K in keyof T]: T[K] extends CommandOption<infer V> ? V : never;
};

/** What a table entry may add to the builders' arguments. */
export type Extra = Partial<
  Pick<
    CommandOption,
    | 'short'
    | 'presets'
    | 'refusal'
    | 'group'
    | 'within'
    | 'selectsPreset'
    | 'optionalValue'
    | 'shownOnce'
    | 'rerun'
  >
>;

/** The usage error of one flag: BAD_CLI, naming it in the message and in `details.field`. */
export function flagError(flag: string, message: string): LabError {
  return new LabError('BAD_CLI', `${flag} ${message}`, { details: { field: flag } });
}

/** `--json`: true when given (`--no-progress`: false when given). */
export function flagOption(long: string, help: string, extra: Extra = {}): CommandOption<boolean> {
  const negated = long.startsWith('--no-');
  return { long, value: null, help, ...extra, read: (raw) => (negated ? raw !== false : raw === true) };
}

/** A text value (`--out <dir>`), null when not given; `nonEmpty` refuses blank text with that message. */
export function textOption(
  long: string,
  value: string,
  help: string,
  extra: Extra & { nonEmpty?: string } = {},
): CommandOption<string | null> {
  const { nonEmpty, ...rest } = extra;
  return {
    long,
    value,
    help,
    ...rest,
    read: (raw) => {
      if (raw === undefined) return null;
      const text = String(raw);
      if (nonEmpty !== undefined && text.trim() === '') throw flagError(long, nonEmpty);
      return text;
    },
  };
}

/** The same option made mandatory (commander refuses the command without it), so never null. */
export function required<T>(option: CommandOption<T | null>): CommandOption<T> {
  return { ...option, required: true, read: (raw) => option.read(raw) as T };
}

/** The range of a number option. */
export interface NumberRange {
  /** Only plain digits (`0x10` or `1e3` would silently become another integer through Number()). */
  integer?: boolean | undefined;
  min?: number | undefined;
  max?: number | undefined;
  /** How the message names the range when the numbers alone would mislead (`[0, 2^31-1]`). */
  rangeText?: string | undefined;
  /** What the value is, in the message: `seconds` (default `a finite number` / `an integer`). */
  noun?: string | undefined;
}

function describeRange(r: NumberRange): string {
  const noun = r.noun ?? (r.integer ? 'an integer' : 'a finite number');
  if (r.rangeText !== undefined) return `${noun} ${r.rangeText}`;
  if (r.min !== undefined && r.max !== undefined) return `${noun} in [${r.min}, ${r.max}]`;
  if (r.min !== undefined) return `${noun} >= ${r.min}`;
  if (r.max !== undefined) return `${noun} <= ${r.max}`;
  return noun;
}

/** The number typed for `long`, or BAD_CLI `--flag expects <range>, got 'text'`. */
function readNumber(long: string, raw: unknown, r: NumberRange): number {
  const text = String(raw).trim();
  const n = text === '' || (r.integer && !/^\d+$/.test(text)) ? Number.NaN : Number(text);
  const inRange =
    Number.isFinite(n) && (r.min === undefined || n >= r.min) && (r.max === undefined || n <= r.max);
  if (!inRange) throw flagError(long, `expects ${describeRange(r)}, got '${String(raw)}'`);
  return n;
}

/** A number (`--pass-value <x>`): with a default always a number, without one null when not given. */
export function numberOption(
  long: string,
  value: string,
  help: string,
  range: NumberRange & Extra & { default: number },
): CommandOption<number>;
export function numberOption(
  long: string,
  value: string,
  help: string,
  range?: NumberRange & Extra,
): CommandOption<number | null>;
export function numberOption(
  long: string,
  value: string,
  help: string,
  range: NumberRange & Extra & { default?: number } = {},
): CommandOption<number | null> {
  const { integer, min, max, rangeText, noun, default: def, ...extra } = range;
  const r: NumberRange = { integer, min, max, rangeText, noun };
  return {
    long,
    value,
    help,
    ...(def === undefined ? {} : { defaultText: String(def) }),
    ...extra,
    read: (raw) => (raw === undefined ? null : readNumber(long, raw, r)),
  };
}

/** One of `choices` (commander refuses any other value), `def` when not given. */
export function choiceOption<const C extends readonly string[]>(
  long: string,
  value: string,
  choices: C,
  def: C[number],
  help: string,
  extra: Extra = {},
): CommandOption<C[number]> {
  return { long, value, help, choices, defaultText: def, ...extra, read: (raw) => (raw ?? def) as C[number] };
}

/** A repeatable text value (`--set key=value`): every value given, in order ([] when none). */
export function listOption(
  long: string,
  value: string,
  help: string,
  extra: Extra = {},
): CommandOption<string[]> {
  return {
    long,
    value,
    help,
    repeatable: true,
    ...extra,
    read: (raw) => (Array.isArray(raw) ? (raw as string[]) : []),
  };
}

/** A value read by `parse` (`--seeds 1..5`, `--shard 2/4`), which throws BAD_CLI naming the flag; null when not given. */
export function parsedOption<T>(
  long: string,
  value: string,
  help: string,
  parse: (text: string) => T,
  extra: Extra = {},
): CommandOption<T | null> {
  return { long, value, help, ...extra, read: (raw) => (raw === undefined ? null : parse(String(raw))) };
}

/** Comma-separated finite numbers (`--reward-weights 1,0.5`); `what` names them in the message. */
export function numberListOption(
  long: string,
  value: string,
  help: string,
  what: string,
  extra: Extra = {},
): CommandOption<number[] | null> {
  return parsedOption(
    long,
    value,
    help,
    (text) => {
      const numbers = text.split(',').map((t) => (t.trim() === '' ? Number.NaN : Number(t)));
      if (!numbers.every(Number.isFinite)) throw flagError(long, `expects ${what}, got '${text}'`);
      return numbers;
    },
    extra,
  );
}

/**
 * One flag per name: `--col-step <source>`, `--col-group <source>`, ... (`prefix` is `--col-`, a
 * name's `_` becomes `-`); the value maps each name given to its text.
 */
export function familyOption(
  prefix: string,
  names: readonly string[],
  value: string,
  help: (name: string) => string,
): CommandOption<Record<string, string>> {
  return {
    long: `${prefix}<name>`,
    value,
    help: help('<name>'),
    family: names,
    read: (raw) => {
      const given = raw as Record<string, unknown>;
      const out: Record<string, string> = {};
      for (const name of names) {
        const v = given[name];
        if (typeof v === 'string') out[name] = v;
      }
      return out;
    },
  };
}

/** The same option with another help text (a shared option worded for one command). */
export function withHelp<T>(option: CommandOption<T>, help: string): CommandOption<T> {
  return { ...option, help };
}

/** The flag of one member of a family, `--col-` + `group_size` → `--col-group-size`. */
function familyFlag(option: CommandOption, name: string): string {
  return `${option.long.replace('<name>', '')}${name.replace(/_/g, '-')}`;
}

/** How commander names an option's value (`--zero-std-tol` → `zeroStdTol`, `--no-progress` → `progress`). */
function attributeOf(flag: string): string {
  return new Option(flag).attributeName();
}

function commanderOption(flags: string, option: CommandOption, help: string): Option {
  const o = new Option(flags, help);
  if (option.choices) o.choices(option.choices);
  if (option.defaultText !== undefined) o.default(option.defaultText);
  if (option.repeatable) o.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
  if (option.required) o.makeOptionMandatory();
  return o;
}

/**
 * Adds every option of `table` to `command` (flags, help, defaults, choices). A table key must be
 * the name commander gives the flag's value, so that `readOptions` finds it: a mismatch, or a flag
 * declared twice, is a programming error thrown here (and by the tests, which build every command).
 */
export function addOptions(command: Command, table: OptionTable): void {
  const seen = new Set<string>();
  for (const [key, option] of Object.entries(table)) {
    const flags = option.family ? option.family.map((n) => familyFlag(option, n)) : [option.long];
    for (const flag of flags) {
      if (seen.has(flag)) throw new Error(`${command.name()}: ${flag} is declared twice`);
      seen.add(flag);
    }
    if (option.family) {
      for (const name of option.family) {
        const flag = familyFlag(option, name);
        command.addOption(commanderOption(`${flag} <${option.value}>`, option, memberHelp(option, name)));
      }
      continue;
    }
    const value =
      option.value === null ? '' : option.optionalValue ? ` [${option.value}]` : ` <${option.value}>`;
    const flagsText = `${option.short ? `${option.short}, ` : ''}${option.long}${value}`;
    if (attributeOf(option.long) !== key) {
      throw new Error(`${command.name()}: table key '${key}' is not commander's name for ${option.long}`);
    }
    command.addOption(commanderOption(flagsText, option, option.help));
  }
}

/** The help of one member of a family (`read '<name>' from this column`). */
function memberHelp(option: CommandOption, name: string): string {
  return option.help.replace('<name>', name);
}

/**
 * The typed values of `table` from commander's parsed options `raw`: each option read (and its value
 * checked) in table order; an option given with a preset it does not apply to is refused with its
 * `refusal`; two options of one `group` given together are refused first. `given(key)` says whether
 * the user typed the option (rather than it taking its default).
 */
export function readOptions<T extends OptionTable>(
  table: T,
  raw: Readonly<Record<string, unknown>>,
  given: (key: string) => boolean,
  preset?: string,
): OptionValues<T> {
  const entries = Object.entries(table);
  // Options of one group exclude each other (`--seed` and `--seeds`), checked before any value.
  const typed = entries.filter(([key, o]) => o.group !== undefined && given(key));
  for (const [i, [keyA, a]] of typed.entries()) {
    const clash = typed.slice(i + 1).find(([, b]) => b.group === a.group);
    if (clash) {
      const [keyB, b] = clash;
      throw flagError(
        a.long,
        `and ${b.long} exclude each other (got ${a.long} ${String(raw[keyA])} ${b.long} ${String(raw[keyB])})`,
      );
    }
  }
  const out: Record<string, unknown> = {};
  for (const [key, option] of entries) {
    if (option.family) {
      const members = Object.fromEntries(
        option.family.map((n) => [n, raw[attributeOf(familyFlag(option, n))]]),
      );
      out[key] = option.read(members);
      continue;
    }
    out[key] = option.read(raw[key]);
    if (option.presets && preset !== undefined && given(key) && !option.presets.includes(preset)) {
      const refusal = option.refusal ?? ((p: string) => `does not apply to --preset '${p}'`);
      throw flagError(option.long, refusal(preset));
    }
  }
  return out as OptionValues<T>;
}

/**
 * The command-line words that give `values` again, for the options of `table` marked `rerun`, in
 * table order: a flag that is set, a value other than the default (`--pass-value 0.5`), every value
 * of a repeatable option, a number list joined by commas, each member of a family given.
 */
export function commandWords<T extends OptionTable>(table: T, values: OptionValues<T>): string[] {
  const words: string[] = [];
  for (const [key, option] of Object.entries(table)) {
    if (!option.rerun) continue;
    const value: unknown = (values as Record<string, unknown>)[key];
    if (option.family) {
      for (const [name, text] of Object.entries(value as Record<string, string>))
        words.push(familyFlag(option, name), text);
    } else if (option.value === null) {
      if (value === true) words.push(option.long);
    } else if (Array.isArray(value)) {
      if (option.repeatable) for (const v of value) words.push(option.long, String(v));
      else words.push(option.long, value.join(','));
    } else if (value !== null && value !== option.read(option.defaultText)) {
      words.push(option.long, String(value));
    }
  }
  return words;
}

/** How an option's value shows in a synopsis: a plain word in capitals (`<dir>` → DIR), else as typed. */
function shownValue(value: string): string {
  return /^[a-z]+$/.test(value) ? value.toUpperCase() : value;
}

/** The synopsis text of one option without its brackets, `--preset verl|trl|generic`, `--html [FILE]`. */
function term(option: CommandOption, presets: readonly string[] | undefined): string {
  if (option.family) return `${option.long} ${shownValue(option.value ?? '')}`;
  if (option.value === null) return option.long;
  const shown =
    option.choices !== undefined
      ? (option.selectsPreset && presets
          ? option.choices.filter((c) => presets.includes(c))
          : option.choices
        ).join('|')
      : shownValue(option.value);
  return option.optionalValue ? `${option.long} [${shown}]` : `${option.long} ${shown}`;
}

/**
 * The synopsis of a command as words: `usage` (`labs audit PATH`) then each option of `table` in
 * table order, `[--flag VALUE]` (required: no brackets; repeatable: `...` after), one bracket per
 * `group`, an option `within` another inside its bracket. With `presets`, only the options that
 * apply to one of them (and only those choices of `--preset`).
 */
export function synopsisWords(table: OptionTable, presets?: readonly string[]): string[] {
  const options = Object.values(table).filter(
    (o) => !presets || !o.presets || o.presets.some((p) => presets.includes(p)),
  );
  const words: string[] = [];
  const done = new Set<CommandOption>();
  for (const option of options) {
    if (done.has(option) || option.within !== undefined) continue;
    const members = option.group === undefined ? [option] : options.filter((o) => o.group === option.group);
    for (const m of members) done.add(m);
    const inner = members
      .map((m) => {
        const nested = options.filter((o) => o.within === m.long).map((o) => ` [${term(o, presets)}]`);
        return `${term(m, presets)}${nested.join('')}`;
      })
      .join(' | ');
    // `--preset` is not optional in the synopsis of presets its default is not one of
    const presetNeeded =
      option.selectsPreset === true && presets !== undefined && !presets.includes(option.defaultText ?? '');
    const required = members.length === 1 && (option.required === true || presetNeeded);
    words.push(
      `${required ? inner : `[${inner}]`}${members.some((m) => (m.repeatable && !m.shownOnce) || m.family) ? '...' : ''}`,
    );
  }
  return words;
}

/** `usage` and the option words wrapped at `width` columns, continuation lines indented by `indent`. */
export function synopsisLines(usage: string, words: readonly string[], width = 100, indent = 9): string[] {
  const lines: string[] = [];
  let line = usage;
  for (const w of words) {
    if (line.length + 1 + w.length > width && line.trim() !== '') {
      lines.push(line);
      line = `${' '.repeat(indent)}${w}`;
    } else {
      line = `${line} ${w}`;
    }
  }
  lines.push(line);
  return lines;
}
