/**
 * Test helper: the one way tests assert a LabError (code + a piece of the message that names the field
 * and position), instead of a try/catch block copied into every test file.
 */
import { expect } from 'vitest';
import { isLabError, type LabError, type LabErrorCode } from '../../src/core/errors.js';

/**
 * Calls `fn` and asserts that it throws a LabError with `code` whose message contains every one of
 * `fragments` (e.g. the field and the position: `'log_prob', 'row 1, token 1'`). Returns the error for
 * further checks (details, cause).
 */
export function expectLabError(fn: () => unknown, code: LabErrorCode, ...fragments: string[]): LabError {
  let err: unknown;
  try {
    fn();
  } catch (e) {
    err = e;
  }
  expect(isLabError(err) ? err.code : `no LabError (${String(err)})`).toBe(code);
  for (const text of fragments) expect((err as LabError).message).toContain(text);
  return err as LabError;
}

/** Calls `fn` and returns the LabError it throws; fails the test if it throws nothing or anything else. */
export function labErrorOf(fn: () => unknown): LabError {
  try {
    fn();
  } catch (e) {
    if (isLabError(e)) return e;
    throw new Error(`expected a LabError, got ${String(e)}`);
  }
  throw new Error('expected a LabError, nothing was thrown');
}

/**
 * `'<code>: <message>'` of the LabError `fn` throws (for one regex over both), a `non-LabError …` text
 * for any other error, undefined when nothing is thrown.
 */
export function labErrorText(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isLabError(e) ? `${e.code}: ${e.message}` : `non-LabError ${String(e)}`;
  }
  return undefined;
}
