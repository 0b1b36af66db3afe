/**
 * Ctrl-C (SIGINT): one line on stderr saying what was and was not written, then exit 130 (128 + 2,
 * the shell's code for a process ended by SIGINT). Exiting runs the `exit` handlers: an output
 * directory's lock is removed, and the directories the command created, if still empty
 * (outputLock.ts). Commands report every file they finish writing with {@link noteWritten}; records
 * and pages are written atomically (temp file + rename), so a file is either whole or absent.
 *
 * The handler runs when the event loop turns, which a seed computing synchronously on the main
 * thread never lets it do (a neural seed takes 20-70 s). {@link runBreakingOnInterrupt} runs such a
 * computation with V8 told to stop it on SIGINT, so a single-seed `labs run` answers within
 * milliseconds too (docs/bench.md, "Ctrl-C during a single seed"), and so does a `--seeds` run
 * while the main thread computes one of its seeds (experiments/multiSeed.ts `interruptible`,
 * runtime/seedPool.ts); the seeds finished before are kept.
 */
import { createRequire } from 'node:module';
import { isTerminal } from './terminal.js';

const written: string[] = [];

/** Records that `path` has been written completely (for the interrupt's message). */
export function noteWritten(path: string): void {
  written.push(path);
}

/** Per-seed records kept so far, by their `seeds/` directory (src/cli/commands/seedJobs.ts). */
const seedRecords = new Map<string, number>();

/** Records that one per-seed record has been written completely into `seedsDir`. */
export function noteSeedRecord(seedsDir: string): void {
  seedRecords.set(seedsDir, (seedRecords.get(seedsDir) ?? 0) + 1);
}

/** The line printed on an interrupt. */
export function interruptLine(): string {
  const parts = [...seedRecords].map(
    ([dir, n]) => `kept ${n} finished seed record(s) in ${dir} (the same command resumes)`,
  );
  if (written.length > 0) parts.push(`written before the interrupt: ${written.join(', ')}`);
  return parts.length === 0
    ? 'labs: interrupted (Ctrl-C); nothing was written'
    : `labs: interrupted (Ctrl-C); ${parts.join('; ')}; nothing else was written`;
}

/** Prints the interrupt's line and exits 130 (the `exit` handlers run: locks, empty directories). */
function exitInterrupted(): never {
  // Clear a progress bar's line first, so the message starts at the margin.
  process.stderr.write(`${isTerminal(2) ? '\r\x1b[2K' : ''}${interruptLine()}\n`);
  process.exit(130);
}

/** Installs the SIGINT handler (once per process). */
export function exitOnInterrupt(): void {
  process.once('SIGINT', exitInterrupted);
}

/** Where {@link runBreakingOnInterrupt} leaves the call for its one-line script to make. */
const CALL = Symbol.for('reasoning-rl-labs.interruptibleCall');

/**
 * Calls `compute()` so that a SIGINT arriving while it runs synchronously stops it at once: the
 * interrupt's line is printed and the process exits 130, as from {@link exitOnInterrupt}'s handler.
 * Returns what `compute` returns; an error it throws propagates unchanged.
 *
 * How: `vm.Script#runInThisContext({ breakOnSigint: true })` (Node's own mechanism, the one the REPL
 * uses) makes a small script call `compute`; while it runs, a watchdog thread of Node's catches
 * SIGINT and has V8 terminate the JavaScript that is running (no `catch` or `finally` in it runs),
 * and the script throws ERR_SCRIPT_EXECUTION_INTERRUPTED. Only the synchronous part is covered: an
 * experiment's `run` has no `await`, so that is all of it; code after an `await` would run later,
 * where {@link exitOnInterrupt}'s handler answers instead (process.on('SIGINT') handlers are off
 * while the script runs and back after it). Costs one tiny script compile and the watchdog thread's
 * start (measured in docs/bench.md); nothing else about the computation changes (the experiment's
 * code is compiled and optimised as before, its records are byte-identical).
 *
 * Why not a worker thread (keeping the main thread free for the handler): a worker costs 100-250 ms
 * to start and load the experiment, which the start-up bench's single agent seed would pay every
 * time (docs/bench.md).
 */
export function runBreakingOnInterrupt<T>(compute: () => T): T {
  const { Script } = createRequire(import.meta.url)('node:vm') as typeof import('node:vm');
  const global = globalThis as unknown as Record<symbol, unknown>;
  global[CALL] = compute;
  try {
    return new Script(`globalThis[Symbol.for(${JSON.stringify(CALL.description)})]()`).runInThisContext({
      breakOnSigint: true,
    }) as T;
  } catch (e) {
    if ((e as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') exitInterrupted();
    throw e;
  } finally {
    delete global[CALL];
  }
}
