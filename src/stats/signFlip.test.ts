import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../random.js';
import { signFlipTest } from './signFlip.js';

describe('signFlipTest', () => {
  it('gives the hand-enumerated exact p-values', () => {
    const rng = new Rng(1);
    // ±1±2±3: sums 6,4,2,0,0,−2,−4,−6; |sum| >= 6 in 2 of 8
    expect(signFlipTest([1, 2, 3], rng)).toEqual({ p: 0.25, method: 'exact', permutations: 8 });
    // ±2±1±3±0.5, observed 2−1+3+0.5 = 4.5: |sum| >= 4.5 for 6.5, 5.5, 4.5 and their negatives: 6 of 16
    expect(signFlipTest([2, -1, 3, 0.5], rng).p).toBe(0.375);
    // every pair in the same direction: only the two all-same-sign assignments reach |sum|
    expect(signFlipTest([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0], rng).p).toBe(2 / 1024);
    // all differences zero: no evidence at all
    expect(signFlipTest([0, 0, 0], rng).p).toBe(1);
  });

  it('counts ties despite rounding (0.1 + 0.2 vs 0.3)', () => {
    // observed 0.1+0.2−0.3 = 5.5e-17; every assignment with |sum| >= ~0 counts: the ones giving 0 are ties
    const r = signFlipTest([0.1, 0.2, -0.3], new Rng(1));
    expect(r.p).toBe(1);
  });

  it('Monte-Carlo agrees with the exact p within its standard error and is deterministic per seed', () => {
    const rng = new Rng(3);
    const d = Array.from({ length: 18 }, () => rng.next() - 0.35);
    const exact = signFlipTest(d, new Rng(0)).p;
    const mc = signFlipTest(d, new Rng(5), { exactMaxN: 0, permutations: 40_000 });
    expect(mc.method).toBe('monte-carlo');
    const se = Math.sqrt((exact * (1 - exact)) / 40_000);
    expect(Math.abs(mc.p - exact)).toBeLessThan(4 * se + 1e-4);
    expect(signFlipTest(d, new Rng(5), { exactMaxN: 0, permutations: 40_000 })).toEqual(mc);
    expect(signFlipTest(d, new Rng(6), { exactMaxN: 0, permutations: 40_000 }).p).not.toBe(mc.p);
  });

  it('p is in (0, 1], symmetric in the sign of d, and never 0 for Monte-Carlo', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 1, maxLength: 12 }),
        (d) => {
          const a = signFlipTest(d, new Rng(1)).p;
          const b = signFlipTest(
            d.map((x) => -x),
            new Rng(1),
          ).p;
          expect(a).toBeGreaterThan(0);
          expect(a).toBeLessThanOrEqual(1);
          expect(a).toBe(b);
          expect(signFlipTest(d, new Rng(1), { exactMaxN: 0, permutations: 200 }).p).toBeGreaterThan(0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses NaN and empty input, naming the position', () => {
    expect(() => signFlipTest([1, Number.NaN], new Rng(1))).toThrow(/position 1/);
    expect(() => signFlipTest([], new Rng(1))).toThrow(/at least 1/);
  });
});
