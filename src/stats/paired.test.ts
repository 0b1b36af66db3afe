import { describe, expect, it } from 'vitest';
import { Rng } from '../random.js';
import { pairedComparison } from './paired.js';

describe('pairedComparison', () => {
  it('diff, sd, exact p and mde80 of a hand-computed case; deterministic per seed', () => {
    const arm = [3, 4, 6, 5];
    const base = [1, 2, 3, 5]; // differences 2, 2, 3, 0: mean 1.75
    const r = pairedComparison(arm, base, new Rng(9));
    expect(r.n).toBe(4);
    expect(r.diff).toBe(1.75);
    // sd of 2,2,3,0 around 1.75: sqrt((0.0625 + 0.0625 + 1.5625 + 3.0625)/3) = sqrt(4.75/3)
    expect(r.sd).toBeCloseTo(Math.sqrt(4.75 / 3), 12);
    // ±2±2±3(±0): |sum| >= 7 only for all + or all −, times 2 for the zero: 4 of 16
    expect(r.p).toBe(0.25);
    expect(r.p_method).toBe('exact');
    // (t_{0.975,3} + t_{0.80,3}) sd / 2 with scipy t.ppf(.975,3) = 3.182446305, t.ppf(.8,3) = 0.978472312
    expect(r.mde80).toBeCloseTo(((3.182446305 + 0.978472312) * Math.sqrt(4.75 / 3)) / 2, 6);
    expect(r.ci95[0]).toBeLessThanOrEqual(r.diff);
    expect(r.ci95[1]).toBeGreaterThanOrEqual(r.diff);
    expect(pairedComparison(arm, base, new Rng(9))).toEqual(r);
  });

  it('one pair has no sd-based power and p = 1', () => {
    const r = pairedComparison([1], [0], new Rng(1));
    expect(r.mde80).toBeNull();
    expect(r.p).toBe(1);
  });

  it('refuses unequal lengths and non-finite values', () => {
    expect(() => pairedComparison([1, 2], [1], new Rng(1))).toThrow(/equal lengths/);
    expect(() => pairedComparison([1, Number.NaN], [1, 2], new Rng(1))).toThrow(/position 1/);
  });
});
