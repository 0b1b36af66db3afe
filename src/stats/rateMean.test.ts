import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { summarize } from '../core/stats.js';
import { Rng } from '../random.js';
import { rateMeanInterval } from './rateMean.js';

describe('rateMeanInterval', () => {
  it('stays in [0, 1] where the t interval does not', () => {
    // 29 seeds at 1 and one at 0.7 (a verify rate near the ceiling): t gives an upper end > 1
    const rates = [...Array.from({ length: 29 }, () => 1), 0.7];
    expect(summarize(rates).ci95[1]).toBeGreaterThan(1);
    const { ci, method } = rateMeanInterval(rates, new Rng(1));
    expect(method).toBe('percentile');
    expect(ci[1]).toBe(1);
    expect(ci[0]).toBeGreaterThanOrEqual(0.96); // mean 0.99
  });

  it('is within [0, 1], contains nothing outside the data, and is deterministic per seed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 40 }),
        (rates) => {
          const a = rateMeanInterval(rates, new Rng(2), { resamples: 500 });
          expect(a.ci[0]).toBeGreaterThanOrEqual(Math.min(...rates));
          expect(a.ci[1]).toBeLessThanOrEqual(Math.max(...rates));
          expect(a).toEqual(rateMeanInterval(rates, new Rng(2), { resamples: 500 }));
        },
      ),
      { numRuns: 50 },
    );
  });

  it('refuses a value outside [0, 1], naming its position', () => {
    expect(() => rateMeanInterval([0.5, 1.2], new Rng(1))).toThrow(/position 1 is not a rate/);
  });
});
