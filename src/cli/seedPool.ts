/**
 * `--jobs N`: the main thread plus N - 1 worker threads (node:worker_threads) run the seeds of one
 * experiment. Seeds are independent and every random draw comes from the seed's own stream, so a
 * seed's record is the same on any thread; records cross back by structured clone, which keeps every
 * number bit for bit (NaN, -0 and Infinity included).
 *
 * Why this shape (docs/bench-startup.md, "Many seeds"): a worker costs CPU to start (a V8 isolate,
 * the experiment's modules and zod, its own JIT warm-up), so
 * - the main thread, which has loaded and warmed nothing less, runs seeds too: `--jobs 2` starts one
 *   worker, not two;
 * - the workers are started (see {@link openSeedPool}) before the main thread loads the experiment
 *   and validates the options, so their start overlaps that work;
 * - every thread claims its next seed from a shared atomic counter ({@link SeedQueue}), so no thread
 *   waits for the main thread's event loop and the last seeds go to whichever thread is free.
 *
 * The workers load the built `seedWorker.mjs` next to the running CLI. Run from source (tsx), there is
 * no such file (tsx's loader does not reach worker threads on Node 20), and the seeds run serially on
 * the main thread instead: {@link seedWorkerUrl} then returns null.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { LabError, type LabErrorCode } from '../core/errors.js';
import type { CurveBand, CurveItem, SeedOutcome, SeedRunner, SeedTask } from '../experiments/multiSeed.js';
import { curveBands } from '../experiments/seedStatistics.js';
import type { Experiment, JsonValue, RunRecord } from '../experiments/types.js';
import { SeedQueue } from './seedQueue.js';

/** What every worker is started with: the experiment it loads at once. */
export interface SeedWorkerData {
  experiment: string;
}

/**
 * One share-out sent to a worker, with the shared counter over its items: the seeds of `runAll`
 * (config by index), or the curves of `bandAll`.
 */
export type SeedJob =
  | {
      kind: 'seeds';
      configs: Record<string, JsonValue>[];
      tasks: { config: number; seed: number }[];
      queue: SharedArrayBuffer;
    }
  | { kind: 'bands'; items: CurveItem[]; queue: SharedArrayBuffer };

/** An error as plain data (a LabError's code, message and details; any other error's message and stack). */
export interface PlainError {
  lab: boolean;
  code?: LabErrorCode;
  message: string;
  details?: Record<string, unknown> | undefined;
  stack?: string | undefined;
}

/** What a worker posts: a finished item, or that it claims no more items (and whether it could load at all). */
export type SeedReply =
  | { type: 'record'; index: number; record: RunRecord }
  | { type: 'band'; index: number; band: CurveBand }
  | { type: 'error'; index: number; error: PlainError }
  | { type: 'done'; loadError?: PlainError };

/** The built worker next to this module (dist/cli/seedWorker.mjs), or null when running from source. */
export function seedWorkerUrl(): URL | null {
  const url = new URL('./seedWorker.mjs', import.meta.url);
  // built: the bundle (labs.bundle.js) or a chunk (*.mjs); from source (tsx) this file is .ts
  if (import.meta.url.endsWith('.ts') || !existsSync(fileURLToPath(url))) return null;
  return url;
}

/** The error a worker reported, rebuilt on this thread (a LabError keeps its code and details). */
function rebuild(error: PlainError): Error {
  const e =
    error.lab && error.code
      ? new LabError(error.code, error.message, error.details ? { details: error.details } : {})
      : new Error(error.message);
  if (error.stack) e.stack = error.stack;
  return e;
}

/** Workers started for one experiment; `runner` adds this thread's copy of it. Always `close()`. */
export interface SeedPool {
  /** The {@link SeedRunner} over the workers and this thread (which runs `experiment`). */
  runner(experiment: Experiment): SeedRunner;
  close(): Promise<void>;
}

/**
 * Starts the workers of `--jobs jobs` for `tasks` runs of experiment `name` (the main thread is one
 * of the `jobs` threads), or returns null when there is nothing to share (jobs or tasks <= 1) or no
 * built worker (running from source). Call it before loading the experiment on this thread, so the
 * workers load theirs meanwhile.
 */
export function openSeedPool(name: string, jobs: number, tasks: number): SeedPool | null {
  const workers = Math.min(jobs, tasks) - 1;
  if (workers < 1) return null;
  const url = seedWorkerUrl();
  return url ? startSeedPool(url, name, workers) : null;
}

