/**
 * The wall-clock time a record reports (`timing.wall_ms`): `startStopwatch()` returns a function
 * giving the milliseconds since it was called, from Node's monotonic `process.hrtime`. Not
 * `performance.now()`: the first read of `performance` makes Node load its performance modules
 * (perf_hooks and about ten internal ones), about 1 ms of a `labs run` that starts in 100 ms.
 */
export function startStopwatch(): () => number {
  const t0 = process.hrtime.bigint();
  return () => Number(process.hrtime.bigint() - t0) / 1e6;
}
