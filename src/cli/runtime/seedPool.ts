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
 * - with `--jobs N` the workers are started (see {@link openSeedPool}) before the main thread loads
 *   the experiment and validates the options, so their start overlaps that work; without `--jobs`
 *   they start only once the main thread's pace shows that they pay ({@link worthStartingWorkers}):
 *   a few short seeds would otherwise run slower than serially, the worker's start taking the second
 *   core from the main thread's JIT and GC for a seed or two it finishes late, if at all;
 * - every thread claims its next seed from a shared atomic counter ({@link SeedQueue}), so no thread
 *   waits for the main thread's event loop and the last seeds go to whichever thread is free; a
 *   worker claims a seed only if it would finish it before the main thread could
 *   ({@link SeedQueue.claimForWorker}), and the main thread never waits for a worker that claimed
 *   nothing (still loading, say).
 *
 * The workers load the built `seedWorker.mjs` next to the running CLI. Run from source (tsx), there is
 * no such file (tsx's loader does not reach worker threads on Node 20), and the seeds run serially on
 * the main thread instead: {@link seedWorkerUrl} then returns null.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { LabError, type LabErrorCode } from '../../core/errors.js';
import type { CurveBand, CurveItem, SeedOutcome, SeedRunner, SeedTask } from '../../experiments/multiSeed.js';
import { curveBands } from '../../experiments/seedStatistics.js';
import type { Experiment, JsonValue, RunRecord } from '../../experiments/types.js';
import { runBreakingOnInterrupt } from '../interrupt.js';
import { SeedQueue, warmPaceFromCold, worthStartingWorkers } from './seedQueue.js';

/** What every worker is started with: the experiment it loads at once. */
export interface SeedWorkerData {
  experiment: string;
}

/**
 * One share-out sent to a worker, with the shared counter over its items: the seeds of `runAll`
 * (config by index), or the curves of `bandAll`. `id` tags the worker's replies: a worker may still
 * answer a job the main thread no longer waits for (it claimed nothing) when the next one is sent.
 */
export type SeedJob = { id: number; queue: SharedArrayBuffer } & (
  | { kind: 'seeds'; configs: Record<string, JsonValue>[]; tasks: { config: number; seed: number }[] }
  | { kind: 'bands'; items: CurveItem[] }
);

/** An error as plain data (a LabError's code, message and details; any other error's message and stack). */
export interface PlainError {
  lab: boolean;
  code?: LabErrorCode;
  message: string;
  details?: Record<string, unknown> | undefined;
  stack?: string | undefined;
}

/**
 * What a worker posts for job `job`: a finished item, or that it claims no more items (and whether it
 * could load at all).
 */
export type SeedReply = { job: number } & (
  | { type: 'record'; index: number; record: RunRecord }
  | { type: 'band'; index: number; band: CurveBand }
  | { type: 'error'; index: number; error: PlainError }
  | { type: 'done'; loadError?: PlainError }
);

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
  /**
   * Worker threads started so far (0 until they pay, without `--jobs`) and the items (seeds, curve
   * bands) they have finished.
   */
  stats(): { workersStarted: number; itemsByWorkers: number };
  close(): Promise<void>;
}

/**
 * The workers of `--jobs jobs` for `tasks` runs of experiment `name` (the main thread is one of the
 * `jobs` threads), or null when there is nothing to share (jobs or tasks <= 1) or no built worker
 * (running from source). With `startNow` (`--jobs` given) they start at once: call this before
 * loading the experiment on this thread, so the workers load theirs meanwhile. Without it (the
 * default `--jobs`) they start during a run, once {@link worthStartingWorkers} says they pay.
 */
export function openSeedPool(name: string, jobs: number, tasks: number, startNow: boolean): SeedPool | null {
  const workers = Math.min(jobs, tasks) - 1;
  if (workers < 1) return null;
  const url = seedWorkerUrl();
  return url ? startSeedPool(url, name, workers, startNow ? 'now' : worthStartingWorkers) : null;
}

/**
 * When a pool's workers start: `'now'`, or during `runAll`, while one of this thread's seeds reports
 * its progress or once it has ended, when `worth(unclaimed tasks, pace)` is true. The pace is the
 * seed's wall ms (so far), the first seed's through {@link warmPaceFromCold} (it runs JIT-cold).
 */
