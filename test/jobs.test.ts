// `labs run --seeds ... --jobs N` (and `--sweep ... --jobs N`) through the built, bundled CLI (worker
// threads load the built dist/cli/seedWorker.mjs, so this builds a private copy of the CLI first): the
// record is the serial one, byte for byte except its timing fields, and a failure names the same seed
// as a serial run.
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSeedPool } from '../src/cli/runtime/seedPool.js';
import { agent } from '../src/experiments/agent/agent.js';
import { curvesToBand, type SeedOutcome } from '../src/experiments/multiSeed.js';
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
        // (a bad config such as group_size=1 with singleton=error is now refused before any seed runs)
        ...['run', '-e', 'agent', '--seeds', '1..4', '--set', 'lr=1e308', '--set', 'reduce=sum'],
        ...['--jobs', String(jobs), '--out', join(out, `fail${jobs}`)],
      );
    const serial = run(1);
    const parallel = run(2);
    expect(serial.stderr).toMatch(/^labs: error \[NON_FINITE\]: seed 1: update 1: lr=1e\+308 /);
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

  /**
   * The agent experiment whose run number `held` on this thread (0: its first) waits until a worker
   * has finished a task (`byWorkers()` above 0), reporting progress meanwhile when `reporting` (as a
   * long seed does): so a worker certainly runs seeds in the test, whatever the machine's speed.
   * Gives up waiting after 60 s; `sawWorker()` says whether a worker finished a task while it waited.
   */
  const heldUntilAWorkerFinishes = (byWorkers: () => number, held = 0, reporting = false) => {
    let ownRuns = 0;
    let saw = false;
    const experiment = {
      ...agent,
      async run(cfg: never, ctx: Parameters<typeof agent.run>[1]) {
        for (let t = 0; ownRuns === held && t < 6000; t++) {
          if (reporting) ctx.onProgress?.(0, 1);
          saw = byWorkers() > 0;
          if (saw) break;
          await new Promise((r) => setTimeout(r, 10));
        }
        ownRuns++;
        return agent.run(cfg, ctx);
      },
    } as unknown as Experiment;
    return { experiment, sawWorker: () => saw };
  };

  it('runs every task once, records as on this thread, progress rising to the total', async () => {
    const pool = startSeedPool(workerUrl(), 'agent', 2);
    try {
      const runner = pool.runner(heldUntilAWorkerFinishes(() => pool.stats().itemsByWorkers).experiment);
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
      expect(pool.stats().itemsByWorkers).toBeGreaterThan(0);
      expect(runner.threadsUsed?.()).toBeGreaterThanOrEqual(2);
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

  /** What `agent.run` gives for each of `seeds` on this thread (timing aside). */
  const serialRecords = async (seeds: number[]) =>
    Promise.all(
      seeds.map(async (seed) => ({ ...(await agent.run(config as never, { seed })), timing: null })),
    );
  const recordsOf = (outcomes: readonly (SeedOutcome | undefined)[]) =>
    outcomes.map((o) => (o?.ok ? { ...o.record, timing: null } : o));

  it('without --jobs, a run whose pace says workers do not pay starts none', async () => {
    const asked: [number, number][] = [];
    const pool = startSeedPool(workerUrl(), 'agent', 1, (remaining, paceMs) => {
      asked.push([remaining, paceMs]);
      return false;
    });
    try {
      const seeds = [3, 1, 4, 5];
      const runner = pool.runner(agent as Experiment);
      const outcomes = await runner.runAll(seeds.map((seed) => ({ config, seed })));
      expect(pool.stats().workersStarted).toBe(0);
      expect(runner.threadsUsed?.()).toBe(1);
      expect(recordsOf(outcomes)).toEqual(await serialRecords(seeds));
      // asked while each seed of this thread reports its progress and after it, with the seeds left
      // (never rising, 0 after the last) and a pace
      const remaining = asked.map(([r]) => r);
      expect(new Set(remaining)).toEqual(new Set([3, 2, 1, 0]));
      for (let k = 1; k < remaining.length; k++)
        expect(remaining[k]).toBeLessThanOrEqual(remaining[k - 1] as number);
      for (const [, pace] of asked) expect(pace).toBeGreaterThan(0);
      // the bands too stay on this thread
      const items = curvesToBand(outcomes.map((o) => (o?.ok ? o.record : (null as never))));
      expect(await runner.bandAll?.(items)).toEqual(items.map((it) => curveBands(it.series, it.key)));
      expect(pool.stats().workersStarted).toBe(0);
    } finally {
      await pool.close();
    }
  }, 120_000);

  it('without --jobs, workers started mid-run (once they pay) give the serial records', async () => {
    const pool = startSeedPool(workerUrl(), 'agent', 1, () => true);
    try {
      const seeds = [4, 14, 2, 16, 5, 12];
      // started after this thread's first seed; its second waits for the worker's first
      const held = heldUntilAWorkerFinishes(() => pool.stats().itemsByWorkers, 1);
      const outcomes = await pool.runner(held.experiment).runAll(seeds.map((seed) => ({ config, seed })));
      expect(pool.stats().workersStarted).toBe(1);
      expect(pool.stats().itemsByWorkers).toBeGreaterThan(0);
      expect(recordsOf(outcomes)).toEqual(await serialRecords(seeds));
    } finally {
      await pool.close();
    }
  }, 120_000);

  it('without --jobs, a long first seed starts the workers while it runs (from its progress)', async () => {
    const pool = startSeedPool(workerUrl(), 'agent', 1, (_remaining, paceMs) => paceMs > 0);
    try {
      // the first seed keeps reporting progress until a worker has finished a seed
      const longFirst = heldUntilAWorkerFinishes(() => pool.stats().itemsByWorkers, 0, true);
      const seeds = [6, 3, 9, 1];
      const outcomes = await pool
        .runner(longFirst.experiment)
        .runAll(seeds.map((seed) => ({ config, seed })));
      expect(longFirst.sawWorker()).toBe(true);
      expect(pool.stats().workersStarted).toBe(1);
      expect(recordsOf(outcomes)).toEqual(await serialRecords(seeds));
    } finally {
      await pool.close();
    }
  }, 120_000);

  it('without --jobs, a failing seed starts no worker', async () => {
    const pool = startSeedPool(workerUrl(), 'agent', 1, () => true);
    try {
      const failing = { ...config, group_size: 1, singleton: 'error' };
      const outcomes = await pool
        .runner(agent as Experiment)
        .runAll([1, 2, 3].map((seed) => ({ config: failing, seed })));
      expect(outcomes[0]?.ok).toBe(false);
      expect(pool.stats().workersStarted).toBe(0);
    } finally {
      await pool.close();
    }
  }, 60_000);

  it('does not wait for a worker that claimed nothing (one that never answers, here)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'labs-silent-worker-'));
    const silent = join(dir, 'silent.mjs');
    // listens, so it stays alive, and never replies: the main thread must not wait for its 'done'
    writeFileSync(
      silent,
      "import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => {});\n",
    );
    const pool = startSeedPool(pathToFileURL(silent), 'agent', 1);
    try {
      const outcomes = await pool
        .runner(agent as Experiment)
        .runAll([1, 2].map((seed) => ({ config, seed })));
      expect(recordsOf(outcomes)).toEqual(await serialRecords([1, 2]));
    } finally {
      await pool.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it("close() keeps a worker ref'd until it exits, even when it answers a job meanwhile", async () => {
    // A stand-in worker that records ref / unref (Node's Worker does not say): as Node's,
    // terminate() refs it and resolves on 'exit'.
    class StandIn extends EventEmitter {
      referenced = false;
      jobs: { id: number }[] = [];
      ref() {
        this.referenced = true;
      }
      unref() {
        this.referenced = false;
      }
      postMessage(job: { id: number }) {
        this.jobs.push(job);
      }
      terminate() {
        this.ref();
        return new Promise((done) => this.once('exit', done));
      }
    }
    const w = new StandIn();
    const pool = startSeedPool(
      pathToFileURL('/stand-in.mjs'),
      'agent',
      1,
      'now',
      () => w as unknown as Worker,
    );
    // the worker never answers in time: this thread runs the seed, and does not wait for it
    const outcomes = await pool.runner(agent as Experiment).runAll([{ config, seed: 1 }]);
    expect(outcomes.map((o) => o?.ok)).toEqual([true]);
    const closed = pool.close();
    // it answers the job only now, while it is being terminated
    w.emit('message', { job: w.jobs[0]?.id, type: 'done' });
    // unref'd here, an idle event loop would end the process before 'exit' (`labs findings --jobs 2`
    // stopped after its first run, silently, with code 0)
    expect(w.referenced).toBe(true);
    w.emit('exit', 1);
    await closed;
  });

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
