import { describe, expect, it } from 'vitest';
import type { LabError } from './errors.js';
import { valueLoss } from './valueLoss.js';

describe('valueLoss', () => {
  const shape = { rows: 1, cols: 4 };
  // returns 0; old values 0; vpreds: 0.3 (inside clip), 2 (outside: clipped 0.5, loss max(4, .25) = 4),
  // -1 with old value -2 (clipped to -1.5: (−1.5)² = 2.25 > 1 -> clipped counts), padded garbage
  const vpreds = Float64Array.of(0.3, 2, -1, 99);
  const returns = Float64Array.of(0, 0, 0, 0);
  const values = Float64Array.of(0, 0, -2, 0);
  const mask = Uint8Array.of(1, 1, 1, 0);
  it('0.5 · agg(max((v - R)², (clip(v) - R)²)) and the clip fraction, by hand', () => {
    const r = valueLoss({ vpreds, returns, values, responseMask: mask }, shape, 0.5);
    expect(r.loss).toBeCloseTo((0.5 * (0.09 + 4 + 2.25)) / 3, 9);
    expect(r.clipfrac).toBeCloseTo(1 / 3, 7);
    const s = valueLoss({ vpreds, returns, values, responseMask: mask }, shape, 0.5, 'seq-mean-token-sum');
    expect(s.loss).toBeCloseTo(0.5 * (0.09 + 4 + 2.25), 9);
  });
  it('a huge clip range reduces to plain MSE/2 with no clipping', () => {
    const r = valueLoss({ vpreds, returns, values, responseMask: mask }, shape, 1e9);
    expect(r.loss).toBeCloseTo((0.5 * (0.09 + 4 + 1)) / 3, 9);
    expect(r.clipfrac).toBe(0);
  });
  it('bad input is a LabError naming the field', () => {
    const bad = Float64Array.of(0.3, Number.NaN, -1, 0);
    expect(() => valueLoss({ vpreds: bad, returns, values, responseMask: mask }, shape, 0.5)).toThrow(
      /vpreds: value NaN at row 0, token 1/,
    );
    expect(() => valueLoss({ vpreds, returns, values, responseMask: mask }, shape, -1)).toThrow(
      /cliprange_value/,
    );
    expect(() =>
      valueLoss({ vpreds, returns: returns.subarray(1), values, responseMask: mask }, shape, 0.5),
    ).toThrow(/returns/);
    try {
      valueLoss({ vpreds, returns, values, responseMask: new Uint8Array(4) }, shape, 0.5);
      throw new Error('expected EMPTY_MASK');
    } catch (e) {
      expect((e as LabError).code).toBe('EMPTY_MASK');
    }
  });
});