export type WorkerStart = 'now' | ((remaining: number, paceMs: number) => boolean);

/** Starts one worker thread (a test passes a stand-in that records ref / unref). */
export type SpawnWorker = (url: URL, data: SeedWorkerData) => Worker;

function spawnWorker(url: URL, data: SeedWorkerData): Worker {
  // Loaded here, not at import: node:worker_threads pulls in about fifteen of Node's own modules
  // (net, child_process, ...), a few ms of every single-seed `labs run` that never starts a worker.
  const { Worker } = createRequire(import.meta.url)(
    'node:worker_threads',
  ) as typeof import('node:worker_threads');
  return new Worker(url, { workerData: data });
}

type WorkerEnd = { loadError?: Error; died?: Error };
/** A {@link SeedJob} before the pool tags it with its id. */
type UntaggedJob = SeedJob extends infer J ? (J extends unknown ? Omit<J, 'id'> : never) : never;

/**
 * `workers` worker threads loading experiment `name` from `workerUrl`, started as `when` says
 * (see {@link openSeedPool}).
 *
 * Why one long function: the pool is a closure. Starting the workers (`start`), sending a job to one
 * worker (`drive`), sharing a queue of items between the workers and this thread (`shareOut`), the
 * `runner` and `close` all read and update the same worker list, `dead` and `busy` maps and
 * counters; those named inner functions are its phases.
 */
