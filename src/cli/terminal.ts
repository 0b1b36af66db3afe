/**
 * Whether standard output or error is a terminal, without building Node's stream for it when it
 * cannot be one: the first use of `process.stdout` / `process.stderr` loads about twenty of Node's
 * modules (the net modules too for a pipe), a few ms of a command that prints once. A pipe or a file
 * is not a character device, so fstat answers for them; a character device (a TTY, or /dev/null)
 * is then asked properly.
 */
import { fstatSync } from 'node:fs';

/** True when file descriptor `fd` (1 or 2) is a terminal. */
export function isTerminal(fd: 1 | 2): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return (fd === 1 ? process.stdout : process.stderr).isTTY === true;
}

/** The terminal's width in columns when standard output is a terminal, else undefined. */
export function terminalColumns(): number | undefined {
  return isTerminal(1) ? process.stdout.columns : undefined;
}
