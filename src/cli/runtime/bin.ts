#!/usr/bin/env node
/**
 * The installed `labs` (dist/cli/main.js; `npm run build` makes it from this file). It answers
 * `labs --version` at once. `labs run ...` runs the whole CLI (main.ts, cli.ts and all they import),
 * which the build bundled into one CommonJS function, dist/cli/labs.bundle.js, through `vm.Script`
 * with V8's code cache: the bytecode of every function the build's own `labs run --experiment agent`
 * compiled, written next to the bundle by `npm run build` (dist/cli/labs.bundle.<id>.v8cache). V8
 * then deserialises that bytecode instead of parsing and compiling ~0.9 MB of JavaScript (zod,
 * commander, the experiment) at every start; Node 20 has no compile cache for ES modules
 * (`module.enableCompileCache` is Node >= 22.1).
 * docs/bench-startup.md has the measurements.
 *
 * Safe by construction: the cache's name carries a hash of the bundle's text (the last line of the
 * bundle), so a cache from another build is never read, and V8 itself refuses a cache made by another
 * V8 version or with other V8 flags (`cachedDataRejected`), in which case it simply compiles the
 * source as usual. Other commands run cli.ts from this file and its ES module chunks (see the end).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../../experiments/version.js';
import { output } from '../stdout.js';
import { BUNDLE_FILE, bundleCacheFile, GRAMMAR_FILE } from './bundleFiles.js';

/** The bundle's signature: it receives these, as a CommonJS module would (see scripts/build.mjs). */
type BundleFunction = (
  exports: object,
  require: NodeJS.Require,
  module: { exports: object },
  __filename: string,
  __dirname: string,
  importExternal: (specifier: string) => Promise<unknown>,
) => void;

/**
 * Runs the bundle through vm.Script with its code cache. Returns false when there is no bundle next to
 * this file (running from source), so the caller runs cli.ts instead.
 */
function runBundle(): boolean {
  const dir = dirname(fileURLToPath(import.meta.url));
  const file = join(dir, BUNDLE_FILE);
  let source: string;
  try {
    source = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const cacheName = bundleCacheFile(source);
  const cacheFile = cacheName ? join(dir, cacheName) : null;
  let cachedData: Buffer | undefined;
  try {
    cachedData = cacheFile ? readFileSync(cacheFile) : undefined;
  } catch {
    cachedData = undefined; // no cache (removed, or never written): compile as usual
  }
  // Loaded only here: `labs --help` and the other commands do not need them.
  const load = createRequire(import.meta.url);
  const { Script } = load('node:vm') as typeof import('node:vm');
  // Keep V8's young generation at its first size instead of letting it double as garbage comes in:
  // on the VMs this was measured on a never-touched page costs ~12 us to fault in, more than
  // scavenging a small young generation more often. `labs run -e agent --seed 7` then faults in
  // ~1,300 fewer pages and spends less CPU; longer runs gain too (docs/bench-startup.md). It is set
  // before the bundle compiles, as in the build's run that wrote the code cache: V8 rejects a cache
  // made under other flags.
  (load('node:v8') as typeof import('node:v8')).setFlagsFromString('--semi-space-growth-factor=1');
  const script = new Script(source, { filename: file, cachedData });
  if (cacheFile && process.env.LABS_WRITE_CODE_CACHE === '1') {
    // `npm run build` only: after this run, save the bytecode of everything it compiled (a
    // directory that cannot be written only means no cache, never a failed command).
    process.once('exit', () => {
      try {
        writeFileSync(cacheFile, script.createCachedData());
      } catch (e) {
        process.stderr.write(`labs: could not write the code cache ${cacheFile}: ${(e as Error).message}\n`);
      }
    });
  }
  if (process.env.LABS_STARTUP_MARKS && cachedData) {
    process.stderr.write(`code cache ${cacheFile}: ${script.cachedDataRejected ? 'rejected' : 'used'}\n`);
  }
  const run = script.runInThisContext() as BundleFunction;
  const module = { exports: {} };
  // The packages the bundle leaves external are ES modules: import() them from here (a real module).
  run(module.exports, createRequire(file), module, file, dir, (specifier) => import(specifier));
  return true;
}

/**
 * `labs --help` (and `labs` alone, `labs help`, `labs run --help`, ...): the help text from
 * dist/cli/labs.grammar.js, the command-line grammar (parse.ts and commander) that the build writes
 * as one CommonJS file, so that help needs neither the ES module chunks nor Node's ES module loader.
 * Returns false, for cli.ts to answer, when there is no such file (running from source), when the
 * command line is not a plain help request (`labs run -e NAME --help` lists that experiment's
 * options, which the grammar alone does not know), or when it is wrong (cli.ts reports the error).
 */
function printHelp(args: string[]): boolean {
  let parsed: ReturnType<typeof import('../parse.js').parseCli>;
  try {
    const grammar = createRequire(import.meta.url)(`./${GRAMMAR_FILE}`) as typeof import('../parse.js');
    parsed = grammar.parseCli(args);
  } catch {
    return false;
  }
  if (parsed.command !== 'help' || parsed.experiment) return false;
  output.write(parsed.text.endsWith('\n') ? parsed.text : `${parsed.text}\n`);
  return true;
}

const argv = process.argv.slice(2);
const asksForHelp = argv.length === 0 || argv[0] === 'help' || argv.includes('--help') || argv.includes('-h');
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  // Same answer as cli.ts gives, without loading anything.
  output.write(`${VERSION}\n`);
} else if (asksForHelp && printHelp(argv)) {
  // answered from the grammar alone
} else if (argv[0] !== 'run' || !runBundle()) {
  // Every other command (list, audit, report, compare, conformance) starts faster from the ES
  // module chunks, which load only what the command needs: the cache holds all of `run`'s code.
  // Imported here, not at the top, so that `labs run` does not load those chunks at all.
  import('../cli.js').then(({ runCli }) => runCli(argv));
}
