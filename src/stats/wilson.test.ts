import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { wilsonInterval } from './wilson.js';

describe('wilsonInterval', () => {
  it("matches Newcombe (1998) Table I, method 3 (score interval), to the paper's 4 decimals", () => {
    // Newcombe RG (1998), Two-sided confidence intervals for the single proportion: comparison of
    // seven methods, Stat. Med. 17:857-872, Table I: 81/263 -> 0.2553, 0.3662; 15/148 -> 0.0624,
    // 0.1605; 0/20 -> 0, 0.1611; 1/29 -> 0.0061, 0.1718. (scipy binomtest(...).proportion_ci(method=
    // 'wilson') gives the same.)
    const cases: [number, number, number, number][] = [
      [81, 263, 0.2553, 0.3662],
      [15, 148, 0.0624, 0.1605],
      [0, 20, 0, 0.1611],
      [1, 29, 0.0061, 0.1718],
    ];
    for (const [x, n, lo, hi] of cases) {
      const [a, b] = wilsonInterval(x, n);
      expect(a).toBeCloseTo(lo, 4);
      expect(b).toBeCloseTo(hi, 4);
    }
  });

  it('stays within [0, 1] and contains the observed proportion', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 100_000 })
          .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n))),
        ([x, n]) => {
          const [lo, hi] = wilsonInterval(x, n);
          expect(lo).toBeGreaterThanOrEqual(0);
          expect(hi).toBeLessThanOrEqual(1);
          expect(lo).toBeLessThanOrEqual(x / n);
          expect(hi).toBeGreaterThanOrEqual(x / n);
        },
      ),
    );
  });

  it('refuses n = 0, successes > n and non-integers', () => {
    expect(() => wilsonInterval(0, 0)).toThrow(/n: expected an integer/);
    expect(() => wilsonInterval(5, 4)).toThrow(/successes/);
    expect(() => wilsonInterval(1.5, 4)).toThrow(/successes/);
  });
});
