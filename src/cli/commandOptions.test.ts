import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { LabError } from '../core/errors.js';
import {
  addOptions,
  choiceOption,
  commandWords,
  familyOption,
  flagOption,
  listOption,
  numberListOption,
  numberOption,
  readOptions,
  required,
  synopsisLines,
  synopsisWords,
  textOption,
} from './commandOptions.js';

const TABLE = {
  name: required(textOption('--name', 'name', 'a name', { short: '-n' })),
  seed: numberOption('--seed', 'n', 'a seed', { default: 7, integer: true, min: 0, max: 9, group: 's' }),
  seeds: textOption('--seeds', 'A..B', 'seeds', { group: 's' }),
  tag: listOption('--tag', 'key=value', 'repeatable'),
  kind: choiceOption('--kind', 'kind', ['a', 'b', 'c'], 'a', 'which kind', { selectsPreset: true }),
  onlyB: flagOption('--only-b', 'b only', {
    presets: ['b'],
    refusal: (p) => `applies to --kind b, not '${p}'`,
  }),
  tol: numberOption('--tol', 'x', 'a tolerance', { min: 0, presets: ['a', 'b'] }),
  tolCount: textOption('--tol-count', 'n', 'with --tol', { within: '--tol' }),
  weights: numberListOption('--weights', 'W,...', 'weights', 'comma-separated finite numbers'),
  progress: flagOption('--no-progress', 'no bar'),
  columns: familyOption('--col-', ['step', 'group_size'], 'source', (n) => `read '${n}'`),
} as const;

/** Parses `argv` against TABLE with a real commander command, as parse.ts does. */
function parse(argv: string[]) {
  const command = new Command('t').exitOverride();
  addOptions(command, TABLE);
  command.parse(argv, { from: 'user' });
  const raw = command.opts();
  return readOptions(TABLE, raw, (k) => command.getOptionValueSource(k) === 'cli', String(raw.kind));
}

function usageError(argv: string[]): LabError {
  try {
    parse(argv);
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error(`expected ${argv.join(' ')} to be refused`);
}

describe('command option tables', () => {
  it('read every option typed, with defaults and the family of --col-<name> flags', () => {
    expect(
      parse(['-n', 'x', '--tag', 'a=1', '--tag', 'b=2', '--col-group-size', 'g', '--weights', '1,0.5']),
    ).toEqual({
      name: 'x',
      seed: 7,
      seeds: null,
      tag: ['a=1', 'b=2'],
      kind: 'a',
      onlyB: false,
      tol: null,
      tolCount: null,
      weights: [1, 0.5],
      progress: true,
      columns: { group_size: 'g' },
    });
    expect(parse(['-n', 'x', '--no-progress', '--seed', '9', '--kind', 'b', '--only-b'])).toMatchObject({
      seed: 9,
      kind: 'b',
      onlyB: true,
      progress: false,
    });
  });

  it('refuse a value out of range with BAD_CLI naming the flag and what it accepts', () => {
    for (const [argv, message] of [
      [['--seed', '10'], "--seed expects an integer in [0, 9], got '10'"],
      // digits only: 0x5 and 5e0 are not silently read as 5
      [['--seed', '0x5'], "--seed expects an integer in [0, 9], got '0x5'"],
      [['--seed', '5e0'], "--seed expects an integer in [0, 9], got '5e0'"],
      [['--tol', '-1'], "--tol expects a finite number >= 0, got '-1'"],
      [['--tol', 'inf'], "--tol expects a finite number >= 0, got 'inf'"],
      [['--tol', ' '], "--tol expects a finite number >= 0, got ' '"],
      [['--weights', '1,,2'], "--weights expects comma-separated finite numbers, got '1,,2'"],
    ] as const) {
      const e = usageError(['-n', 'x', ...argv]);
      expect([e.code, e.message, e.details?.field]).toEqual(['BAD_CLI', message, argv[0]]);
    }
  });

  it('refuse an option with a preset it does not apply to, only when typed', () => {
    const e = usageError(['-n', 'x', '--only-b']);
    expect(e.message).toBe("--only-b applies to --kind b, not 'a'");
    expect(usageError(['-n', 'x', '--kind', 'c', '--tol', '1']).message).toBe(
      "--tol does not apply to --preset 'c'",
    );
    expect(parse(['-n', 'x', '--kind', 'b', '--tol', '1'])).toMatchObject({ tol: 1 });
  });

  it('refuse two options of one group together, before reading their values', () => {
    const e = usageError(['-n', 'x', '--seed', 'bad', '--seeds', '1..3']);
    expect(e.message).toBe('--seed and --seeds exclude each other (got --seed bad --seeds 1..3)');
    // the default of --seed does not count as given
    expect(parse(['-n', 'x', '--seeds', '1..3'])).toMatchObject({ seeds: '1..3' });
  });

  it('refuse a table whose key is not commander name for the flag, or a flag declared twice', () => {
    expect(() => addOptions(new Command('t'), { wrong: flagOption('--json', 'x') })).toThrow(
      "table key 'wrong' is not commander's name for --json",
    );
    expect(() =>
      addOptions(new Command('t'), {
        colStep: flagOption('--col-step', 'x'),
        columns: familyOption('--col-', ['step'], 'source', (n) => n),
      }),
    ).toThrow('--col-step is declared twice');
  });

  it('draw the synopsis from the table: groups, nesting, required, repeatable, presets', () => {
    expect(synopsisWords(TABLE)).toEqual([
      '--name NAME',
      '[--seed N | --seeds A..B]',
      '[--tag key=value]...',
      '[--kind a|b|c]',
      '[--only-b]',
      '[--tol X [--tol-count N]]',
      '[--weights W,...]',
      '[--no-progress]',
      '[--col-<name> SOURCE]...',
    ]);
    // with presets b and c: --preset is needed (its default a is not one of them), --only-b shown
    expect(synopsisWords(TABLE, ['b', 'c']).slice(3, 6)).toEqual([
      '--kind b|c',
      '[--only-b]',
      '[--tol X [--tol-count N]]',
    ]);
    expect(synopsisWords(TABLE, ['c']).join(' ')).not.toContain('--tol');
    expect(synopsisLines('labs t', ['[--aaaa]', '[--bbbb]', '[--cccc]'], 20, 3)).toEqual([
      'labs t [--aaaa]',
      '   [--bbbb] [--cccc]',
    ]);
  });

  it('give the values of the rerun options back as command-line words, defaults left out', () => {
    const table = {
      seed: { ...TABLE.seed, rerun: true },
      tag: { ...TABLE.tag, rerun: true },
      onlyB: { ...TABLE.onlyB, rerun: true },
      weights: { ...TABLE.weights, rerun: true },
      columns: { ...TABLE.columns, rerun: true },
      name: TABLE.name,
    };
    const values = {
      seed: 7,
      tag: ['a=1', 'b=2'],
      onlyB: true,
      weights: [1, 0.5],
      columns: { group_size: 'g' },
      name: 'x',
    };
    expect(commandWords(table, values)).toEqual([
      '--tag',
      'a=1',
      '--tag',
      'b=2',
      '--only-b',
      '--weights',
      '1,0.5',
      '--col-group-size',
      'g',
    ]);
    expect(commandWords(table, { ...values, seed: 3, tag: [], onlyB: false })).toEqual([
      '--seed',
      '3',
      '--weights',
      '1,0.5',
      '--col-group-size',
      'g',
    ]);
  });
});
