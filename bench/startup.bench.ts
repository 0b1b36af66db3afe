/**
 * CLI start-up: the built CLI (`node dist/cli/main.js ...`, `npm run build` first) against the floor
 * `node -e ""` (Node's own start), in paired runs: each repeat runs the floor and the command back to
 * back, alternating which goes first, and the ratio is the median of the per-pair ratios, so a load
 * spike on the shared machine hits both sides of a pair. Wall and CPU (user + system) are reported.
 * `labs run --experiment agent --seed 7` writes its record into a temporary --out directory.
 * LABS_BENCH_REPS=n sets the repeats (default 15); LABS_BENCH_BEFORE=DIR also times the build in
 * DIR (e.g. an older commit's) in the same pairs.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtCli, type ChildTiming, loadAverage, timeNode as timeChild } from './childTiming.js';
import type { BenchRow } from './run.js';
import { median } from './timing.js';

/**
 * Where the CPU time of `labs run` goes, from the CLI's own marks (LABS_STARTUP_MARKS=1, src/cli/
 * startupMarks.ts), medians of 5 more runs: until the CLI's main() starts (Node, the bin, the bundle
 * and its code cache), the experiment's first (JIT-cold) run, and everything else (parsing, loading
 * the experiment, validating options, writing the record, formatting).
 */
/** The --out of the timed `labs run`, emptied before every child (see timeNode). */
let runOut: string | null = null;

/**
 * timeChild, after removing the previous run's record: labs refuses to replace a record without
 * --force, which an older build given as LABS_BENCH_BEFORE would not know. Not part of the timing.
 */
function timeNode(...a: Parameters<typeof timeChild>): ReturnType<typeof timeChild> {
  if (runOut) rmSync(join(runOut, 'record.json'), { force: true });
  return timeChild(...a);
}

function runBreakdown(cli: string, args: string[]): string {
  const parts: { start: number; experiment: number; rest: number }[] = [];
  for (let i = 0; i < 5; i++) {
    const { stderr } = timeNode([cli, ...args], { LABS_STARTUP_MARKS: '1' });
    const cpuAt = new Map(
      [...stderr.matchAll(/^mark (.+?) [\d.]+ ([\d.]+)(?: -?\d+)?$/gm)].map((m) => [m[1], Number(m[2])]),
    );
    const at = (mark: string) => cpuAt.get(mark) ?? Number.NaN;
    const start = at('main');
    const experiment = at('experiment ran') - at('config resolved');
    parts.push({ start, experiment, rest: at('exit') - start - experiment });
  }
  const m = (k: keyof (typeof parts)[number]) => median(parts.map((p) => p[k])).toFixed(0);
  if (parts.some((p) => Number.isNaN(p.start))) return 'no start-up marks in this build';
  return `CPU ms: to main() ${m('start')}, experiment's first run ${m('experiment')}, rest of the CLI ${m('rest')}`;
}

/** Node's built-in modules `node ...args` loads, listed by bench/moduleProbe.cjs (one run). */
function builtinModules(args: string[], scratch: string): Set<string> {
  const list = join(scratch, 'modules.txt');
  const probe = join(dirname(fileURLToPath(import.meta.url)), 'moduleProbe.cjs');
  timeNode(['-r', probe, ...args], { LABS_MODULE_LIST: list });
  return new Set(readFileSync(list, 'utf8').split('\n').filter(Boolean));
}

export async function run(): Promise<BenchRow[]> {
  // The build under test, and optionally an older one timed in the same pairs (LABS_BENCH_BEFORE=DIR,
  // e.g. the previous commit built into a scratch directory): before/after from one run.
  const builds: [string, string][] = [['', builtCli()]];
  const before = process.env.LABS_BENCH_BEFORE;
  if (before) builds.unshift(['before: ', builtCli(before)]);
  const reps = Number(process.env.LABS_BENCH_REPS ?? 15);
  const out = mkdtempSync(join(tmpdir(), 'labs-startup-'));
  runOut = out;
  const commands: [string, string[]][] = [
    ['labs --version', ['--version']],
    ['labs --help', ['--help']],
    ['labs run --experiment agent --seed 7', ['run', '--experiment', 'agent', '--seed', '7', '--out', out]],
  ];
  const rows: BenchRow[] = [];
  try {
    // How many of Node's own modules each command loads beyond `node -e ""` (each costs compiling).
    const nodeModules = builtinModules(['-e', ''], out);
    const extraModules = (cli: string, args: string[]) =>
      [...builtinModules([cli, ...args], out)].filter((m) => !nodeModules.has(m)).length;
    for (const [name, args] of commands) {
      // One "pair" is the floor and every build, in an order that alternates from repeat to repeat.
      const runs: (() => ChildTiming)[] = [
        () => timeNode(['-e', '']),
        ...builds.map(
          ([, cli]) =>
            () =>
              timeNode([cli, ...args]),
        ),
      ];
      const times: ChildTiming[][] = runs.map(() => []);
      for (const r of runs) r(); // warm the file cache
      for (let i = 0; i < reps; i++) {
        const order = runs.map((_, j) => j);
        if (i % 2 === 1) order.reverse();
        for (const j of order) times[j]?.push((runs[j] as () => ChildTiming)());
      }
      const floors = times[0] as ChildTiming[];
      const cpuFloor = median(floors.map((c) => c.cpuMs));
      builds.forEach(([label, cli], b) => {
        const cmds = times[b + 1] as ChildTiming[];
        const cpu = median(cmds.map((c) => c.cpuMs));
        rows.push({
          group: 'startup',
          name: `${label}${name} vs node -e ""`,
          ms: median(cmds.map((c) => c.wallMs)),
          floor_ms: median(floors.map((c) => c.wallMs)),
          ratio: median(cmds.map((c, i) => c.wallMs / (floors[i] as ChildTiming).wallMs)),
          note: `wall, ${reps} pairs; CPU ${cpu.toFixed(0)} vs ${cpuFloor.toFixed(0)} ms (${(cpu / cpuFloor).toFixed(2)}x); ${extraModules(cli, args)} Node modules beyond node -e; load ${loadAverage()}${args[0] === 'run' ? `; ${runBreakdown(cli, args)}` : ''}`,
        });
      });
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
  return rows;
}
