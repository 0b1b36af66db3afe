/**
 * How the CLI reports an error: one line on stderr and an exit code. The code comes from the error's
 * kind (`LAB_ERROR_KIND` in core/errors.ts): 2 for usage errors (anything wrong on the command line),
 * 1 for run-time failures and for anything that is not a LabError (an internal error).
 */
import { isLabError, LAB_ERROR_KIND } from '../core/errors.js';

/** Exit code for a usage error (bad command line). */
export const EXIT_USAGE = 2;
/** Exit code for a failure at run time. */
export const EXIT_RUNTIME = 1;

/**
 * A message on one line: line breaks inside it (e.g. a JSON parse error quoting a file's text) become
 * the two characters `\n`, so a log line is one error and `grep` finds it whole.
 */
export function oneLine(message: string): string {
  return message.replace(/\r\n|\r|\n/g, '\\n');
}

/**
 * `labs: error [CODE]: message` for a LabError, `labs: internal error: message (run again with
 * --debug for the stack trace)` otherwise (without the hint when `debug`); always one line.
 */
export function errorLine(e: unknown, debug = false): string {
  if (isLabError(e)) return `labs: error [${e.code}]: ${oneLine(e.message)}`;
  const message = (e as Error)?.message ?? String(e);
  const hint = debug ? '' : ' (run again with --debug for the stack trace)';
  return `labs: internal error: ${oneLine(message)}${hint}`;
}

/** The exit codes as `labs --help` states them. */
export const EXIT_CODES_HELP =
  'Exit codes: 0 success; 1 failure while running (unreadable or malformed input, a failing check);\n' +
  '2 usage error: anything wrong on the command line (unknown command, option, experiment or --set\n' +
  'key, a value out of its range such as --seed abc or --set lr=abc, options that contradict each other).';

/** 2 for a usage error, 1 for everything else. */
export function exitCodeFor(e: unknown): number {
  return isLabError(e) && LAB_ERROR_KIND[e.code] === 'usage' ? EXIT_USAGE : EXIT_RUNTIME;
}
