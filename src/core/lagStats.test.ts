import { describe, expect, it } from 'vitest';
import { integerHistogram, pearson, ratioStats, ratioStatsByLag } from './lagStats.js';

describe('ratioStats', () => {
  it('statistics of exp(log ratio), by hand', () => {
    // ratios 0.5, 1, 2, 4
    const s = ratioStats([Math.log(0.5), 0, Math.log(2), Math.log(4)]);
    expect(s?.n).toBe(4);
    expect(s?.mean).toBeCloseTo(7.5 / 4, 14);
    expect(s?.p50).toBeCloseTo(1.5, 14); // between 1 and 2
    expect(s?.p90).toBeCloseTo(2 + 0.7 * 2, 14); // pos 2.7 -> 2 + 0.7*(4-2)
    expect(s?.max).toBeCloseTo(4, 14);
    expect(s?.meanAbsLog).toBeCloseTo((Math.log(2) * 2 + Math.log(4)) / 4, 14);
  });

  it('empty gives null; non-finite is an error', () => {
    expect(ratioStats([])).toBeNull();
    expect(() => ratioStats([0, Number.NaN])).toThrow(/position 1/);
  });
});

describe('ratioStatsByLag', () => {
  it('buckets by lag, empty buckets are null', () => {
    const lags = [0, 0, 1, 5, 20];
    const lr = [0, 0, Math.log(2), Math.log(3), Math.log(0.25)];
    const rows = ratioStatsByLag(lags, lr);
    const by = Object.fromEntries(rows.map((r) => [r.bucket.label, r.stats]));
    expect(by['0']?.n).toBe(2);
    expect(by['0']?.max).toBe(1);
    expect(by['1']?.mean).toBeCloseTo(2, 14);
    expect(by['2']).toBeNull();
    expect(by['4-7']?.max).toBeCloseTo(3, 14);
    expect(by['16+']?.max).toBeCloseTo(0.25, 14);
  });

  it('rejects unequal lengths', () => {
    expect(() => ratioStatsByLag([0, 1], [0])).toThrow(/equal lengths/);
  });
});

describe('pearson', () => {
  it('perfect positive and negative correlation, and a hand-computed case', () => {
    expect(pearson([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 14);
    expect(pearson([1, 2, 3], [3, 2, 1])).toBeCloseTo(-1, 14);
    // x = [0,1,2,3], y = [1,0,1,2]: mean x 1.5, mean y 1; sxy = 2.0, sxx = 5, syy = 2 -> 2/sqrt(10)
    expect(pearson([0, 1, 2, 3], [1, 0, 1, 2])).toBeCloseTo(2 / Math.sqrt(10), 14);
  });

  it('constant input gives null, not NaN', () => {
    expect(pearson([0, 0, 0], [1, 2, 3])).toBeNull();
    expect(pearson([1], [1])).toBeNull();
  });

  it('a constant whose mean is inexact (0.1 three times) is still constant: null, not 0', () => {
    expect(pearson([0.1, 0.1, 0.1], [1, 2, 3])).toBeNull();
  });

  it('is scale-free at the float64 limits, where the squares overflow or underflow', () => {
    expect(pearson([1e200, 2e200, 3e200], [1, 2, 3])).toBeCloseTo(1, 12); // was 0: sxx = Infinity
    // y = [1, 3, 2] against x = [1, 2, 3]: sxy = 1, sxx = syy = 2, r = 0.5; was null (squares underflow)
    expect(pearson([1e-200, 2e-200, 3e-200], [1e-200, 3e-200, 2e-200])).toBeCloseTo(0.5, 12);
    expect(() => pearson([1e308, 1e308, -1e308], [1, 2, 3])).toThrow(/the sum overflows/);
  });

  it('a non-finite entry is NON_FINITE naming x or y and the position, not a NaN correlation', () => {
    expect(() => pearson([0, 1, Number.NaN], [1, 2, 3])).toThrow(/x: value NaN at position 2/);
    expect(() => pearson([0, 1, 2], [1, Number.POSITIVE_INFINITY, 3])).toThrow(
      /y: value Infinity at position 1/,
    );
  });
});

describe('integerHistogram', () => {
  it('counts 0..max', () => {
    expect(integerHistogram([0, 2, 2, 0, 0])).toEqual([3, 0, 2]);
    expect(integerHistogram([])).toEqual([]);
    expect(() => integerHistogram([0, 1.5])).toThrow(/position 1/);
  });
});
