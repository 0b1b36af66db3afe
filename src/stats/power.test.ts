import { describe, expect, it } from 'vitest';
import { minimalDetectableDifference } from './power.js';

describe('minimalDetectableDifference', () => {
  it('is (t_{0.975,n-1} + t_{0.80,n-1}) sd / sqrt(n)', () => {
    // scipy t.ppf: n = 30 -> 2.045229642 + 0.854191986 = 2.899421628
    expect(minimalDetectableDifference(1, 30)).toBeCloseTo(2.899421628 / Math.sqrt(30), 8);
    // n = 60 -> 2.000995378 + 0.847755949
    expect(minimalDetectableDifference(0.2, 60)).toBeCloseTo((0.2 * 2.848751327) / Math.sqrt(60), 8);
    expect(minimalDetectableDifference(0, 10)).toBe(0);
    // scales linearly in sd and shrinks like 1/sqrt(n) for large n
    expect(minimalDetectableDifference(2, 30)).toBeCloseTo(2 * minimalDetectableDifference(1, 30), 12);
    expect(minimalDetectableDifference(1, 400) / minimalDetectableDifference(1, 100)).toBeCloseTo(0.5, 2);
  });

  it('refuses n < 2 and a negative sd', () => {
    expect(() => minimalDetectableDifference(1, 1)).toThrow(/n: expected an integer/);
    expect(() => minimalDetectableDifference(-1, 5)).toThrow(/sd/);
  });
});
