// Per-seed records, resume, --shard and `labs merge` through the built CLI (docs/scale-out.md): an
// interrupted `labs run --seeds` rerun finishes only the rest; shards merged give the one-process
// record (timing aside), comparisons and Holm included; bad shards and bad records are one-line
// usage errors naming the file and the field.
import { spawn, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dist = join('test-output', 'shards-dist');
const cli = join(dist, 'cli', 'main.js');
const out = mkdtempSync(join(tmpdir(), 'labs-shards-'));

/** The mask experiment shrunk to tens of ms a seed (it declares paired comparisons). */
const SMALL = ['--set', 'tasks_per_update=4', '--set', 'group_size=4', '--set', 'eval_tasks=20'];
const mask = (updates: number) => ['run', '-e', 'mask', ...SMALL, '--set', `updates=${updates}`];

/** Scheduler variables removed, so `--shard auto` sees only what a test sets. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) {
    if (/^(SLURM_|JOB_COMPLETION_INDEX|PARALLEL_|LABS_SHARD)/.test(k)) delete env[k];
  }
  return { ...env, ...extra };
}

function labs(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(
    process.execPath,
    [cli, ...args, '--no-progress'].filter((a) => a !== ''),
    {
      encoding: 'utf8',
      env: cleanEnv(env),
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `labs merge` takes no --no-progress. */
function merge(args: string[]) {
  const r = spawnSync(process.execPath, [cli, 'merge', ...args], { encoding: 'utf8', env: cleanEnv() });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

type Timed = { timing?: unknown };
/** A multi-seed or sweep record without its timing fields (the only ones two runs differ in). */
function withoutTiming(file: string): string {
  const r = JSON.parse(readFileSync(file, 'utf8')) as Timed & {
    runs?: Timed[];
    points?: { record: Timed & { runs: Timed[] } }[];
  };
  const strip = (x: Timed & { runs?: Timed[] }) => {
    delete x.timing;
    for (const run of x.runs ?? []) delete run.timing;
  };
  strip(r);
  for (const pt of r.points ?? []) strip(pt.record);
  return JSON.stringify(r);
}

beforeAll(() => {
  const r = spawnSync(process.execPath, ['scripts/build.mjs', dist, '--cli-only'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
}, 120_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('labs run --seeds --out DIR: per-seed records and resume', () => {
  it('an interrupted run, rerun, finishes only the rest and equals an uninterrupted run', async () => {
    const whole = join(out, 'whole');
    const args = [...mask(60), '--seeds', '1..20', '--jobs', '1'];
    expect(labs([...args, '--out', whole]).code).toBe(0);

    const dir = join(out, 'interrupted');
    const seedsDir = join(dir, 'seeds');
    const child = spawn(process.execPath, [cli, ...args, '--out', dir, '--no-progress'], {
      stdio: 'ignore',
      env: cleanEnv(),
    });
    const finished = () =>
      existsSync(seedsDir) ? readdirSync(seedsDir).filter((f) => /^\d+\.json$/.test(f)) : [];
    for (let t = 0; t < 3000 && finished().length < 3; t++) await new Promise((r) => setTimeout(r, 10));
    child.kill('SIGINT');
    await new Promise((r) => child.on('close', r));
    const kept = finished();
    expect(kept.length).toBeGreaterThanOrEqual(3);
    expect(kept.length).toBeLessThan(20);
    expect(existsSync(join(dir, 'record.json'))).toBe(false);
    const mtimes = kept.map((f) => statSync(join(seedsDir, f)).mtimeMs);

    // the same command again (here with two threads): only the missing seeds run
    const again = labs([...args.slice(0, -2), '--jobs', '2', '--out', dir]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`${kept.length} of 20 seed runs already in ${seedsDir}`);
    expect(again.stderr).toContain(`running ${20 - kept.length}`);
    expect(kept.map((f) => statSync(join(seedsDir, f)).mtimeMs)).toEqual(mtimes);
    expect(finished()).toHaveLength(20);
    expect(withoutTiming(join(dir, 'record.json'))).toBe(withoutTiming(join(whole, 'record.json')));

    // a third time: nothing left to run, the same record
    const third = labs([...args, '--out', dir]);
    expect(third.stderr).toContain('20 of 20 seed runs already');
    expect(withoutTiming(join(dir, 'record.json'))).toBe(withoutTiming(join(whole, 'record.json')));
  }, 180_000);

  it('refuses to resume from records of another config, naming the option and the file', () => {
    const dir = join(out, 'other-config');
    expect(labs([...mask(5), '--seeds', '1..2', '--out', dir]).code).toBe(0);
    const r = labs([...mask(5), '--set', 'lr=0.1', '--seeds', '1..3', '--out', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      /\[BAD_SEED_RECORD\]: .*plan\.json: option lr differs: run there with lr=0\.05, this command's is lr=0\.1/,
    );
    // a seed file of another config dropped into the directory is named too
    const other = join(out, 'other-config-2');
    expect(labs([...mask(5), '--set', 'lr=0.1', '--seeds', '3', '--out', other]).code).toBe(0);
    copyFileSync(join(other, 'seeds', '3.json'), join(dir, 'seeds', '3.json'));
    const s = labs([...mask(5), '--seeds', '1..3', '--out', dir]);
    expect(s.code).toBe(2);
    expect(s.stderr).toMatch(/\[BAD_SEED_RECORD\]: .*seeds\/3\.json: option lr differs/);
  }, 60_000);

  it('a truncated per-seed file is a usage error naming it (never silently rerun or dropped)', () => {
    const dir = join(out, 'truncated');
    expect(labs([...mask(5), '--seeds', '1..3', '--out', dir]).code).toBe(0);
    const file = join(dir, 'seeds', '2.json');
    writeFileSync(file, readFileSync(file, 'utf8').slice(0, 100));
    for (const r of [
      labs([...mask(5), '--seeds', '1..3', '--out', dir]),
      merge([dir, '--out', join(out, 'm')]),
    ]) {
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`[BAD_SEED_RECORD]: ${file}: truncated or not JSON`);
    }
  }, 60_000);
});

describe('--shard K/N and labs merge', () => {
  it('shards 1/3, 2/3, 3/3 merged equal the one-process record, comparisons and Holm included', () => {
    const args = [...mask(20), '--seeds', '1..7'];
    const whole = join(out, 'shard-whole');
    expect(labs([...args, '--out', whole]).code).toBe(0);
    const dirs = [1, 2, 3].map((k) => join(out, `shard-${k}`));
    const ran: number[] = [];
    for (const [i, d] of dirs.entries()) {
      const r = labs([...args, '--out', d, '--shard', `${i + 1}/3`, '--json']);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ shard: `${i + 1}/3`, ran: i === 0 ? 3 : 2, skipped: 0, out: d });
      expect(existsSync(join(d, 'record.json'))).toBe(false);
      ran.push(readdirSync(join(d, 'seeds')).length);
    }
    // round robin: seeds 1,4,7 / 2,5 / 3,6
    expect(ran).toEqual([3, 2, 2]);
    expect(readdirSync(join(dirs[0] as string, 'seeds')).sort()).toEqual(['1.json', '4.json', '7.json']);
    // a missing shard is named, never dropped
    const partial = merge([dirs[0] as string, dirs[1] as string, '--out', join(out, 'merged-partial')]);
    expect(partial.code).toBe(2);
    expect(partial.stderr).toMatch(
      /\[BAD_SEED_RECORD\]: 2 of 7 seed runs have no record in .*: seed 3, seed 6;/,
    );
    // the same seeds twice (overlapping shards) are taken once
    const merged = join(out, 'merged');
    const m = merge([...dirs, dirs[0] as string, '--out', merged]);
    expect(m.code).toBe(0);
    const record = JSON.parse(readFileSync(join(merged, 'record.json'), 'utf8'));
    expect(record.seeds).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(record.comparisons.length).toBeGreaterThan(0);
    expect(record.comparisons[0].p_holm).toBeTypeOf('number');
    expect(withoutTiming(join(merged, 'record.json'))).toBe(withoutTiming(join(whole, 'record.json')));
  }, 120_000);

  it('a sweep sharded into one shared directory (--shard auto from Slurm variables) merges to the one-process record', () => {
    const args = [...mask(10), '--seeds', '1..3', '--sweep', 'lr=0.05,0.1'];
    const whole = join(out, 'sweep-whole');
    expect(labs([...args, '--out', whole]).code).toBe(0);
    const shared = join(out, 'sweep-shared');
    for (const id of ['4', '5']) {
      const slurm = {
        SLURM_ARRAY_TASK_ID: id,
        SLURM_ARRAY_TASK_MIN: '4',
        SLURM_ARRAY_TASK_MAX: '5',
        SLURM_ARRAY_TASK_COUNT: '2',
      };
      const r = labs([...args, '--out', shared, '--shard', 'auto'], slurm);
      expect(r.stdout).toContain(`shard ${Number(id) - 3}/2: ran 3 seed runs`);
    }
    expect(readdirSync(join(shared, 'seeds')).sort()).toEqual(['lr=0.05', 'lr=0.1']);
    expect(merge([shared, '--out', shared]).code).toBe(0);
    expect(withoutTiming(join(shared, 'record.json'))).toBe(withoutTiming(join(whole, 'record.json')));
  }, 120_000);

  it('refuses merging shards of different configs, and two different copies of a seed', () => {
    const a = join(out, 'cfg-a');
    const b = join(out, 'cfg-b');
    expect(labs([...mask(5), '--seeds', '1..2', '--out', a, '--shard', '1/2']).code).toBe(0);
    expect(
      labs([...mask(5), '--set', 'eval_tasks=30', '--seeds', '1..2', '--out', b, '--shard', '2/2']).code,
    ).toBe(0);
    const r = merge([a, b, '--out', join(out, 'cfg-m')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`[BAD_SEED_RECORD]: ${join(b, 'plan.json')}: option eval_tasks differs`);
    // overlapping shards with different results: the same seed, a different number
    const c = join(out, 'cfg-c');
    expect(labs([...mask(5), '--seeds', '1..2', '--out', c]).code).toBe(0);
    const file = join(a, 'seeds', '1.json');
    const edited = JSON.parse(readFileSync(file, 'utf8'));
    edited.metrics['eval_success.correct'] = 0.123;
    mkdirSync(join(out, 'cfg-d', 'seeds'), { recursive: true });
    copyFileSync(join(a, 'plan.json'), join(out, 'cfg-d', 'plan.json'));
    writeFileSync(join(out, 'cfg-d', 'seeds', '1.json'), JSON.stringify(edited));
    const d = merge([c, join(out, 'cfg-d'), '--out', join(out, 'cfg-m')]);
    expect(d.code).toBe(2);
    expect(d.stderr.trim().split('\n')).toHaveLength(1);
    expect(d.stderr).toMatch(
      /\[BAD_SEED_RECORD\]: seed 1 has two different records: .*cfg-c\/seeds\/1\.json and .*cfg-d\/seeds\/1\.json differ at metrics\.eval_success\.correct/,
    );
    expect(existsSync(join(out, 'cfg-m'))).toBe(false);
  }, 60_000);

  it.each([
    [['--shard', '3/2', '--out', 'x'], {}, /--shard 3\/2: K must be in 1\.\.2/],
    [['--shard', '0/0', '--out', 'x'], {}, /--shard 0\/0: the number of shards N must be at least 1/],
    [['--shard', 'auto', '--out', 'x'], {}, /--shard auto: no scheduler variables/],
    [
      ['--shard', 'auto', '--out', 'x'],
      { JOB_COMPLETION_INDEX: '1' },
      /JOB_COMPLETION_INDEX is set but not the number of shards/,
    ],
    [['--shard', '1/2'], {}, /--shard needs --out DIR/],
    [['--shard', '1/2', '--out', 'x', '--html'], {}, /--html with --shard/],
    [['--shard', '1/2', '--out', 'x', '--shard-count', '2'], {}, /--shard-count goes with --shard auto/],
  ])('usage error for %j', (extra, env, message) => {
    const r = labs([...mask(5), '--seeds', '1..4', ...(extra as string[])], env as Record<string, string>);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message as RegExp);
    expect(existsSync('x')).toBe(false);
  });
});
