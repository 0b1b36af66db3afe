import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../random.js';
import { bcaInterval, bootstrapMeans, percentileInterval } from './bootstrap.js';

// A right-skewed sample where BCa and percentile differ visibly.
const SKEWED = [0.0, 0.0, 0.1, 0.2, 0.2, 0.3, 0.5, 0.9, 1.4, 2.8, 0.05, 0.6];

describe('bootstrap intervals', () => {
  it('are deterministic per seed and differ between seeds', () => {
    const a = bcaInterval(SKEWED, new Rng(11));
    expect(bcaInterval(SKEWED, new Rng(11))).toEqual(a);
    expect(bcaInterval(SKEWED, new Rng(12)).ci).not.toEqual(a.ci);
    expect(percentileInterval(SKEWED, new Rng(11))).toEqual(percentileInterval(SKEWED, new Rng(11)));
    expect(Array.from(bootstrapMeans([1, 2, 3], new Rng(4), 5))).toEqual(
      Array.from(bootstrapMeans([1, 2, 3], new Rng(4), 5)),
    );
  });

  it('agree with scipy.stats.bootstrap on a skewed sample (within Monte-Carlo error)', () => {
    // scipy 1.17, bootstrap((x,), np.mean, n_resamples=200000): BCa [0.2792, 1.2792], percentile [0.2208, 1.0833]
    const bca = bcaInterval(SKEWED, new Rng(1), { resamples: 40_000 });
    expect(bca.method).toBe('bca');
    expect(bca.estimate).toBeCloseTo(0.5875, 12);
    expect(bca.ci[0]).toBeCloseTo(0.2792, 1);
    expect(bca.ci[1]).toBeCloseTo(1.2792, 1);
    expect(Math.abs(bca.ci[0] - 0.2792)).toBeLessThan(0.02);
    expect(Math.abs(bca.ci[1] - 1.2792)).toBeLessThan(0.04);
    const pct = percentileInterval(SKEWED, new Rng(1), { resamples: 40_000 });
    expect(Math.abs(pct.ci[0] - 0.2208)).toBeLessThan(0.02);
    expect(Math.abs(pct.ci[1] - 1.0833)).toBeLessThan(0.03);
    // BCa shifts the interval right for a right-skewed mean
    expect(bca.ci[1]).toBeGreaterThan(pct.ci[1]);
  });

  it('counts a bootstrap mean equal to the estimate up to rounding as a tie (scale-equivariant)', () => {
    // [0.1, 0.2, 0.3]: the estimate sums to 0.6000000000000001, a resample (0.3, 0.2, 0.1) to 0.6, so
    // which resamples tie with the estimate depended on summation order (seed 2 put the lower end at
    // 0.1 instead of 0.1333). The integers 1, 2, 3 sum exactly: the scaled sample must give the
    // scaled interval, whatever the seed.
    for (const [ints, scale] of [
      [[1, 2, 3], 0.1],
      [[3, 1, 2], 0.1],
      [[1, 2, 2, 3, 4], 0.1],
      [[1, 2, 3, 7], 0.01],
    ] as [number[], number][]) {
      for (let seed = 1; seed <= 5; seed++) {
        const exact = bcaInterval(ints, new Rng(seed));
        const scaled = bcaInterval(
          ints.map((x) => x * scale),
          new Rng(seed),
        );
        expect(scaled.method).toBe(exact.method);
        expect(scaled.ci[0]).toBeCloseTo(exact.ci[0] * scale, 12);
        expect(scaled.ci[1]).toBeCloseTo(exact.ci[1] * scale, 12);
      }
    }
  });

  it('a constant list gives [c, c]', () => {
    expect(bcaInterval([0.3, 0.3, 0.3], new Rng(1)).ci).toEqual([0.3, 0.3]);
    expect(percentileInterval([0.3, 0.3, 0.3], new Rng(1)).ci).toEqual([0.3, 0.3]);
  });

  it('contains the mean of a symmetric sample and stays within [min, max]', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 2, maxLength: 15 }),
        fc.double({ min: -5, max: 5, noNaN: true }),
        fc.integer({ min: 0, max: 1000 }),
        (half, centre, seed) => {
          // mirror around `centre`: the sample is symmetric and its mean is `centre`
          const xs = [...half.map((x) => centre + x), ...half.map((x) => centre - x)];
          for (const f of [bcaInterval, percentileInterval]) {
            const { ci } = f(xs, new Rng(seed), { resamples: 2000 });
            expect(ci[0]).toBeLessThanOrEqual(centre + 1e-9);
            expect(ci[1]).toBeGreaterThanOrEqual(centre - 1e-9);
            expect(ci[0]).toBeGreaterThanOrEqual(Math.min(...xs));
            expect(ci[1]).toBeLessThanOrEqual(Math.max(...xs));
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses non-finite values and bad options, naming them', () => {
    expect(() => bcaInterval([1, Number.NaN], new Rng(1))).toThrow(/position 1/);
    expect(() => percentileInterval([1, 2], new Rng(1), { level: 1 })).toThrow(/level/);
    expect(() => bootstrapMeans([1], new Rng(1), 0)).toThrow(/resamples/);
  });
});
