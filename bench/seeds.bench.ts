/**
 * Many seeds on every core: `labs run --seeds 1..40` through the built CLI (`npm run build` first) with
 * `--jobs 1` (serial, main thread) and `--jobs 2` (the main thread and one worker), in one run, order
 * rotating from pair to pair. Three configs:
 * - agent with updates=600 (4x the default): ~0.13 s of CPU per seed, the config of the first
 *   measurement (docs/bench-startup.md);
 * - mask at its defaults: ~0.3 s of CPU per seed, seeds that cost real compute;
 * - agent at its defaults, for information: ~25 ms per seed, so 40 seeds take less than the start-up
 *   of a worker and no pool can reach 2x on it.
 * Wall time is what the user waits for; the CPU time (user + system, all threads) shows the pool's
 * own cost (a worker loads the experiment and warms its JIT) and, on a shared machine, whether the
 * wall time was waiting for cores.
 *
 * Two ceilings are measured in the same run, in the same pairs:
 * - two cores for this workload, with no pool: two `--jobs 1` CLIs started together, on seeds 1..20
 *   and 21..40 (the speed-up of the later of the two over the serial run). A serial run already keeps
 *   V8's garbage collector and compiler busy on the second core, so this is below 2x even on an idle
 *   machine, and it is what a pool can hope for;
 * - two threads of a pure arithmetic loop: two units on one thread vs one unit on each of two
 *   threads. On a machine where other sessions keep both cores busy (Linux gives each session a fair
 *   share, however many threads it has) this ceiling drops towards 1x, and the pool's speed-up with
 *   it.
 *
 * LABS_BENCH_SEEDS_REPS=n sets the pairs (default 2). LABS_BENCH_SEEDS_BEFORE=DIR adds `--jobs 2` of
 * another build (e.g. the commit before a change, built with `node scripts/build.mjs DIR --cli-only`)
 * to every pair. LABS_BENCH_SEEDS_ONLY=agent600,mask,agent picks configs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtCli, type ChildTiming, loadAverage, timeNode, timeNodesTogether } from './childTiming.js';
import type { BenchRow } from './run.js';
import { median } from './timing.js';

const CONFIGS: Record<string, { label: string; args: string[] }> = {
  agent600: { label: 'agent, updates=600', args: ['--experiment', 'agent', '--set', 'updates=600'] },
  mask: { label: 'mask, defaults', args: ['--experiment', 'mask'] },
  agent: { label: 'agent, defaults', args: ['--experiment', 'agent'] },
};

/** A child that runs `threads` threads, each `units / threads` units of a pure arithmetic loop. */
function spinArgs(threads: number, units: number): string[] {
  const spin = 'function spin(n){let x=0;for(let i=0;i<n*1e8;i++)x+=Math.sqrt(i);return x}';
  const per = units / threads;
  if (threads === 1) return ['-e', `${spin};spin(${units})`];
  const worker = `const {parentPort}=require('node:worker_threads');${spin};parentPort.postMessage(spin(${per}))`;
  return [
    '-e',
    `const {Worker}=require('node:worker_threads');let left=${threads};for(let t=0;t<${threads};t++){const w=new Worker(${JSON.stringify(worker)},{eval:true});w.on('message',()=>{w.terminate();if(--left===0)process.exitCode=0})}`,
  ];
}

