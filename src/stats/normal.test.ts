import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalCdf, normalQuantile, Z975 } from './normal.js';

describe('normal distribution', () => {
  it('matches scipy.stats.norm values', () => {
    // scipy 1.17: norm.ppf(0.975), norm.ppf(1e-10), norm.cdf(-3)
    expect(normalQuantile(0.975)).toBeCloseTo(1.959963984540054, 13);
    expect(normalQuantile(1e-10)).toBeCloseTo(-6.361340902404056, 11);
    expect(normalCdf(-3)).toBeCloseTo(0.0013498980316300933, 14);
    expect(normalCdf(0)).toBe(0.5);
    expect(Z975).toBeCloseTo(normalQuantile(0.975), 14);
    expect(normalQuantile(0)).toBe(Number.NEGATIVE_INFINITY);
    expect(normalQuantile(1)).toBe(Number.POSITIVE_INFINITY);
  });

  it('quantile inverts the CDF', () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-6, max: 1 - 1e-6, noNaN: true }), (p) => {
        expect(normalCdf(normalQuantile(p))).toBeCloseTo(p, 12);
      }),
    );
  });

  it('refuses p outside [0, 1] and NaN', () => {
    expect(() => normalQuantile(1.5)).toThrow(/p must be in \[0, 1\]/);
    expect(() => normalQuantile(Number.NaN)).toThrow(/p must be/);
    expect(() => normalCdf(Number.NaN)).toThrow(/NaN/);
  });
});
