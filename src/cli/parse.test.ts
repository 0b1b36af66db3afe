import { describe, expect, it } from 'vitest';
import { LabError } from '../core/errors.js';
import { parseCli, parseSeeds } from './parse.js';

function cliError(argv: string[]): LabError {
  try {
    parseCli(argv);
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error(`expected parseCli(${argv.join(' ')}) to throw`);
}

describe('parseCli', () => {
  it('parses a single-seed run with --set pairs', () => {
    const p = parseCli([
      'run',
      '--experiment',
      'agent',
      '--seed',
      '7',
      '--set',
      'lr=0.5',
      '--set',
      'std=unbiased',
      '--json',
    ]);
    expect(p).toMatchObject({
      command: 'run',
      experiment: 'agent',
      seeds: [7],
      multi: false,
      sets: ['lr=0.5', 'std=unbiased'],
      json: true,
    });
  });

  it('parses --sweep key=v1,v2 and refuses a malformed one as a usage error', () => {
    expect(parseCli(['run', '-e', 'truncation', '--sweep', 'budget=22,25', '--seeds', '1..2'])).toMatchObject(
      {
        sweep: { key: 'budget', values: ['22', '25'] },
        seeds: [1, 2],
      },
    );
    expect(parseCli(['run', '-e', 'agent'])).toMatchObject({ sweep: null });
    // A second --sweep used to replace the first silently: a grid is not supported, so it is refused.
    expect(
      cliError(['run', '-e', 'agent', '--sweep', 'lr=0.1,0.2', '--sweep', 'group_size=2,4']),
    ).toMatchObject({
      code: 'BAD_CLI',
      message: expect.stringMatching(
        /^--sweep is given 2 times \(lr=0\.1,0\.2, group_size=2,4\): one sweep per run, not a grid/,
      ),
    });
    expect(cliError(['run', '-e', 'agent', '--sweep', 'lr=1,1.0'])).toMatchObject({
      code: 'BAD_CLI',
      message: expect.stringContaining('values 1 and 1.0 are the same number'),
    });
    expect(cliError(['run', '-e', 'truncation', '--sweep', 'budget=22'])).toMatchObject({ code: 'BAD_CLI' });
  });

  it('parses labs compare A B with repeatable --metric', () => {
    expect(
      parseCli(['compare', 'a.json', 'b.json', '--metric', 'verify_rate.drop', '--metric', 'x', '--json']),
    ).toEqual({
      command: 'compare',
      a: 'a.json',
      b: 'b.json',
      metrics: ['verify_rate.drop', 'x'],
      pairs: [],
      json: true,
      html: null,
      debug: false,
    });
    expect(cliError(['compare', 'a.json'])).toMatchObject({ code: 'BAD_CLI' });
  });

  it('parses --metric-a/--metric-b as pairs by position; an unpaired flag or a mix with --metric is refused', () => {
    const args = ['compare', 'm.json', 'g.json', '--metric-a', 'eval_success.correct'];
    expect(parseCli([...args, '--metric-b', 'eval_success.token-mean'])).toMatchObject({
      metrics: [],
      pairs: [['eval_success.correct', 'eval_success.token-mean']],
    });
    expect(cliError(args)).toMatchObject({
      code: 'BAD_CLI',
      message: expect.stringContaining(
        '--metric-b: --metric-a and --metric-b come in pairs (got 1 --metric-a and 0',
      ),
    });
    expect(cliError([...args, '--metric-b', 'k', '--metric', 'x'])).toMatchObject({
      code: 'BAD_CLI',
      message: expect.stringContaining('--metric: not together with --metric-a/--metric-b'),
    });
  });

  it('defaults the seed to 7 and parses --seeds ranges as multi-seed', () => {
    expect(parseCli(['run', '-e', 'agent'])).toMatchObject({ seeds: [7], multi: false });
    expect(parseCli(['run', '-e', 'agent', '--seeds', '3..6'])).toMatchObject({
      seeds: [3, 4, 5, 6],
      multi: true,
    });
  });

  it('--jobs without --seeds is refused (it was accepted and ignored)', () => {
    for (const args of [
      ['--jobs', '4'],
      ['--seed', '3', '--jobs', '2'],
      ['--sweep', 'lr=0.1,0.2', '--jobs', '2'],
    ]) {
      expect(cliError(['run', '-e', 'agent', ...args])).toMatchObject({
        code: 'BAD_CLI',
        message: expect.stringMatching(/^--jobs \d applies to --seeds/),
      });
    }
    expect(
      parseCli(['run', '-e', 'agent', '--sweep', 'lr=0.1,0.2', '--seeds', '1..2', '--jobs', '2']),
    ).toMatchObject({
      jobs: 2,
    });
  });

  it('--jobs: the number of cores unless given; says whether it was given', () => {
    const byDefault = parseCli(['run', '-e', 'agent', '--seeds', '1..4']);
    expect(byDefault).toMatchObject({ jobsGiven: false });
    expect((byDefault as { jobs: number }).jobs).toBeGreaterThanOrEqual(1);
    expect(parseCli(['run', '-e', 'agent', '--seeds', '1..4', '--jobs', '3'])).toMatchObject({
      jobs: 3,
      jobsGiven: true,
    });
  });

  it('rejects unknown commands and options with BAD_CLI and names them', () => {
    const e1 = cliError(['frobnicate']);
    expect(e1.code).toBe('BAD_CLI');
    expect(e1.message).toContain('frobnicate');
    const e2 = cliError(['run', '-e', 'agent', '--bogus']);
    expect(e2.code).toBe('BAD_CLI');
    expect(e2.message).toContain('--bogus');
  });

  it('rejects a non-integer or negative seed, naming --seed', () => {
    for (const bad of ['x', '-1', '1.5', '', ' ', '0x10', '1e3']) {
      const e = cliError(['run', '-e', 'agent', '--seed', bad]);
      expect(e.code).toBe('BAD_CLI');
      expect(e.message).toContain('--seed');
    }
  });

  it('rejects --seed together with --seeds instead of silently ignoring --seed', () => {
    const e = cliError(['run', '-e', 'agent', '--seed', '3', '--seeds', '1..2']);
    expect(e.code).toBe('BAD_CLI');
    expect(e.message).toContain('--seed');
    expect(e.message).toContain('--seeds');
    // The default seed alone does not count as given.
    expect(parseCli(['run', '-e', 'agent', '--seeds', '1..2'])).toMatchObject({ seeds: [1, 2] });
  });

  it('run --help points --set at labs list for the keys and their ranges', () => {
    const h = parseCli(['run', '--help']);
    expect(h.command).toBe('help');
    if (h.command === 'help') expect(h.text.replace(/\s+/g, ' ')).toContain('`labs list` shows the keys');
  });

  it('run -e NAME --help names the experiment whose options main appends (from its declaration)', () => {
    expect(parseCli(['run', '-e', 'mask', '--help'])).toMatchObject({ command: 'help', experiment: 'mask' });
    expect(parseCli(['run', '--experiment=truncation', '--help'])).toMatchObject({
      experiment: 'truncation',
    });
    expect(parseCli(['run', '--help'])).not.toHaveProperty('experiment');
    expect(parseCli(['list', '--help'])).not.toHaveProperty('experiment');
  });

  it('requires --experiment for run', () => {
    expect(cliError(['run']).message).toContain('--experiment');
  });

  it('returns help and version without printing', () => {
    const h = parseCli(['--help']);
    expect(h.command).toBe('help');
    if (h.command === 'help') expect(h.text).toContain('conformance');
    expect(parseCli(['--version'])).toMatchObject({ command: 'version', text: '0.1.0' });
    expect(parseCli([]).command).toBe('help');
  });

  it('parses audit column remaps and presets', () => {
    const p = parseCli([
      'audit',
      'dumps/',
      '--preset',
      'trl',
      '--col-reward',
      'score',
      '--col-action-tokens',
      'n_act',
      '--skip-bad-rows',
    ]);
    expect(p).toMatchObject({
      command: 'audit',
      path: 'dumps/',
      preset: 'trl',
      skipBadRows: true,
      columns: { reward: 'score', action_tokens: 'n_act' },
    });
    expect(cliError(['audit', 'x', '--preset', 'nope']).code).toBe('BAD_CLI');
  });

  it('accepts exactly the three dump layouts as --preset, generic by default', () => {
    for (const preset of ['verl', 'trl', 'generic']) {
      expect(parseCli(['audit', 'x', '--preset', preset])).toMatchObject({ command: 'audit', preset });
    }
    expect(parseCli(['audit', 'x'])).toMatchObject({ command: 'audit', preset: 'generic' });
    expect(cliError(['audit', 'x', '--preset', 'Verl']).code).toBe('BAD_CLI');
  });

  it('has one --col-<name> flag per canonical audit column (kebab-case flag, snake_case key)', () => {
    const canonical = [
      'step',
      'group',
      'task',
      'reward',
      'response',
      'action_tokens',
      'env_tokens',
      'truncated',
      'mask',
      'advantage',
    ];
    const argv = ['audit', 'dumps/'];
    for (const col of canonical) argv.push(`--col-${col.replace(/_/g, '-')}`, `src_${col}`);
    const p = parseCli(argv);
    expect(p.command === 'audit' ? p.columns : null).toEqual(
      Object.fromEntries(canonical.map((c) => [c, `src_${c}`])),
    );
    expect(cliError(['audit', 'x', '--col-score', 'y']).code).toBe('BAD_CLI');
  });

  it('parses report with several records', () => {
    expect(parseCli(['report', 'a.json', 'b.json', '--html', 'o.html'])).toMatchObject({
      command: 'report',
      records: ['a.json', 'b.json'],
      html: 'o.html',
      png: null,
    });
    expect(cliError(['report', 'a.json']).message).toContain('--html');
  });
});

describe('audit: flags of one kind of preset refused on the other', () => {
  it('refuses --metrics, --length-anatomy and --watch with a token-level preset, and --what-if with a reward preset', () => {
    // before: --watch with --preset nemo-rl polled with the reward reader (a type error at best)
    for (const flag of [['--metrics', 'log.csv'], ['--length-anatomy'], ['--watch']]) {
      expect(() => parseCli(['audit', 'd', '--preset', 'nemo-rl', ...flag])).toThrow(
        new RegExp(`^${flag[0]} applies to the reward presets`),
      );
    }
    // prime-rl's token export has per-env entropy / mismatch_kl: --metrics compares them
    expect(() => parseCli(['audit', 'd', '--preset', 'prime-rl', '--metrics', 'm.jsonl'])).not.toThrow();
    expect(() => parseCli(['audit', 'd', '--preset', 'generic', '--what-if', 'rollout_is=token'])).toThrow(
      /--what-if applies to token-level presets/,
    );
  });
});

describe('parseSeeds', () => {
  it('accepts ranges and lists, rejects empty or malformed ranges', () => {
    expect(parseSeeds('1..3')).toEqual([1, 2, 3]);
    expect(parseSeeds('5,2,9')).toEqual([5, 2, 9]);
    expect(() => parseSeeds('3..1')).toThrow(/empty/);
    expect(() => parseSeeds('a..b')).toThrow(LabError);
  });

  it('rejects a seed listed twice (the same run would be counted twice in the CI)', () => {
    expect(() => parseSeeds('1,1,1')).toThrow(/seed 1 is listed twice/);
    expect(() => parseSeeds('4,2,4')).toThrow(/seed 4 is listed twice/);
  });
});

describe('run --html', () => {
  it('takes an explicit file, or means report.html next to the record when given alone', () => {
    expect(parseCli(['run', '-e', 'agent', '--html', '/tmp/a.html'])).toMatchObject({ html: '/tmp/a.html' });
    expect(parseCli(['run', '-e', 'agent', '--html'])).toMatchObject({ html: '' });
    expect(parseCli(['run', '-e', 'agent'])).toMatchObject({ html: null });
  });
});