/** `workers` worker threads loading experiment `name` from `workerUrl` (see {@link openSeedPool}). */
export function startSeedPool(workerUrl: URL, name: string, workers: number): SeedPool {
  // Loaded here, not at import: node:worker_threads pulls in about fifteen of Node's own modules
  // (net, child_process, ...), a few ms of every single-seed `labs run` that never starts a worker.
  const { Worker } = createRequire(import.meta.url)(
    'node:worker_threads',
  ) as typeof import('node:worker_threads');
  const all: Worker[] = [];
  const dead = new Map<Worker, Error>();
  for (let i = 0; i < workers; i++) {
    const w = new Worker(workerUrl, { workerData: { experiment: name } satisfies SeedWorkerData });
    // Idle workers must not keep the process alive; a worker that dies outside a run is noted.
    w.unref();
    w.on('exit', (code) => {
      if (!dead.has(w)) dead.set(w, new Error(`a worker thread exited with code ${code}`));
    });
    w.on('error', (e) => dead.set(w, e));
    all.push(w);
  }

  /**
   * Sends `job` to every live worker and runs `here(i)` on this thread for every item it claims
   * itself, until no item is left; `onReply` gets each worker's finished item. Resolves once every
   * worker has said it is done (or died: the queue is then stopped), with what went wrong in them.
   */
  const shareOut = async (
    job: SeedJob,
    queue: SeedQueue,
    onReply: (reply: Exclude<SeedReply, { type: 'done' }>) => void,
    here: (i: number) => Promise<boolean>,
  ): Promise<{ loadError?: Error; died?: Error }[]> => {
    const driven = all
      .filter((w) => !dead.has(w))
      .map(
        (w) =>
          new Promise<{ loadError?: Error; died?: Error }>((resolve) => {
            const onMessage = (reply: SeedReply) => {
              if (reply.type !== 'done') {
                onReply(reply);
                return;
              }
              cleanup();
              resolve(reply.loadError ? { loadError: rebuild(reply.loadError) } : {});
            };
            const onDeath = (e: unknown) => {
              cleanup();
              queue.stop();
              resolve({ died: e instanceof Error ? e : new Error(`a worker thread exited with code ${e}`) });
            };
            const cleanup = () => {
              w.off('message', onMessage);
              w.off('error', onDeath);
              w.off('exit', onDeath);
              w.unref();
            };
            w.ref();
            w.on('message', onMessage);
            w.on('error', onDeath);
            w.on('exit', onDeath);
            w.postMessage(job);
          }),
      );
    // This thread's share: the same claiming loop as a worker's (seedWorker.ts).
    for (let i = queue.claim(); i >= 0; i = queue.claim()) queue.finish(!(await here(i)));
    return Promise.all(driven);
  };

  return {
    runner(experiment: Experiment): SeedRunner {
      return {
        jobs: workers + 1,
        async runAll(tasks: readonly SeedTask[], onFinished?: (done: number, total: number) => void) {
          const n = tasks.length;
          const queue = new SeedQueue(n);
          const outcomes: (SeedOutcome | undefined)[] = new Array(n);
          const report = (extra = 0) => onFinished?.(Math.min(n, queue.finished() + extra), n);
          const configs: Record<string, JsonValue>[] = [];
          const configIndex = new Map<Record<string, JsonValue>, number>();
          const job: SeedJob = {
            kind: 'seeds',
            configs,
            tasks: tasks.map((t) => {
              let c = configIndex.get(t.config);
              if (c === undefined) {
                c = configs.push(t.config) - 1;
                configIndex.set(t.config, c);
              }
              return { config: c, seed: t.seed };
            }),
            queue: queue.buffer,
          };
          const ends = await shareOut(
            job,
            queue,
            (reply) => {
              if (reply.type === 'record') outcomes[reply.index] = { ok: true, record: reply.record };
              else if (reply.type === 'error')
                outcomes[reply.index] = { ok: false, error: rebuild(reply.error) };
              report();
            },
            async (i) => {
              const task = tasks[i] as SeedTask;
              const onProgress = (d: number, t: number) => report(t > 0 ? d / t : 1);
              try {
                const record = await experiment.run(task.config, { seed: task.seed, onProgress });
                outcomes[i] = { ok: true, record };
                return true;
              } catch (e) {
                outcomes[i] = { ok: false, error: e };
                return false;
              } finally {
                // counted by the caller's queue.finish right after; the bar shows it now
                report(1);
              }
            },
          );
          report();
          // A task claimed by a worker that died has no outcome: it fails with the worker's death.
          const died = ends.find((e) => e.died)?.died;
          for (let i = 0; i < queue.claimed(); i++) {
            if (!outcomes[i]) {
              const seed = (tasks[i] as SeedTask).seed;
              outcomes[i] = {
                ok: false,
                error: new Error(
                  `a worker thread stopped while running seed ${seed}: ${died?.message ?? 'unknown cause'}`,
                ),
              };
            }
          }
          // Nothing failed, yet tasks are left: no thread could run them (e.g. every worker failed to load).
          if (queue.claimed() < n && outcomes.every((o) => o?.ok !== false)) {
            throw (
              ends.find((e) => e.loadError)?.loadError ?? died ?? new Error('no thread could run the seeds')
            );
          }
          return outcomes;
        },
        async bandAll(items: readonly CurveItem[]): Promise<CurveBand[]> {
          const queue = new SeedQueue(items.length);
          const bands: (CurveBand | undefined)[] = new Array(items.length);
          let failure: unknown;
          const ends = await shareOut(
            { kind: 'bands', items: [...items], queue: queue.buffer },
            queue,
            (reply) => {
              if (reply.type === 'band') bands[reply.index] = reply.band;
              else if (reply.type === 'error') failure ??= rebuild(reply.error);
            },
            async (i) => {
              const item = items[i] as CurveItem;
              bands[i] = curveBands(item.series, item.key);
              return true;
            },
          );
          if (failure) throw failure;
          // A worker that died mid-curve left a hole: this thread computes what is missing.
          if (ends.some((e) => e.died)) {
            for (const [i, item] of items.entries()) bands[i] ??= curveBands(item.series, item.key);
          }
          return bands as CurveBand[];
        },
      };
    },
    async close() {
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}
