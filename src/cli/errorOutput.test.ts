import { describe, expect, it } from 'vitest';
import { LAB_ERROR_KIND, LabError, type LabErrorCode } from '../core/errors.js';
import { errorLine, exitCodeFor, oneLine } from './errorOutput.js';

describe('CLI error output', () => {
  it('exit code 2 exactly for the usage codes, 1 for every other code and non-LabErrors', () => {
    const usage = (Object.keys(LAB_ERROR_KIND) as LabErrorCode[]).filter(
      (c) => exitCodeFor(new LabError(c, 'x')) === 2,
    );
    expect(usage.sort()).toEqual([
      'BAD_CLI',
      'BAD_OPTION_VALUE',
      'BAD_SEED_RECORD',
      'UNKNOWN_EXPERIMENT',
      'UNKNOWN_OPTION',
    ]);
    expect(exitCodeFor(new LabError('IO_ERROR', 'x'))).toBe(1);
    expect(exitCodeFor(new TypeError('boom'))).toBe(1);
    expect(exitCodeFor('a string')).toBe(1);
  });

  it('prints every error on one line: line breaks in the message become \\n', () => {
    const parse = new LabError(
      'PARSE_ERROR',
      'f.json: not valid JSON (Unexpected token, "{\n  oops\r\n}" is not valid JSON)',
    );
    const line = errorLine(parse);
    expect(line).toBe(
      'labs: error [PARSE_ERROR]: f.json: not valid JSON (Unexpected token, "{\\n  oops\\n}" is not valid JSON)',
    );
    expect(line).not.toMatch(/[\r\n]/);
    expect(errorLine(new Error('a\nb'))).toBe(
      'labs: internal error: a\\nb (run again with --debug for the stack trace)',
    );
    expect(errorLine(new Error('a'), true)).toBe('labs: internal error: a');
    expect(oneLine('x\ry')).toBe('x\\ny');
  });
});
