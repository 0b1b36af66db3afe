/**
 * The project's seed pool (src/cli/runtime/seedPool.ts) against kept pool libraries (tinypool,
 * piscina) on the same seeds, for docs/bench.md ("The start-up and seed-pool machinery"). Not part
 * of `npm run bench` (the libraries are not dependencies): install them in a scratch directory and
 * point LABS_POOL_LIBS at it:
 *
 *     mkdir -p /tmp/pooltry && (cd /tmp/pooltry && npm init -y && npm i tinypool piscina)
 *     LABS_POOL_LIBS=/tmp/pooltry npx tsx bench/pool/libraries.ts [pairs=3] [modes] [configs]
 *
 * It builds the CLI into a scratch directory (scripts/build.mjs, for the project's worker,
 * seedWorker.mjs) and bundles bench/pool/child.ts and bench/pool/worker.ts beside it with the same
 * esbuild settings, then times one child process per (config, mode), rotating the order from round
 * to round: wall and CPU (user + system, all threads) medians, the speed-up over `serial` from the
 * medians, and a check that every mode's records are the same bytes (timing aside).
 * Modes (bench/pool/child.ts): serial, project, project-now, tinypool-w1, tinypool-w2, piscina-w2.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { table } from '../../src/experiments/text.js';
import { type ChildTiming, loadAverage, timeNode } from '../childTiming.js';
import { median } from '../timing.js';

const pairs = Number(process.argv[2] ?? 3);
const modes = (process.argv[3] ?? 'serial,project,project-now,tinypool-w1,tinypool-w2,piscina-w2').split(',');
const CONFIGS: Record<string, string[]> = {
  'agent 1..4': ['agent', '4'],
  'agent 1..16': ['agent', '16'],
  'mask 1..4': ['mask', '4'],
  'mask 1..16': ['mask', '16'],
};
const configs = (process.argv[4]?.split(',') ?? Object.keys(CONFIGS)).map(
  (c) => [c, CONFIGS[c] ?? []] as const,
);
const libs = process.env.LABS_POOL_LIBS;
if (!libs && modes.some((m) => /^(tinypool|piscina)/.test(m))) {
  process.stderr.write(
    'bench/pool/libraries.ts: set LABS_POOL_LIBS to a directory where tinypool and piscina are installed\n',
  );
  process.exit(2);
}

const dir = mkdtempSync(join(tmpdir(), 'labs-pool-'));
try {
  const built = spawnSync(process.execPath, ['scripts/build.mjs', dir, '--cli-only'], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`build failed: ${built.stderr}`);
  /** As scripts/build.mjs: zod's locale index with only `en`. */
  const zodEnglishOnly = {
    name: 'zod-english-only',
    setup(b: import('esbuild').PluginBuild) {
      b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
        contents: 'export { default as en } from "./en.js";',
        loader: 'js',
      }));
    },
  };
  await build({
    entryPoints: { child: 'bench/pool/child.ts', worker: 'bench/pool/worker.ts' },
    outdir: dir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minifyWhitespace: true,
    plugins: [zodEnglishOnly],
    banner: {
      js: "import { createRequire as __labsCreateRequire } from 'node:module'; const require = __labsCreateRequire(import.meta.url);",
    },
    logLevel: 'warning',
  });
  const env = { LABS_POOL_BUILD: dir, LABS_POOL_LIBS: libs ?? '' };
  const rows: string[][] = [];
  const loads: string[] = [];
  for (const [label, args] of configs) {
    const times = new Map<string, ChildTiming[]>(modes.map((m) => [m, []]));
    const hashes = new Map<string, Set<string>>();
    for (let round = 0; round < pairs; round++) {
      loads.push(loadAverage());
      // rotate the order, so a load spike does not always hit the same mode
      const order = modes.map((_, i) => modes[(i + round) % modes.length] as string);
      for (const mode of order) {
        const t = timeNode([join(dir, 'child.mjs'), mode, ...args], env);
        times.get(mode)?.push(t);
        const hash = /^records (\w+)$/m.exec(t.stderr)?.[1] ?? '?';
        hashes.set(hash, (hashes.get(hash) ?? new Set()).add(mode));
      }
    }
    const wall = (m: string) => median((times.get(m) ?? []).map((t) => t.wallMs));
    const cpu = (m: string) => median((times.get(m) ?? []).map((t) => t.cpuMs));
    for (const m of modes) {
      rows.push([
        label,
        m,
        wall(m).toFixed(0),
        cpu(m).toFixed(0),
        `${(wall('serial') / wall(m)).toFixed(2)}x`,
        hashes.size === 1 ? 'same' : 'DIFFER',
      ]);
    }
  }
  process.stdout.write(
    `${table(['seeds', 'mode', 'wall ms', 'CPU ms', 'speed-up (serial wall / wall)', 'records'], rows)}\n` +
      `${pairs} rounds, medians; one-minute load ${loads.join(', ')}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
