/**
 * Experiment options: each option is declared once, as one field of a zod object, and everything
 * else is derived from that declaration.
 *
 *   export const AGENT_OPTIONS = defineOptions({
 *     lr: option(z.number().positive().finite(), 2, 'learning rate of the gradient step', 'per update'),
 *     ...
 *   });
 *   export type AgentConfig = z.output<typeof AGENT_OPTIONS>; // { lr: number; ... }, snake_case
 *
 * The field gives the type (`z.output`), the range (the schema), the default, the help text and the
 * unit. `configOf` is the one validation (defaults filled, values checked, unknown keys refused) that
 * both the CLI (`--set key=value`, via `resolveConfig`) and a library caller (`runExperiment`) go
 * through; an experiment's `run` receives that parsed, snake_case config and trusts it. `labs list`,
 * `labs run -e NAME --help` and the record's `config` all read the same object, so they cannot
 * disagree with what is validated.
 *
 * Import cost: this module only builds schemas (no parsing, no JSON Schema) at import time.
 */
import { z } from 'zod';
import { LabError } from '../core/errors.js';
import { describeAccepted } from './optionRange.js';
import type { Experiment, OptionShape, OptionsSchema, RunContext, RunRecord } from './types.js';

// The option types are declared beside the Experiment contract that uses them (types.ts), so that
// types.ts need not import this file; re-exported here, where options are declared.
export type { OptionField, OptionShape, OptionsSchema } from './types.js';

/**
 * A default that replaces an option's own when another option has a given value and this one is not
 * set: `neural_lr` is 0.01 from scratch but 0.001 when `init=sft` (a fine-tuning step size). Declared
 * with the option (`option(..., { when: { option: 'init', equals: 'sft' }, value: 0.001 })`), applied
 * by {@link configOf}, shown by `labs list`; the record's config holds the value that was used.
 */
export interface DefaultWhen {
  when: { option: string; equals: string | number | boolean };
  value: unknown;
}

/** What `labs list` and the docs show of one option. */
export interface OptionInfo {
  key: string;
  default: unknown;
  /** The default that replaces `default` when another option has a given value (absent: none). */
  defaultWhen?: DefaultWhen;
  /** What it means and, where it helps, a typical range or why the default. */
  help: string;
  /** Unit of the value ('' when it has none, e.g. a count or an enum). */
  unit: string;
  /** The value schema without its default (what `--set` validates). */
  schema: z.ZodType;
}

/**
 * One option: `schema` says the type and range, `defaultValue` is used when the option is not set,
 * `help` says what it means (shown by `labs list`), `unit` the unit of its value, `defaultWhen` an
 * other default that applies when another option has a given value ({@link DefaultWhen}).
 */
export function option<T extends z.ZodType>(
  schema: T,
  defaultValue: z.output<T>,
  help: string,
  unit = '',
  defaultWhen?: { when: DefaultWhen['when']; value: z.output<T> },
): z.ZodDefault<T> {
  if (defaultWhen !== undefined) schema.parse(defaultWhen.value); // a bad declaration fails at import
  return schema
    .default(defaultValue as never)
    .meta({ description: help, unit, ...(defaultWhen ? { defaultWhen } : {}) });
}

/**
 * The same option with another default (help, unit and range kept), for an experiment that shares
 * an option block but needs a different value (e.g. `truncation`'s tighter token budget). The new
 * default is the only one: a conditional default of the shared option ({@link DefaultWhen}) is
 * dropped, since the experiment chose its value.
 */
export function withDefault<T extends z.ZodType>(
  field: z.ZodDefault<T>,
  defaultValue: z.output<T>,
): z.ZodDefault<T> {
  const { defaultWhen: _dropped, ...meta } = (field.meta() ?? {}) as Record<string, unknown>;
  return field
    .unwrap()
    .default(defaultValue as never)
    .meta(meta) as z.ZodDefault<T>;
}

/** The conditional default of one option field, if it declares one. */
function defaultWhenOf(field: z.ZodType): DefaultWhen | undefined {
  return ((field.meta() ?? {}) as { defaultWhen?: DefaultWhen }).defaultWhen;
}

/** An experiment's options object: strict (an unknown key is an error, never silently ignored). */
export function defineOptions<Shape extends OptionShape>(shape: Shape): OptionsSchema<Shape> {
  return z.strictObject(shape);
}