export function startSeedPool(
  workerUrl: URL,
  name: string,
  workers: number,
  when: WorkerStart = 'now',
  spawn: SpawnWorker = spawnWorker,
): SeedPool {
  const all: Worker[] = [];
  const dead = new Map<Worker, Error>();
  /** Jobs each worker is still answering: it keeps the process alive while it has any. */
  const busy = new Map<Worker, number>();
  /** Set by close(): from then on every worker stays ref'd until it exits. */
  let closing = false;
  const start = () => {
    for (let i = 0; i < workers; i++) {
      const w = spawn(workerUrl, { experiment: name });
      // Idle workers must not keep the process alive; a worker that dies outside a run is noted.
      w.unref();
      w.on('exit', (code) => {
        if (!dead.has(w)) dead.set(w, new Error(`a worker thread exited with code ${code}`));
      });
      w.on('error', (e) => dead.set(w, e));
      all.push(w);
    }
  };
  if (when === 'now') start();
  let jobsSent = 0;
  let itemsByWorkers = 0;
  /** Workers that have finished at least one item. */
  const working = new Set<Worker>();

  /** Sends `job` to `w`; resolves when `w` says it is done with it, or dies. */
  const drive = (
    w: Worker,
    job: SeedJob,
    onReply: (reply: Exclude<SeedReply, { type: 'done' }>) => void,
    queue: SeedQueue,
  ) =>
    new Promise<WorkerEnd>((resolve) => {
      const onMessage = (reply: SeedReply) => {
        if (reply.job !== job.id) return;
        if (reply.type !== 'done') {
          working.add(w);
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
        const left = (busy.get(w) ?? 1) - 1;
        busy.set(w, left);
        // Not while closing: terminate() refs the worker until its 'exit', and a job it answers
        // meanwhile (one it claimed nothing of, not waited for) would undo that ref; the event loop
        // could then empty before 'exit', and the process end silently with code 0 in the middle of
        // the caller's await (seen: `labs findings --jobs 2` stopping after its first run).
        if (left === 0 && !closing) w.unref();
      };
      busy.set(w, (busy.get(w) ?? 0) + 1);
      w.ref();
      w.on('message', onMessage);
      w.on('error', onDeath);
      w.on('exit', onDeath);
      w.postMessage(job);
    });

  /**
   * Sends `job` to every live worker (to workers started meanwhile too, when `mayStart`) and runs
   * `here(i)` on this thread for every item it claims itself, until no item is left; `onReply` gets
   * each worker's finished item. Resolves once every claimed item is in, with what went wrong in the
   * workers that had to be waited for (a worker that claimed nothing is not waited for), or once
   * every worker has said it is done or died (the queue is then stopped).
   */
  const shareOut = async (
    job: UntaggedJob,
    queue: SeedQueue,
    onReply: (reply: Exclude<SeedReply, { type: 'done' }>) => void,
    here: (i: number, tick: () => void) => Promise<boolean>,
    mayStart: boolean,
  ): Promise<WorkerEnd[]> => {
    const tagged: SeedJob = { ...job, id: ++jobsSent };
    let received = 0;
    let allIn: (() => void) | undefined;
    const count = () => {
      received++;
      if (allIn && received >= queue.claimed()) allIn();
    };
    const ends: Promise<WorkerEnd>[] = [];
    const counted = (reply: Exclude<SeedReply, { type: 'done' }>) => {
      onReply(reply);
      itemsByWorkers++;
      count();
    };
    const sendToWorkers = () => {
      for (const w of all) if (!dead.has(w)) ends.push(drive(w, tagged, counted, queue));
    };
    sendToWorkers();
    // This thread's share: the same claiming loop as a worker's (seedWorker.ts), timed for the
    // workers' claims and for the decision to start them.
    let mine = 0;
    let t0 = 0;
    /**
     * Starts the workers not started yet once they pay, with `ms` spent on this thread's current
     * item so far (a lower bound on its time while it runs: `tick` asks while a long seed reports its
     * progress, so a run of long seeds need not wait for the first to end). The first seed runs
     * JIT-cold: its time gives a pace through warmPaceFromCold, never too high.
     */
    const startIfWorthIt = (ms: number) => {
      if (!mayStart || when === 'now' || all.length > 0 || ms <= 0) return;
      const pace = mine === 0 ? warmPaceFromCold(ms) : ms;
      if (when(queue.total - queue.claimed(), pace)) {
        start();
        sendToWorkers();
      }
    };
    const tick = () => startIfWorthIt(performance.now() - t0);
    for (let i = queue.claim(); i >= 0; i = queue.claim()) {
      t0 = performance.now();
      const ok = await here(i, tick);
      queue.finish(!ok);
      const ms = performance.now() - t0;
      queue.publishPace(ms);
      count();
      // never after a failure: no thread claims another item then
      if (ok) startIfWorthIt(ms);
      mine++;
      // Let the event loop turn between this thread's seeds (a Ctrl-C handler runs here).
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    if (received >= queue.claimed()) return [];
    const everyItem = new Promise<null>((resolve) => {
      allIn = () => resolve(null);
    });
    return (await Promise.race([Promise.all(ends), everyItem])) ?? [];
  };

  return {
    runner(experiment: Experiment): SeedRunner {
      return {
        jobs: workers + 1,
        async runAll(
          tasks: readonly SeedTask[],
          onFinished?: (done: number, total: number) => void,
          onOutcome?: (index: number, outcome: SeedOutcome) => void,
        ) {
          const n = tasks.length;
          const queue = new SeedQueue(n);
          const outcomes: (SeedOutcome | undefined)[] = new Array(n);
          const report = (extra = 0) => onFinished?.(Math.min(n, queue.finished() + extra), n);
          const configs: Record<string, JsonValue>[] = [];
          const configIndex = new Map<Record<string, JsonValue>, number>();
          const job: UntaggedJob = {
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
              let o: SeedOutcome | undefined;
              if (reply.type === 'record') o = { ok: true, record: reply.record };
              else if (reply.type === 'error') o = { ok: false, error: rebuild(reply.error) };
              if (o) {
                outcomes[reply.index] = o;
                onOutcome?.(reply.index, o);
              }
              report();
            },
            async (i, tick) => {
              const task = tasks[i] as SeedTask;
              const onProgress = (d: number, t: number) => {
                report(t > 0 ? d / t : 1);
                tick();
              };
              let o: SeedOutcome;
              try {
                // this thread's seed: Ctrl-C stops it at once (the workers end with the process)
                const run = () => experiment.run(task.config, { seed: task.seed, onProgress });
                o = { ok: true, record: await runBreakingOnInterrupt(run) };
              } catch (e) {
                o = { ok: false, error: e };
              }
              outcomes[i] = o;
              onOutcome?.(i, o);
              // counted by the caller's queue.finish right after; the bar shows it now
              report(1);
              return o.ok;
            },
            true,
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
        threadsUsed: () => 1 + working.size,
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
            false,
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
    stats: () => ({ workersStarted: all.length, itemsByWorkers }),
    async close() {
      closing = true;
      await Promise.all(all.map((w) => w.terminate()));
    },
  };
}
