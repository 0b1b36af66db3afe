import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAST_EXP_RANGE, fastExp } from './fastExp.js';

describe('fastExp', () => {
  it('is within 1e-14 relative of Math.exp over the table range (dense grid and random points)', () => {
    let worst = 0;
    for (let i = 0; i <= 200000; i++) {
      const x = -FAST_EXP_RANGE + (2 * FAST_EXP_RANGE * i) / 200000;
      worst = Math.max(worst, Math.abs(fastExp(x) - Math.exp(x)) / Math.exp(x));
    }
    expect(worst).toBeLessThan(1e-14);
    fc.assert(
      fc.property(fc.double({ min: -FAST_EXP_RANGE, max: FAST_EXP_RANGE, noNaN: true }), (x) => {
        expect(Math.abs(fastExp(x) - Math.exp(x))).toBeLessThanOrEqual(1e-14 * Math.exp(x));
      }),
    );
  });

  it('rounds to the same float32 as Math.exp for log-ratios of a policy update (1e5 draws)', () => {
    let differ = 0;
    for (let i = 0; i < 100000; i++) {
      const x = Math.sin(i * 12.9898) * 3; // deterministic spread over [-3, 3]
      if (Math.fround(fastExp(x)) !== Math.fround(Math.exp(x))) differ++;
    }
    expect(differ).toBeLessThanOrEqual(2);
  });

  it('is exact at 0, and falls back to Math.exp outside the table and for NaN / infinities', () => {
    expect(fastExp(0)).toBe(1);
    expect(fastExp(40)).toBe(Math.exp(40));
    expect(fastExp(-700)).toBe(Math.exp(-700));
    expect(fastExp(Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    expect(fastExp(Number.NEGATIVE_INFINITY)).toBe(0);
    expect(fastExp(Number.NaN)).toBeNaN();
  });
});
