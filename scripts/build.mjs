#!/usr/bin/env node
// `npm run build` (and `prepare`, so `npm ci` builds too). Two steps into one directory (default dist/):
// 1. tsc: the library (dist/index.js and its modules) with declarations, as before;
// 2. esbuild: the CLI re-emitted as one bundled entry, dist/cli/main.js, plus the worker thread of
//    `--jobs` (dist/cli/seedWorker.js) and the chunks both load on demand (dist/cli/<name>-<hash>.js,
//    one per lazily imported command or experiment, and shared ones). Node then reads a few files
//    instead of dozens of small modules (zod alone is ~35) at start-up, which was most of the CLI's
//    start-up time, and `labs --help` never reads the experiments or zod (docs/bench-startup.md).
//    One file without chunks was measured too: V8 then parses all 1.4 MB on every start (~80 ms of
//    CPU more for --version). The chunks sit next to the entries because seedPool.ts finds the
//    worker as './seedWorker.js' relative to its own (chunk) URL.
// Native and rendering-only packages stay external (resolved from node_modules at run time).
// `node scripts/build.mjs DIR` builds into DIR instead (tests build a private copy);
// `--cli-only` skips step 1 (the bundled CLI does not need it).
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const args = process.argv.slice(2);
const cliOnly = args.includes('--cli-only');
const outDir = args.find((a) => !a.startsWith('--')) ?? 'dist';

if (!cliOnly) {
  rmSync(outDir, { recursive: true, force: true });
  const tsc = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', outDir], {
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}

await build({
  entryPoints: { 'cli/main': 'src/cli/main.ts', 'cli/seedWorker': 'src/cli/seedWorker.ts' },
  outdir: outDir,
  bundle: true,
  splitting: true,
  chunkNames: 'cli/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  external: ['@duckdb/node-api', '@resvg/resvg-js', 'linkedom', '@observablehq/plot'],
  // commander is CommonJS: give its require() calls one in the ES module bundle.
  banner: {
    js: "import { createRequire as __labsCreateRequire } from 'node:module'; const require = __labsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
process.stdout.write(`built ${join(outDir, 'cli', 'main.js')} (bundled) and the library under ${outDir}/\n`);
