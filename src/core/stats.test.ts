import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quantile, quantileOfSorted, summarize, tQuantile975 } from './stats.js';

describe('tQuantile975', () => {
  it('matches printed t tables beyond df = 30 (the normal 1.96 was up to 4% low there)', () => {
    // Two-sided 95% critical values from standard t tables.
    const table: [number, number][] = [
      [31, 2.0395],
      [40, 2.0211],
      [60, 2.0003],
      [120, 1.9799],
      [1000, 1.9623],
    ];
    for (const [df, t] of table) expect(Math.abs(tQuantile975(df) - t)).toBeLessThan(2e-4);
    expect(tQuantile975(30)).toBe(2.042);
  });
});

describe('summarize', () => {
  it('computes mean, sample std and a t-based CI by hand on a small list', () => {
    // values 1,2,3,4: mean 2.5, sample var = (2.25+0.25+0.25+2.25)/3 = 5/3
    const s = summarize([1, 2, 3, 4]);
    expect(s.mean).toBe(2.5);
    expect(s.std).toBeCloseTo(Math.sqrt(5 / 3), 12);
    const half = (3.182 * Math.sqrt(5 / 3)) / 2; // t_{0.975,3} = 3.182
    expect(s.ci95[0]).toBeCloseTo(2.5 - half, 10);
    expect(s.ci95[1]).toBeCloseTo(2.5 + half, 10);
    expect([s.min, s.max, s.n]).toEqual([1, 4, 4]);
  });

  it('values whose squares overflow float64 are NON_FINITE, not an infinite std', () => {
    expect(() => summarize([1e300, -1e300], 'm')).toThrow(/m: values too large for float64 statistics/);
  });

  it('collapses the CI for one value and rejects non-finite values', () => {
    expect(summarize([0.5]).ci95).toEqual([0.5, 0.5]);
    expect(() => summarize([1, Number.NaN], 'eval')).toThrow(/eval: value NaN at position 1/);
    expect(() => summarize([])).toThrow(/empty/);
  });

  it('keeps the mean inside [min, max] and inside its own CI', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 50 }),
        (xs) => {
          const s = summarize(xs);
          const tol = 1e-9 * (1 + Math.abs(s.mean));
          return (
            s.min - tol <= s.mean &&
            s.mean <= s.max + tol &&
            s.ci95[0] <= s.mean + tol &&
            s.mean - tol <= s.ci95[1]
          );
        },
      ),
    );
  });
});

describe('quantile', () => {
  it('interpolates linearly like numpy', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 0, 5], 0.9)).toBeCloseTo(9, 12);
    expect(quantile([7], 0.99)).toBe(7);
  });

  it('does not reorder its input, and quantileOfSorted reads an already sorted list the same way', () => {
    const xs = [3, 1, 2];
    expect(quantile(xs, 0.25)).toBe(1.5); // sorted 1,2,3: pos 0.5
    expect(xs).toEqual([3, 1, 2]);
    expect(quantileOfSorted([1, 2, 3], 0.25)).toBe(1.5);
  });

  it('refuses what would otherwise become NaN or a silently wrong number', () => {
    // NaN would sort last and turn the top quantiles into NaN; q > 1 would read past the end
    expect(() => quantile([1, Number.NaN, 2], 0.5, 'ratios')).toThrow(/ratios: value NaN at position 1/);
    expect(() => quantile([1, 2], 1.5)).toThrow(/q: expected a quantile level in \[0, 1\], got 1.5/);
    expect(() => quantile([1, 2], Number.NaN)).toThrow(/q: /);
    expect(() => quantile([], 0.5)).toThrow(/empty/);
  });
});

describe('summarize on constant values', () => {
  it('gives exactly the constant with zero spread', () => {
    const s = summarize(Array.from({ length: 20 }, () => 0.1 + 0.2));
    expect(s.mean).toBe(0.1 + 0.2);
    expect(s.std).toBe(0);
    expect(s.ci95).toEqual([0.1 + 0.2, 0.1 + 0.2]);
  });
});
