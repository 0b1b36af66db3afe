/**
 * The task counter the `--jobs` threads share (a SharedArrayBuffer of three int32s): every thread,
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

/** A view of the shared counter; `buffer` is what is sent to the workers. */
export class SeedQueue {
  readonly buffer: SharedArrayBuffer;
  private readonly cells: Int32Array;

  /** A fresh counter over `total` tasks, or a view of an existing `buffer` (in a worker). */
  constructor(
    readonly total: number,
    buffer: SharedArrayBuffer = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT),
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
