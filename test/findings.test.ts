// `labs findings` on a tiny manifest (test/fixtures/findings/tiny.json): sharded over two processes,
// then `npm run findings -- MANIFEST` (the same command without --shard) finds every seed on disk,
// builds each run's record (the one `labs run --seeds`/`--sweep` writes, timing aside) and the
// manifest's paired comparison between runs. Bad manifests are one-line usage errors naming the
// file and the field.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dist = join('test-output', 'findings-dist');
const out = mkdtempSync(join(tmpdir(), 'labs-findings-'));
const MANIFEST = 'test/fixtures/findings/tiny.json';
const MANIFEST2 = 'test/fixtures/findings/tiny2.json';
const SMALL = [
  '--set',
  'updates=10',
  '--set',
  'tasks_per_update=4',
  '--set',
  'group_size=4',
  '--set',
  'eval_tasks=20',
];

function labs(...args: string[]) {
  const r = spawnSync(process.execPath, [join(dist, 'cli', 'main.js'), ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Timed = { timing?: unknown; runs?: Timed[]; points?: { record: Timed }[] };
function withoutTiming(file: string): string {
  const strip = (r: Timed) => {
    delete r.timing;
    for (const run of r.runs ?? []) delete run.timing;
    for (const pt of r.points ?? []) strip(pt.record);
    return r;
  };
  return JSON.stringify(strip(JSON.parse(readFileSync(file, 'utf8'))));
}

beforeAll(() => {
  const r = spawnSync(process.execPath, ['scripts/build.mjs', dist, '--cli-only'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
}, 120_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('labs findings', () => {
  it('two shards, then npm run findings: every run as labs run writes it, and the comparison', () => {
    const dir = join(out, 'tiny');
    const shards = [1, 2].map((k) =>
      labs('findings', MANIFEST, '--out', dir, '--shard', `${k}/2`, '--json', '--no-progress'),
    );
    // 3 + 3 + 2x3 jobs as one list, round robin over the two shards
    expect(shards.map((s) => JSON.parse(s.stdout))).toEqual([
      { shard: '1/2', ran: 6, skipped: 0, out: dir },
      { shard: '2/2', ran: 6, skipped: 0, out: dir },
    ]);
    const r = spawnSync(
      'npm',
      ['run', '--silent', 'findings', '--', MANIFEST, '--out', dir, '--no-progress'],
      {
        encoding: 'utf8',
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('(3 seeds; ran 0 seed runs, 12 already on disk)');
    expect(r.stderr).toContain('6 of 6 seed runs already in');

    const runOf = (args: string[], name: string) => {
      const whole = join(out, name);
      expect(
        labs('run', '-e', 'mask', '--seeds', '1..3', ...SMALL, ...args, '--out', whole, '--no-progress').code,
      ).toBe(0);
      return withoutTiming(join(whole, 'record.json'));
    };
    expect(withoutTiming(join(dir, 'token-mean', 'record.json'))).toBe(runOf([], 'w1'));
    expect(withoutTiming(join(dir, 'seq-mean-token-sum', 'record.json'))).toBe(
      runOf(['--set', 'loss_agg_mode=seq-mean-token-sum'], 'w2'),
    );
    expect(withoutTiming(join(dir, 'lr-sweep', 'record.json'))).toBe(runOf(['--sweep', 'lr=0.05,0.1'], 'w3'));

    const findings = JSON.parse(readFileSync(join(dir, 'findings.json'), 'utf8'));
    expect(findings.seeds).toEqual([1, 2, 3]);
    const [c] = findings.comparisons;
    expect(c.a.label).toBe('token-mean');
    expect(c.b.label).toBe('seq-mean-token-sum');
    expect(c.config_diff).toEqual({ loss_agg_mode: ['token-mean', 'seq-mean-token-sum'] });
    expect(c.comparisons.map((x: { metric: string }) => x.metric)).toEqual([
      'eval_mean_length.correct',
      'mean_loss_denominator.correct',
    ]);
    for (const x of c.comparisons) expect(x.p_holm).toBeGreaterThanOrEqual(x.p);
  }, 240_000);

  it('format 2: discovery then confirmation (sharded), claims with a status, the same results file on a rerun', () => {
    const dir = join(out, 'tiny2');
    const results = join(out, 'tiny2.results.json');
    const base = [MANIFEST2, '--out', dir, '--results', results, '--no-progress', '--jobs', '1'];
    const first = labs('findings', ...base, '--phase', 'discovery');
    expect(first.code, first.stderr).toBe(0);
    const pending = JSON.parse(readFileSync(results, 'utf8'));
    expect(pending.claims.map((c: { status: string }) => c.status)).toEqual(['pending', 'pending']);
    expect(pending.claims[1].discovery.n).toBe(3);
    // the confirmation seeds in two shards (one job list: 2 runs x 3 seeds), then the whole command
    const shards = [1, 2].map((k) =>
      labs('findings', ...base, '--phase', 'confirmation', '--shard', `${k}/2`, '--json'),
    );
    expect(shards.map((r) => JSON.parse(r.stdout).ran)).toEqual([3, 3]);
    const whole = labs('findings', ...base);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stdout).toContain('ran 0 seed runs, 12 already on disk');
    const r = JSON.parse(readFileSync(results, 'utf8'));
    expect(r).toMatchObject({
      format: 'labs-findings-results/1',
      _command: 'labs findings tiny2',
      discovery: { seeds: '1..3', n: 3 },
      confirmation: { seeds: '101..103', n: 3 },
    });
    expect(readdirSync(join(dir, 'confirmation', 'token-mean', 'seeds')).sort()).toEqual([
      '101.json',
      '102.json',
      '103.json',
    ]);
    const [mask, denominator] = r.claims;
    expect(denominator.b).toBe('seq-mean-token-sum:mean_loss_denominator.correct');
    expect(denominator.confirmation.n).toBe(3);
    expect(['confirmed', 'not confirmed', 'null on both']).toContain(denominator.status);
    // the difference is the per-seed metrics' difference, paired by seed
    const seedValue = (run: string, seed: number) =>
      JSON.parse(readFileSync(join(dir, 'confirmation', run, 'seeds', `${seed}.json`), 'utf8')).metrics[
        'mean_loss_denominator.correct'
      ];
    const mean =
      [101, 102, 103].reduce(
        (s, seed) => s + seedValue('seq-mean-token-sum', seed) - seedValue('token-mean', seed),
        0,
      ) / 3;
    expect(denominator.confirmation.mean).toBeCloseTo(mean, 10);
    expect(mask.without_collapsed.collapsed).toHaveProperty('confirmation');
    expect(whole.stdout).toContain('| claim (B − A) |');
    // a rerun finds everything on disk and writes the same bytes
    const before = readFileSync(results, 'utf8');
    expect(labs('findings', ...base).code).toBe(0);
    expect(readFileSync(results, 'utf8')).toBe(before);
    // a format-2 manifest declares its seeds and options
    const seeds = labs('findings', ...base, '--seeds', '1..2');
    expect(seeds.code).toBe(2);
    expect(seeds.stderr).toContain('--seeds: test/fixtures/findings/tiny2.json is a format-2 manifest');
  }, 240_000);

  it.each([
    [{ runs: [{ name: 'a', experiment: 'mask', nope: 1 }] }, /runs\[0\]: Unrecognized key/],
    [
      { runs: [{ name: 'a', experiment: 'mask' }], comparisons: [{ a: 'a', b: 'z' }] },
      /comparisons\[0\]\.b: no run is named 'z'/,
    ],
    [
      { runs: [{ name: 'a', experiment: 'mask', set: { no_such: 1 } }] },
      /runs\[0\] \(a\): .*unknown option 'no_such'/,
    ],
    [
      { seeds: '5..1', runs: [{ name: 'a', experiment: 'mask' }] },
      /: seeds: --seeds 5\.\.1: the range is empty/,
    ],
  ])('refuses a bad manifest %j naming the file and the field', (fields, message) => {
    const file = join(out, 'bad.json');
    writeFileSync(file, JSON.stringify({ format: 'labs-findings/1', title: 't', seeds: '1..2', ...fields }));
    const r = labs('findings', file, '--out', join(out, 'bad'));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(message);
  });
});