export async function run(): Promise<BenchRow[]> {
  const cli = builtCli();
  const before = process.env.LABS_BENCH_SEEDS_BEFORE
    ? join(process.env.LABS_BENCH_SEEDS_BEFORE, 'cli', 'main.js')
    : null;
  const reps = Number(process.env.LABS_BENCH_SEEDS_REPS ?? 2);
  const only = process.env.LABS_BENCH_SEEDS_ONLY?.split(',') ?? Object.keys(CONFIGS);
  const out = mkdtempSync(join(tmpdir(), 'labs-seeds-'));
  const rows: BenchRow[] = [];
  const loads: string[] = [];
  try {
    const ceiling: { one: ChildTiming[]; two: ChildTiming[] } = { one: [], two: [] };
    for (const name of only) {
      const config = CONFIGS[name];
      if (!config) throw new Error(`LABS_BENCH_SEEDS_ONLY: unknown config ${name}`);
      // A fresh --out per run: labs refuses to replace a record without --force (which an older
      // build given as LABS_BENCH_BEFORE would not know).
      let runs = 0;
      const args = (main: string, jobs: number, seeds = '1..40', dir = `${name}-${jobs}`) => [
        main,
        ...['run', ...config.args, '--seeds', seeds],
        ...['--jobs', String(jobs), '--no-progress', '--out', join(out, `${dir}-${runs++}`)],
      ];
      type Kind = [string, () => ChildTiming | Promise<ChildTiming>];
      const kinds: Kind[] = [
        ['serial', () => timeNode(args(cli, 1))],
        ['jobs2', () => timeNode(args(cli, 2))],
        ...(before ? ([['before', () => timeNode(args(before, 2))]] as Kind[]) : []),
        [
          'halves',
          () => timeNodesTogether([args(cli, 1, '1..20', `${name}-a`), args(cli, 1, '21..40', `${name}-b`)]),
        ],
        ['spin1', () => timeNode(spinArgs(1, 2))],
        ['spin2', () => timeNode(spinArgs(2, 2))],
      ];
      const t: Record<string, ChildTiming[]> = {};
      for (let i = 0; i < reps; i++) {
        // rotate the order so that no kind always runs first (or always after the same one)
        for (let k = 0; k < kinds.length; k++) {
          const [kind, time] = kinds[(i + k) % kinds.length] as Kind;
          const list = t[kind] ?? [];
          list.push(await time());
          t[kind] = list;
        }
        loads.push(loadAverage());
      }
      const serial = t.serial as ChildTiming[];
      const speedup = (xs: ChildTiming[]) =>
        median(serial.map((s, i) => s.wallMs / (xs[i] as ChildTiming).wallMs));
      const cpu = (xs: ChildTiming[]) => median(xs.map((x) => x.cpuMs)).toFixed(0);
      const spin = median(
        (t.spin1 as ChildTiming[]).map(
          (s, i) => s.wallMs / ((t.spin2 as ChildTiming[])[i] as ChildTiming).wallMs,
        ),
      );
      ceiling.one.push(...(t.spin1 as ChildTiming[]));
      ceiling.two.push(...(t.spin2 as ChildTiming[]));
      const rowFor = (label: string, xs: ChildTiming[]): BenchRow => ({
        group: 'seeds',
        name: `--seeds 1..40 (${config.label}): ${label} vs --jobs 1`,
        ms: median(xs.map((s) => s.wallMs)),
        floor_ms: median(serial.map((s) => s.wallMs)),
        ratio: speedup(xs),
        note: `ratio = speed-up (serial wall / this wall), ${reps} pairs; CPU ${cpu(xs)} vs ${cpu(serial)} ms; ceilings: two serial CLIs on halves of the seeds ${speedup(t.halves as ChildTiming[]).toFixed(2)}x (CPU ${cpu(t.halves as ChildTiming[])} ms), two-thread loop ${spin.toFixed(2)}x; load ${loads.slice(-reps).join('/')}`,
      });
      rows.push(rowFor('--jobs 2', t.jobs2 as ChildTiming[]));
      if (before) rows.push(rowFor(`--jobs 2 of ${before}`, t.before as ChildTiming[]));
    }
    rows.push({
      group: 'seeds',
      name: 'two-thread ceiling: 2 loop units on 1 thread vs 1 on each of 2',
      ms: median(ceiling.two.map((s) => s.wallMs)),
      floor_ms: median(ceiling.one.map((s) => s.wallMs)),
      ratio: median(ceiling.one.map((s, i) => s.wallMs / (ceiling.two[i] as ChildTiming).wallMs)),
      note: `what two threads gained on this machine in this run (2x on an idle 2-core machine); load ${loads.join('/')}`,
    });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return rows;
}
