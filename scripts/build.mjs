#!/usr/bin/env node
// `npm run build` (also run by `npm test` before the tests, as pretest, and by `npm pack`/`npm publish`
// as prepack; not by `prepare`, which npm flags as an install script in every project that installs
// the package). Into one directory (default dist/):
// 1. tsc: the library (dist/index.js and its modules) with declarations; src/cli is left to esbuild;
// 2. esbuild: the CLI (src/cli/main.ts and everything it imports, zod and commander included) as one
//    CommonJS function in dist/cli/labs.bundle.js; its last line carries a hash of its text;
//    and the grammar alone (parse.ts, commander) in dist/cli/labs.grammar.js, for `labs --help`;
// 3. esbuild: the `labs` bin, dist/cli/main.js (src/cli/runtime/bin.ts: answers --version and --help, runs `labs run`
//    from the bundle through vm.Script with V8's code cache, and imports cli.ts for every other
//    command), as one CommonJS file (dist/cli/package.json says so): Node loads a CommonJS entry
//    without its ES module loader, whose thirty-odd modules (streams, readline, fs/promises) cost
//    every start. cli.ts and the worker thread of `--jobs` are ES modules, dist/cli/cli.mjs and
//    dist/cli/seedWorker.mjs, with the chunks they load on demand (dist/cli/<name>-<hash>.mjs).
//    seedPool.ts finds the worker as './seedWorker.mjs' next to its own file (the bundle or a
//    chunk);
// 4. the code cache: runs the built `labs run --experiment agent --seed 7` once (into a temporary
//    directory) with LABS_WRITE_CODE_CACHE=1, which saves the bytecode V8 compiled for it as
//    dist/cli/labs.bundle.<hash>.v8cache. Later starts deserialise it instead of compiling.
// Why (docs/bench-startup.md): Node 20 compiles ES modules afresh at every start and has no compile
// cache for them; the chunked ES module CLI spent ~100 ms of CPU (on the loaded 2-core VM) reading,
// linking and compiling its modules before the experiment started. Zod's 40 non-English locales
// are left out of the bundle (the CLI never switches zod's locale; its messages are zod's English
// ones, which `en` is).
// Native and rendering-only packages stay external: the bundle import()s them through the bin.
// `node scripts/build.mjs DIR` builds into DIR instead (tests build a private copy);
// `--cli-only` skips step 1 (the CLI does not need it).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

const args = process.argv.slice(2);
const cliOnly = args.includes('--cli-only');
const outDir = args.find((a) => !a.startsWith('--')) ?? 'dist';
const cliDir = join(outDir, 'cli');
const EXTERNAL = ['@duckdb/node-api', '@resvg/resvg-js', 'linkedom', '@observablehq/plot'];

if (!cliOnly) {
  rmSync(outDir, { recursive: true, force: true });
  const tsc = spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json', '--outDir', outDir], {
    stdio: 'inherit',
  });
  if (tsc.status !== 0) process.exit(tsc.status ?? 1);
}

/** zod's locale index with only `en` (the default, which zod's own setup installs). */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: 'js',
    }));
  },
};

