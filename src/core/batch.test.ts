import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labErrorOf } from '../../test/support/labError.js';
import {
  checkFinite,
  checkFiniteWhereMasked,
  checkLabels,
  checkLength,
  checkMask,
  checkOutNotAliased,
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

describe('checkOutNotAliased', () => {
  const buffer = new ArrayBuffer(64);
  const input = new Float32Array(buffer, 16, 4); // bytes [16, 32)

  it('names the output option and the input it overlaps, whole or in part', () => {
    for (const out of [
      input,
      new Float32Array(buffer, 16, 4),
      new Float32Array(buffer, 28, 2),
      new Float64Array(buffer, 8, 2),
    ]) {
      const e = labErrorOf(() =>
        checkOutNotAliased(out, 'outReturns', { values: new Float32Array(4), token_level_rewards: input }),
      );
      expect(e.code).toBe('BAD_ARGUMENT');
      expect(e.message).toBe('outReturns: shares memory with token_level_rewards; pass a separate buffer');
      expect(e.details).toEqual({ field: 'outReturns', input: 'token_level_rewards' });
    }
  });

  it('accepts disjoint pieces of the same buffer, adjacent ones included, and other buffers', () => {
    expect(() => checkOutNotAliased(new Float32Array(buffer, 0, 4), 'out', { x: input })).not.toThrow();
    expect(() => checkOutNotAliased(new Float32Array(buffer, 32, 8), 'out', { x: input })).not.toThrow();
    expect(() => checkOutNotAliased(new Float32Array(4), 'out', { x: input })).not.toThrow();
  });

  it('compares bytes across element types (a uint8 mask under a float32 output)', () => {
    const mask = new Uint8Array(buffer, 40, 4);
    const e = labErrorOf(() =>
      checkOutNotAliased(new Float32Array(buffer, 36, 2), 'out', { response_mask: mask }),
    );
    expect(e.message).toContain('out: shares memory with response_mask');
  });

  it('skips what is not a typed array, and empty views', () => {
    const entries = {
      index: ['a', 'b'],
      weights: null,
      scores: [1, 2],
      none: undefined,
      empty: new Float32Array(buffer, 20, 0),
    };
    expect(() => checkOutNotAliased(input, 'out', entries)).not.toThrow();
    expect(() => checkOutNotAliased(null, 'out', { x: input })).not.toThrow();
    expect(() => checkOutNotAliased(undefined, 'out', { x: input })).not.toThrow();
    expect(() => checkOutNotAliased(new Float32Array(buffer, 16, 0), 'out', { x: input })).not.toThrow();
  });

  it('property: throws exactly when the two byte ranges intersect', () => {
    fc.assert(
      fc.property(fc.nat(15), fc.nat(16), fc.nat(15), fc.nat(16), (a, la, b, lb) => {
        const big = new ArrayBuffer(32 * 4);
        const out = new Float32Array(big, a * 4, la);
        const x = new Float32Array(big, b * 4, lb);
        const overlap = la > 0 && lb > 0 && a < b + lb && b < a + la;
        const threw = (() => {
          try {
            checkOutNotAliased(out, 'out', { x });
            return false;
          } catch {
            return true;
          }
        })();
        expect(threw).toBe(overlap);
      }),
    );
  });
});
