/**
 * Wall-clock timing for benchmarks (never used in tests). The machine is shared, so every figure is
 * a median over repeats after warm-up calls (JIT), and kernel-vs-floor ratios are taken pair by pair.
 */

/** Median of `xs` (the upper middle for an even count); does not reorder `xs`. */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
}

/** Median-of-`repeats` milliseconds of `fn()`, after `warmup` untimed calls. */
export function timeMedian(fn: () => void, repeats = 7, warmup = 2): number {
  for (let i = 0; i < warmup; i++) fn();
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/** {@link timeMedian} for a function that returns a promise (awaited inside the timed span). */
export async function timeMedianAsync(fn: () => Promise<unknown>, repeats = 7, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/**
 * The clock of {@link timePaired}: wall time by default; `BENCH_CLOCK=cpu` measures this process's
 * CPU time (user + system, `process.cpuUsage`) instead, which a machine shared with other busy
 * processes disturbs far less than wall time (time spent waiting for a core is not counted).
 */
const clock: () => number =
  process.env.BENCH_CLOCK === 'cpu'
    ? () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      }
    : () => performance.now();

/** Medians of a kernel, its floor, and of their per-pair ratio. */
export interface PairedTiming {
  ms: number;
  floorMs: number;
  ratio: number;
}

/**
 * Times `floor()` then `kernel()` back to back (on {@link clock}), `repeats` times after two warm-up pairs, and returns
 * the medians of each and of the per-pair ratios kernel/floor: a load spike on the shared machine then
 * hits both sides of a ratio instead of one.
 */
export function timePaired(kernel: () => void, floor: () => void, repeats = 11): PairedTiming {
  for (let i = 0; i < 2; i++) {
    kernel();
    floor();
  }
  const ks: number[] = [];
  const fs: number[] = [];
  const rs: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = clock();
    floor();
    const t1 = clock();
    kernel();
    const t2 = clock();
    fs.push(t1 - t0);
    ks.push(t2 - t1);
    rs.push((t2 - t1) / (t1 - t0));
  }
  return { ms: median(ks), floorMs: median(fs), ratio: median(rs) };
}
