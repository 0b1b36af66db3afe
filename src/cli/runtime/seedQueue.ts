/**
 * The task counter the `--jobs` threads share (a SharedArrayBuffer of four int32s): every thread,
 * the main one included, claims its next task itself with one atomic add, so an idle thread never
 * waits for the main thread's event loop (which is busy while the main thread runs a seed of its
 * own), tasks are claimed in list order, and the tail is balanced: whoever is free takes the next.
 */

/** Index of the next unclaimed task. */
const NEXT = 0;
/** 1 once a task failed: no thread claims another. */
const STOP = 1;
/** Tasks finished (succeeded or failed), for the progress bar. */
const FINISHED = 2;
/** The main thread's last task, microseconds (0 until it has finished one): its pace. */
const PACE = 3;
const CELLS = 4;

/** A view of the shared counter; `buffer` is what is sent to the workers. */
export class SeedQueue {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;

  /** A fresh counter over `total` tasks, or a view of an existing `buffer` (in a worker). */
  constructor(
    readonly total: number,
    buffer: SharedArrayBuffer = new SharedArrayBuffer(CELLS * Int32Array.BYTES_PER_ELEMENT),
  ) {
    this.buffer = buffer;
    this.cells = new Int32Array(buffer);
  }

  /** The next task's index, or -1 when every task is claimed or a task failed. */
  claim(): number {
    if (Atomics.load(this.cells, STOP) !== 0) return -1;
    const i = Atomics.add(this.cells, NEXT, 1);
    return i < this.total ? i : -1;
  }

  /**
   * The next task's index for a worker thread that expects to take `expectedMs` over it, or -1 when
   * none is left, a task failed, or the main thread would be through every unclaimed task before the
   * worker finished this one: (unclaimed tasks) x (main thread's pace) < `expectedMs`. A worker's
   * first task runs JIT-cold ({@link coldSeedMs}), so a late-started worker that took the last seed
   * of a short run would make everyone wait for it (docs/bench-startup.md, "Few seeds"). Until the
   * main thread has published a pace (see {@link publishPace}), the worker claims as {@link claim}
   * does.
   */
  claimForWorker(expectedMs: number): number {
    for (;;) {
      if (Atomics.load(this.cells, STOP) !== 0) return -1;
      const next = Atomics.load(this.cells, NEXT);
      if (next >= this.total) return -1;
      const pace = this.pace();
      if (pace > 0 && (this.total - next) * pace < expectedMs) return -1;
      if (Atomics.compareExchange(this.cells, NEXT, next, next + 1) === next) return next;
    }
  }

  /** The main thread's time for the task it just finished (ms): what {@link claimForWorker} weighs. */
  publishPace(ms: number): void {
    Atomics.store(this.cells, PACE, Math.max(1, Math.min(2 ** 31 - 1, Math.round(ms * 1000))));
  }

  /** The main thread's last published task time, ms (0: none yet). */
  pace(): number {
    return Atomics.load(this.cells, PACE) / 1000;
  }

  /** Marks task done; `failed` stops further claims. */
  finish(failed: boolean): void {
    if (failed) Atomics.store(this.cells, STOP, 1);
    Atomics.add(this.cells, FINISHED, 1);
  }

  /** Stops further claims (a thread died). */
  stop(): void {
    Atomics.store(this.cells, STOP, 1);
  }

  /** Tasks finished so far, by any thread. */
  finished(): number {
    return Atomics.load(this.cells, FINISHED);
  }

  /** How many tasks were claimed (started), by any thread. */
  claimed(): number {
    return Math.min(this.total, Atomics.load(this.cells, NEXT));
  }
}

/**
 * Wall ms from `new Worker` to a worker ready to claim a seed: the thread, the experiment's modules
 * and zod (100-150 ms on an idle 2-core machine, up to ~250 ms on a busy one; docs/bench-startup.md).
 */
export const WORKER_START_MS = 150;

/**
 * A seed run JIT-cold (a thread's first) takes longer than a warm one, by at most this many ms (the
 * agent experiment's first seed ~60 ms more, mask's ~230 ms; docs/bench-startup.md)...
 */
export const COLD_SEED_EXTRA_MS = 250;

/** ...and at most this many times a warm one (the agent's short seeds: ~3.5-4x). */
export const COLD_SEED_FACTOR = 4;

/** What a thread expects its first, JIT-cold seed to take when a warm one takes `paceMs`. */
export function coldSeedMs(paceMs: number): number {
  return Math.min(COLD_SEED_FACTOR * paceMs, paceMs + COLD_SEED_EXTRA_MS);
}

/**
 * A warm seed's wall ms at least, from `coldMs` spent on a JIT-cold one (all of it, or the part run
 * so far): the inverse of {@link coldSeedMs}'s bounds.
 */
export function warmPaceFromCold(coldMs: number): number {
  return Math.max(coldMs / COLD_SEED_FACTOR, coldMs - COLD_SEED_EXTRA_MS);
}

/**
 * Whether starting workers now pays, with `remaining` unclaimed tasks and the main thread taking
 * `paceMs` each: only if the main thread alone would still be busy for one seed plus twice a
 * worker's overhead (its start and its cold seed's extra time). Twice, because a starting worker
 * also takes the second core from the main thread's own JIT compiler and garbage collector. So a few
 * short seeds run on the main thread alone (agent's 25 ms seeds: not below ~19 of them), and two long
 * ones (a second or more) share the cores. Used when `--jobs` is not given.
 */
export function worthStartingWorkers(remaining: number, paceMs: number): boolean {
  return remaining * paceMs >= paceMs + 2 * (WORKER_START_MS + coldSeedMs(paceMs) - paceMs);
}
