import { describe, expect, it } from 'vitest';
import { labErrorOf } from '../../test/support/labError.js';
import {
  checkFinite,
  checkFiniteWhereMasked,
  checkLabels,
  checkLength,
  checkMask,
  checkShape,
} from './batch.js';

describe('batch validation', () => {
  it('names the field, row and token of the first non-finite value', () => {
    const e = labErrorOf(() => checkFinite(Float32Array.of(0, 1, 2, Number.NaN, 4, 5), 3, 'log_prob'));
    expect(e.code).toBe('NON_FINITE');
    expect(e.message).toBe('log_prob: value NaN at row 1, token 0 is not finite');
    expect(e.details).toMatchObject({ field: 'log_prob', row: 1, token: 0 });
  });

  it('ignores non-finite values under a 0 mask only in the masked variant', () => {
    const x = Float32Array.of(1, Number.POSITIVE_INFINITY);
    expect(() => checkFiniteWhereMasked(x, Uint8Array.of(1, 0), 2, 'old_log_prob')).not.toThrow();
    expect(
      labErrorOf(() => checkFiniteWhereMasked(x, Uint8Array.of(1, 1), 2, 'old_log_prob')).message,
    ).toContain('token 1');
  });

  it('rejects masks that are not exactly 0/1, naming position', () => {
    const e = labErrorOf(() => checkMask(Float32Array.of(1, 1, 0.5, 0), 2, 'response_mask'));
    expect(e.code).toBe('BAD_MASK');
    expect(e.message).toBe('response_mask: value 0.5 at row 1, token 0 is not 0 or 1');
  });

  it('rejects length and label mismatches', () => {
    expect(labErrorOf(() => checkLength(new Float32Array(5), 6, 'advantages', '[2,3]')).message).toBe(
      'advantages: expected 6 values for shape [2,3], got 5',
    );
    const e = labErrorOf(() => checkLabels(['a', 'b'], 3, 'index'));
    expect(e.code).toBe('SHAPE_MISMATCH');
    expect(e.message).toContain('index');
    expect(labErrorOf(() => checkLabels(['a', Number.NaN], 2)).message).toContain('row 1');
    expect(labErrorOf(() => checkShape({ rows: 0, cols: 3 }, 'token_level_rewards')).code).toBe(
      'SHAPE_MISMATCH',
    );
  });
});