/** Every option of `schema` in declaration order, with its default, help, unit and value schema. */
export function optionList(schema: OptionsSchema): OptionInfo[] {
  return Object.entries(schema.shape).map(([key, field]) => {
    const meta = (field.meta() ?? {}) as { description?: string; unit?: string };
    const defaultWhen = defaultWhenOf(field);
    return {
      key,
      default: field.parse(undefined),
      ...(defaultWhen ? { defaultWhen } : {}),
      help: meta.description ?? '',
      unit: meta.unit ?? '',
      schema: field.unwrap() as z.ZodType,
    };
  });
}

/** The default config of an experiment: what `labs run` uses with no `--set`. */
export function defaultConfig<S extends OptionsSchema>(experiment: Experiment<S>): z.output<S> {
  return configOf(experiment, {});
}

/**
 * The validated config of `experiment` from a partial `input`: missing options get their defaults,
 * every value is checked by its schema. The one validation of options, for the CLI and the library.
 * Errors: UNKNOWN_OPTION for a key the experiment does not have (the message lists the known keys);
 * BAD_OPTION_VALUE `<experiment>: option <key>=<value>: <reason>` for a value outside its range
 * (`typed` holds the values' text as typed on the command line, shown instead of their JSON).
 */
export function configOf<S extends OptionsSchema>(
  experiment: Experiment<S>,
  input: Partial<z.input<S>> | Record<string, unknown>,
  typed: Readonly<Record<string, string>> = {},
): z.output<S> {
  const parsed = experiment.options.safeParse(input);
  if (parsed.success) {
    const config = withConditionalDefaults(experiment.options, input, parsed.data);
    const check = experiment.check;
    if (check) asOptionError(() => check(config));
    return config;
  }
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  if (issue.code === 'unrecognized_keys') {
    const known = Object.keys(experiment.options.shape).sort().join(', ');
    const keys = issue.keys.map((k) => `'${k}'`).join(', ');
    throw new LabError('UNKNOWN_OPTION', `${experiment.name}: unknown option ${keys}; known: ${known}`, {
      details: { field: issue.keys[0] ?? '?', key: issue.keys[0] ?? '?' },
    });
  }
  const top = String(issue.path[0] ?? '?');
  const value = (input as Record<string, unknown>)[top];
  // The value as the user typed it (`--set lr=1e309`); JSON.stringify would show Infinity as null.
  const shown = Object.hasOwn(typed, top) ? typed[top] : JSON.stringify(value);
  const shape = experiment.options.shape as OptionShape;
  const accepted = Object.hasOwn(shape, top) ? describeAccepted(shape[top]?.unwrap() as z.ZodType) : '';
  const reasons = parsed.error.issues
    .filter((i) => String(i.path[0]) === top)
    .map((i) => issueReason(i, top, value, accepted, shown));
  const accepts = accepted === '' ? '' : ` (${top} accepts ${accepted})`;
  throw new LabError(
    'BAD_OPTION_VALUE',
    `${experiment.name}: option ${top}=${shown}: ${[...new Set(reasons)].join('; ')}${accepts}`,
    { details: { field: top, key: top, ...(issue.path.length > 1 ? { path: issue.path.map(String) } : {}) } },
  );
}

/**
 * `config` with each option that declares a {@link DefaultWhen} and was not given in `input` set to
 * that default where its condition holds (the condition reads the parsed config, so it sees a
 * default as well as a value that was set).
 */
function withConditionalDefaults<T>(schema: OptionsSchema, input: object, config: T): T {
  let out = config as Record<string, unknown>;
  for (const [key, field] of Object.entries(schema.shape as OptionShape)) {
    const d = defaultWhenOf(field);
    if (d === undefined) continue;
    if ((input as Record<string, unknown>)[key] !== undefined) continue;
    if (out[d.when.option] !== d.when.equals) continue;
    if (out === config) out = { ...out };
    out[key] = d.value;
  }
  return out as T;
}

/** What a value is, for a message: `the text 'abc'`, `NaN, which is not a finite number`, `an array`. */
function describeValue(v: unknown): string {
  if (typeof v === 'string') {
    if (v.trim() === '') return 'nothing';
    return /^[+-]?(nan|inf|infinity)$/i.test(v.trim())
      ? `${v}, which is not a finite number`
      : `the text '${v}'`;
  }
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : `${v}, which is not a finite number`;
  if (Array.isArray(v)) return 'a list';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}

