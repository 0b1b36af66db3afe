/**
 * Ctrl-C (SIGINT): one line on stderr saying what was and was not written, then exit 130 (128 + 2,
 * the shell's code for a process ended by SIGINT). Exiting runs the `exit` handlers: an output
 * directory's lock is removed, and the directories the command created, if still empty
 * (outputLock.ts). Commands report every file they finish writing with {@link noteWritten}; records
 * and pages are written atomically (temp file + rename), so a file is either whole or absent.
 */
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

/** Installs the SIGINT handler (once per process). */
export function exitOnInterrupt(): void {
  process.once('SIGINT', () => {
    // Clear a progress bar's line first, so the message starts at the margin.
    process.stderr.write(`${isTerminal(2) ? '\r\x1b[2K' : ''}${interruptLine()}\n`);
    process.exit(130);
  });
}