/**
 * commander requires node:child_process at load, only to spawn executable subcommands, which this CLI
 * has none of; loading it pulls in net, dgram and their helpers, several ms of every start. Its
 * require from commander gets a stand-in that loads the real module on first use.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]/.test(args.importer)
        ? { path: 'child_process', namespace: 'lazy-builtin' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, () => ({
      contents:
        "let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require('node:child_process'))[key] });",
      loader: 'js',
    }));
  },
};

// 2. The CLI as one CommonJS function (see src/cli/runtime/bin.ts for its parameters).
const bundled = await build({
  entryPoints: ['src/cli/main.ts'],
  write: false,
  outfile: join(cliDir, 'labs.bundle.js'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external: EXTERNAL,
  plugins: [zodEnglishOnly, lazyChildProcess],
  // A quarter less text to read at every start (names are kept, so stack traces still read).
  minifyWhitespace: true,
  // seedPool.ts finds the worker next to `import.meta.url`: here, the bundle's own file.
  define: { 'import.meta.url': '__labsBundleUrl' },
  banner: { js: 'var __labsBundleUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
});
let code = (bundled.outputFiles[0]?.text ?? '').replace(/^#!.*\n/, '');
// The external packages are ES modules: `import(x)` inside vm.Script would need an experimental vm
// option, so the bundle calls the bin's importExternal instead. Any other import() is a build error.
const externalImport = new RegExp(
  `\\bimport\\((["'])(${EXTERNAL.map((e) => e.replace('/', '\\/')).join('|')})\\1\\)`,
  'g',
);
code = code.replace(externalImport, 'importExternal($1$2$1)');
const stray = /\bimport\(\s*["'`]/.exec(code);
if (stray) {
  throw new Error(
    `build: the CLI bundle still has an import() at ${code.slice(stray.index, stray.index + 60)}`,
  );
}
// Strict mode, as the ES modules it was bundled from (and the chunked ES module build before it) ran.
const wrapped = `(function (exports, require, module, __filename, __dirname, importExternal) {"use strict";${code}\n})`;
const id = createHash('sha256').update(wrapped).digest('hex').slice(0, 16);
rmSync(cliDir, { recursive: true, force: true }); // no chunk of an earlier build stays behind
mkdirSync(cliDir, { recursive: true });
writeFileSync(join(cliDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
writeFileSync(join(cliDir, 'labs.bundle.js'), `${wrapped}\n//# labs-bundle-id ${id}\n`);

// 2b. The grammar alone (parse.ts and commander), one CommonJS file: the bin answers `labs --help`
//     from it without the ES module chunks (src/cli/runtime/bin.ts, printHelp).
await build({
  entryPoints: ['src/cli/parse.ts'],
  outfile: join(cliDir, 'labs.grammar.js'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  external: EXTERNAL,
  plugins: [zodEnglishOnly, lazyChildProcess],
  define: { 'import.meta.url': '__labsGrammarUrl' },
  banner: { js: 'var __labsGrammarUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
});

// 3a. The bin: one CommonJS file. Its `import('../cli.js')` loads the ES module build of 3b.
await build({
  entryPoints: ['src/cli/runtime/bin.ts'],
  outfile: join(cliDir, 'main.js'),
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  plugins: [
    {
      name: 'cli-as-es-module',
      setup(b) {
        b.onResolve({ filter: /^\.\.\/cli\.js$/ }, () => ({ path: './cli.mjs', external: true }));
      },
    },
  ],
  define: { 'import.meta.url': '__labsBinUrl' },
  banner: { js: 'var __labsBinUrl = require("node:url").pathToFileURL(__filename).href;' },
  logLevel: 'warning',
});

// 3b. cli.ts (every command but `run`) and the worker thread, as ES modules with shared chunks.
await build({
  entryPoints: { 'cli/cli': 'src/cli/cli.ts', 'cli/seedWorker': 'src/cli/runtime/seedWorker.ts' },
  outdir: outDir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  chunkNames: 'cli/[name]-[hash]',
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  minifyWhitespace: true,
  external: EXTERNAL,
  plugins: [zodEnglishOnly, lazyChildProcess],
  // commander is CommonJS: give its require() calls one in the ES module bundle.
  banner: {
    js: "import { createRequire as __labsCreateRequire } from 'node:module'; const require = __labsCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

// 4. The code cache, from one run of the built CLI (older caches of this directory removed first).
for (const f of readdirSync(cliDir)) if (f.endsWith('.v8cache')) rmSync(join(cliDir, f));
const scratch = mkdtempSync(join(tmpdir(), 'labs-build-'));
try {
  const warm = spawnSync(
    process.execPath,
    [
      join(cliDir, 'main.js'),
      'run',
      '--experiment',
      'agent',
      '--seed',
      '7',
      '--out',
      scratch,
      '--no-progress',
    ],
    { encoding: 'utf8', env: { ...process.env, LABS_WRITE_CODE_CACHE: '1' } },
  );
  if (warm.status !== 0)
    throw new Error(`build: the built CLI failed (exit ${warm.status}):\n${warm.stderr}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
if (!readdirSync(cliDir).some((f) => f.endsWith('.v8cache'))) {
  throw new Error(`build: the built CLI ran but wrote no code cache into ${cliDir}`);
}
process.stdout.write(
  `built ${join(cliDir, 'main.js')} (bin), ${join(cliDir, 'labs.bundle.js')} with its code cache, and the library under ${outDir}/\n`,
);
