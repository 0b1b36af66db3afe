/**
 * Many seeds on every core: `labs run --experiment agent --seeds 1..40 --set updates=600` through the
 * built CLI (`npm run build` first) with `--jobs 1` (serial, main thread) and `--jobs 2` (two worker
 * threads), in one run, alternating which goes first. updates=600 (4x the default) makes a seed cost
 * ~0.1 s of CPU so that start-up does not dominate. Wall time is what the user waits for; the CPU time
 * (user + system, all threads) shows the pool's own cost (each worker loads the experiment and warms
 * its JIT) and, on a shared machine, whether the wall time was waiting for cores.
 * LABS_BENCH_SEEDS_REPS=n sets the pairs (default 2).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtCli, type ChildTiming, loadAverage, timeNode } from './childTiming.js';
import type { BenchRow } from './run.js';
import { median } from './timing.js';

export async function run(): Promise<BenchRow[]> {
  const cli = builtCli();
  const reps = Number(process.env.LABS_BENCH_SEEDS_REPS ?? 2);
  const out = mkdtempSync(join(tmpdir(), 'labs-seeds-'));
  const args = (jobs: number) => [
    cli,
    ...['run', '--experiment', 'agent', '--seeds', '1..40', '--set', 'updates=600'],
    ...['--jobs', String(jobs), '--no-progress', '--out', join(out, `jobs${jobs}`)],
  ];
  const serial: ChildTiming[] = [];
  const parallel: ChildTiming[] = [];
  try {
    for (let i = 0; i < reps; i++) {
      if (i % 2 === 0) {
        serial.push(timeNode(args(1)));
        parallel.push(timeNode(args(2)));
      } else {
        parallel.push(timeNode(args(2)));
        serial.push(timeNode(args(1)));
      }
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  const speedup = median(serial.map((s, i) => s.wallMs / (parallel[i] as ChildTiming).wallMs));
  const cpu1 = median(serial.map((s) => s.cpuMs));
  const cpu2 = median(parallel.map((s) => s.cpuMs));
  return [
    {
      group: 'seeds',
      name: '--seeds 1..40 (agent, updates=600): --jobs 2 vs --jobs 1',
      ms: median(parallel.map((s) => s.wallMs)),
      floor_ms: median(serial.map((s) => s.wallMs)),
      ratio: speedup,
      note: `ratio = speed-up (serial wall / --jobs 2 wall), ${reps} pairs; CPU ${cpu2.toFixed(0)} vs ${cpu1.toFixed(0)} ms; load ${loadAverage()}`,
    },
  ];
}