/**
 * One zod issue in words that name the element and say what was given: `expected a number, got the
 * text 'abc'` (zod: "expected number, received string"); inside a list, `clip_ratios[0] = -1: too
 * small: ...` instead of a dotted key `clip_ratios.0` that reads as an option of its own.
 */
function issueReason(
  i: z.core.$ZodIssue,
  top: string,
  value: unknown,
  accepted: string,
  typed: string | undefined,
): string {
  const inner = i.path.slice(1);
  let at: unknown = value;
  for (const k of inner)
    at = at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[k] : undefined;
  const where =
    inner.length === 0 ? '' : `${top}${inner.map((k) => `[${String(k)}]`).join('')} = ${describeValue(at)}: `;
  if (i.code === 'invalid_type') {
    const expected = String(i.expected);
    const a = /^[aeiou]/.test(expected) ? 'an' : 'a';
    if (inner.length > 0) return `${where}expected ${a} ${expected}`;
    // `1e309` parses to Infinity: show what was typed.
    const got =
      typeof at === 'number' && !Number.isFinite(at)
        ? `${typed ?? String(at)}, which is not a finite number`
        : describeValue(at);
    return `expected ${a} ${expected}, got ${got}`;
  }
  // The accepted range or choices follow the message: say only what is wrong with the value.
  if (inner.length === 0 && accepted !== '') {
    if (i.code === 'too_small' || i.code === 'too_big') return 'out of range';
    if (i.code === 'invalid_value') return 'not one of the choices';
  }
  const message = i.message.replace(/^Invalid input: /, '');
  return `${where}${message.charAt(0).toLowerCase()}${message.slice(1)}`;
}

/** Runs `experiment` on `input` (a partial config; defaults fill the rest) after {@link configOf}. */
export function runExperiment<S extends OptionsSchema>(
  experiment: Experiment<S>,
  input: Partial<z.input<S>> | Record<string, unknown>,
  ctx: RunContext,
): RunRecord | Promise<RunRecord> {
  return experiment.run(configOf(experiment, input), ctx);
}

/**
 * Runs a check of an experiment's options (e.g. an environment's range check) and reports its
 * failure as BAD_OPTION_VALUE (a usage error: the command line asked for it), keeping the message,
 * details and cause.
 */
export function asOptionError<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (!(e instanceof LabError) || e.code === 'BAD_OPTION_VALUE') throw e;
    throw new LabError('BAD_OPTION_VALUE', e.message, {
      cause: e,
      ...(e.details ? { details: e.details } : {}),
    });
  }
}

/**
 * Parses `key=value`; the value is read as JSON when it is valid JSON (numbers, booleans, arrays),
 * else as a string. The third element is the value's text as typed, for messages.
 */
export function parseSetPair(pair: string): [string, unknown, string] {
  const eq = pair.indexOf('=');
  if (eq <= 0) {
    throw new LabError('BAD_CLI', `--set expects key=value, got '${pair}'`, {
      details: { field: '--set', value: pair },
    });
  }
  const key = pair.slice(0, eq).trim();
  const raw = pair.slice(eq + 1).trim();
  let value: unknown = raw;
  if (raw !== '') {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  return [key, value, raw];
}

/**
 * The config of `experiment` from `--set key=value` pairs (later pairs win), through {@link configOf}.
 * A value for a text or enum option is kept as text even when it looks like JSON (`--set tag=1`).
 */
export function resolveConfig<S extends OptionsSchema>(
  experiment: Experiment<S>,
  sets: readonly string[],
): z.output<S> {
  const input: Record<string, unknown> = {};
  const typed: Record<string, string> = {};
  const shape = experiment.options.shape as OptionShape;
  for (const pair of sets) {
    const [key, value, text] = parseSetPair(pair);
    typed[key] = text;
    const field = Object.hasOwn(shape, key) ? shape[key] : undefined;
    const inner = field?.unwrap();
    const textual = inner instanceof z.ZodEnum || inner instanceof z.ZodString;
    input[key] = textual && typeof value !== 'string' ? String(value) : value;
  }
  return configOf(experiment, input, typed);
}
