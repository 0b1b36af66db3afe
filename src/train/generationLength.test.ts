import { describe, expect, it } from 'vitest';
import { quantile } from '../core/stats.js';
import { Rng } from '../random.js';
import { checkLengthModel, LENGTH_DEFAULTS, sampleActionTokens, standardNormal } from './generationLength.js';

describe('generation lengths', () => {
  it('standard normal draws have mean ~0 and variance ~1', () => {
    const rng = new Rng(3);
    const n = 20000;
    let s = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const x = standardNormal(rng);
      s += x;
      s2 += x * x;
    }
    // Standard errors: mean 1/sqrt(n) = 0.007, variance sqrt(2/n) = 0.01.
    expect(Math.abs(s / n)).toBeLessThan(0.03);
    expect(Math.abs(s2 / n - 1)).toBeLessThan(0.04);
  });

  it('default lengths: median ~100 tokens, and p95/p5 spans more than an order of magnitude', () => {
    const rng = new Rng(11);
    const xs = Array.from({ length: 20000 }, () => sampleActionTokens(LENGTH_DEFAULTS, rng));
    expect(quantile(xs, 0.5)).toBeGreaterThan(95);
    expect(quantile(xs, 0.5)).toBeLessThan(105);
    // Log-normal sigma=1: p95/p5 = exp(2 * 1.645) = 26.8.
    const spread = quantile(xs, 0.95) / quantile(xs, 0.05);
    expect(spread).toBeGreaterThan(20);
    expect(spread).toBeLessThan(34);
    expect(xs.every((x) => Number.isInteger(x) && x >= 4 && x <= 4096)).toBe(true);
  });

  it('sigma 0 gives the median exactly; the clamp holds', () => {
    const rng = new Rng(1);
    expect(sampleActionTokens({ median: 37, sigma: 0, min: 1, max: 100 }, rng)).toBe(37);
    expect(sampleActionTokens({ median: 500, sigma: 0, min: 1, max: 100 }, rng)).toBe(100);
    expect(sampleActionTokens({ median: 0.2, sigma: 0, min: 3, max: 100 }, rng)).toBe(3);
  });

  it('rejects bad models', () => {
    expect(() => checkLengthModel({ ...LENGTH_DEFAULTS, median: 0 })).toThrow(/median must be/);
    expect(() => checkLengthModel({ ...LENGTH_DEFAULTS, sigma: -1 })).toThrow(/sigma must be/);
    expect(() => checkLengthModel({ ...LENGTH_DEFAULTS, min: 10, max: 5 })).toThrow(/max must be/);
  });
});
