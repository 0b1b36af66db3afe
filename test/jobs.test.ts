// `labs run --seeds ... --jobs N` (and `--sweep ... --jobs N`) through the built, bundled CLI (worker
// threads load the built dist/cli/seedWorker.mjs, so this builds a private copy of the CLI first): the
// record is the serial one, byte for byte except its timing fields, and a failure names the same seed
// as a serial run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeedPool } from '../src/cli/seedPool.js';
import { agent } from '../src/experiments/agent.js';
import { curvesToBand } from '../src/experiments/multiSeed.js';
import { defaultConfig } from '../src/experiments/options.js';
import { curveBands } from '../src/experiments/seedStatistics.js';
import type { Experiment, JsonValue } from '../src/experiments/types.js';

const dist = join('test-output', 'jobs-dist');
const out = mkdtempSync(join(tmpdir(), 'labs-jobs-'));

function labs(...args: string[]) {
  const r = spawnSync(process.execPath, [join(dist, 'cli', 'main.js'), ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The record without its timing fields (wall time differs from run to run). */
function withoutTiming(json: string): string {
  const record = JSON.parse(json) as { timing?: unknown; runs: { timing?: unknown }[] };
  delete record.timing;
  for (const run of record.runs) delete run.timing;
  return JSON.stringify(record);
}

beforeAll(() => {
  const r = spawnSync(process.execPath, ['scripts/build.mjs', dist, '--cli-only'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
}, 120_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('labs run --seeds --jobs', () => {
  it('writes the same multi-seed record with --jobs 1 and --jobs 2', () => {
    const run = (jobs: number) =>
      labs(
        ...['run', '-e', 'agent', '--seeds', '3..8', '--set', 'updates=20', '--set', 'eval_tasks=50'],
        ...['--jobs', String(jobs), '--json', '--out', join(out, `jobs${jobs}`)],
      );
    const serial = run(1);
    const parallel = run(2);
    expect(serial.code).toBe(0);
    expect(parallel.code).toBe(0);
    expect(JSON.parse(serial.stdout).runs).toHaveLength(6);
    expect(withoutTiming(parallel.stdout)).toBe(withoutTiming(serial.stdout));
    // The record files too, not only stdout.
    const file = (jobs: number) => readFileSync(join(out, `jobs${jobs}`, 'record.json'), 'utf8');
    expect(withoutTiming(file(2))).toBe(withoutTiming(file(1)));
  }, 120_000);

  it('writes the same sweep record with --jobs 1 and --jobs 2', () => {
    const run = (jobs: number) =>
      labs(
        ...['run', '-e', 'agent', '--seeds', '1..3', '--sweep', 'eval_tasks=30,50', '--set', 'updates=20'],
        ...['--jobs', String(jobs), '--json', '--out', join(out, `sweep${jobs}`)],
      );
    /** The sweep record without its timing fields (top level, per point, per run). */
    const withoutTimings = (json: string): string => {
      const record = JSON.parse(json) as { timing?: unknown; points: { record: { timing?: unknown } }[] };
      delete record.timing;
      const points = record.points.map((pt) => withoutTiming(JSON.stringify(pt.record)));
      return JSON.stringify({ ...record, points });
    };
    const serial = run(1);
    const parallel = run(2);
    expect(serial.code).toBe(0);
    expect(parallel.code).toBe(0);
    expect(
      JSON.parse(serial.stdout).points.map((pt: { record: { runs: unknown[] } }) => pt.record.runs.length),
    ).toEqual([3, 3]);
    expect(withoutTimings(parallel.stdout)).toBe(withoutTimings(serial.stdout));
    // The runs went to the pool: a point's wall time is then the sum of its runs' (they interleave).
    type Timed = { timing: { wall_ms: number } };
    for (const pt of JSON.parse(parallel.stdout).points as { record: Timed & { runs: Timed[] } }[]) {
      const sum = pt.record.runs.reduce((a, r) => a + r.timing.wall_ms, 0);
      expect(pt.record.timing.wall_ms).toBe(sum);
    }
    const file = (jobs: number) => readFileSync(join(out, `sweep${jobs}`, 'record.json'), 'utf8');
    expect(withoutTimings(file(2))).toBe(withoutTimings(file(1)));
  }, 120_000);

  it('a seed failing in a worker is reported as in a serial run (seed named, same exit code)', () => {
    const run = (jobs: number) =>
      labs(
        ...['run', '-e', 'agent', '--seeds', '1..4', '--set', 'group_size=1', '--set', 'singleton=error'],
        ...['--jobs', String(jobs), '--out', join(out, `fail${jobs}`)],
      );
    const serial = run(1);
    const parallel = run(2);
    expect(serial.stderr).toMatch(/^labs: error \[BAD_OPTION_VALUE\]: seed 1: group_size=1 /);
    expect(parallel.stderr).toBe(serial.stderr);
    expect(parallel.code).toBe(serial.code);
  }, 120_000);

  it('rejects --jobs 0 as a usage error naming the flag', () => {
    const r = labs('run', '-e', 'agent', '--seeds', '1..2', '--jobs', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\[BAD_CLI\]: --jobs expects an integer in \[1, 256\], got '0'/);
  });
});

describe('the seed pool (this thread and built workers)', () => {
  const workerUrl = () => pathToFileURL(resolve(dist, 'cli', 'seedWorker.mjs'));
  const config = { ...defaultConfig(agent), updates: 15, eval_tasks: 40 } as Record<string, JsonValue>;

  it('runs every task once, records as on this thread, progress rising to the total', async () => {
    const pool = startSeedPool(workerUrl(), 'agent', 2);
    try {
      const runner = pool.runner(agent as Experiment);
      expect(runner.jobs).toBe(3);
      const tasks = [4, 9, 1, 7, 2, 8, 3].map((seed) => ({ config, seed }));
      const progress: number[] = [];
      const outcomes = await runner.runAll(tasks, (done, total) => {
        expect(total).toBe(tasks.length);
        progress.push(done);
      });
      for (const [i, task] of tasks.entries()) {
        const here = await agent.run(config as never, { seed: task.seed });
        const o = outcomes[i];
        expect(o?.ok).toBe(true);
        if (o?.ok) expect({ ...o.record, timing: null }).toEqual({ ...here, timing: null });
      }
      expect(progress.at(-1)).toBe(tasks.length);
      for (let k = 1; k < progress.length; k++)
        expect(progress[k]).toBeGreaterThanOrEqual(progress[k - 1] as number);
      // the curve bands across those seeds, shared out: the ones computed here
      const items = curvesToBand(outcomes.map((o) => (o?.ok ? o.record : (null as never))));
      expect(items.length).toBeGreaterThan(3);
      const bands = await runner.bandAll?.(items);
      expect(bands).toEqual(items.map((it) => curveBands(it.series, it.key)));
      // the pool is kept: a second job (e.g. the next sweep value) runs on the same workers
      const again = await runner.runAll([
        { config, seed: 5 },
        { config, seed: 6 },
      ]);
      expect(again.map((o) => o?.ok && o.record.seed)).toEqual([5, 6]);
    } finally {
      await pool.close();
    }
  }, 120_000);

  it('a worker that cannot load its experiment leaves the seeds to this thread', async () => {
    const pool = startSeedPool(workerUrl(), 'no-such-experiment', 1);
    try {
      const outcomes = await pool
        .runner(agent as Experiment)
        .runAll([1, 2, 3].map((seed) => ({ config, seed })));
      expect(outcomes.map((o) => o?.ok && o.record.seed)).toEqual([1, 2, 3]);
    } finally {
      await pool.close();
    }
  }, 120_000);
});
