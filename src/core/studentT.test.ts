import { describe, expect, it } from 'vitest';
import { tQuantile975 } from './stats.js';
import { tCdf, tQuantile } from './studentT.js';

describe("Student's t", () => {
  it('quantiles match scipy.stats.t.ppf', () => {
    // scipy 1.17 t.ppf(q, df)
    const cases: [number, number, number][] = [
      [0.8, 1, 1.3763819204711738],
      [0.8, 5, 0.9195437802408271],
      [0.8, 10, 0.8790578285505889],
      [0.8, 29, 0.8541919858818557],
      [0.8, 59, 0.8477559493813871],
      [0.975, 2, 4.302652729749462],
      [0.975, 29, 2.045229642132703],
      [0.975, 59, 2.000995378088267],
      [0.9, 100, 1.290074761346516],
    ];
    for (const [q, df, want] of cases) expect(tQuantile(q, df)).toBeCloseTo(want, 9);
    expect(tQuantile(0.2, 5)).toBeCloseTo(-0.9195437802408271, 9);
    // agrees with the core's 3-decimal table
    for (const df of [1, 3, 12, 30, 45]) expect(tQuantile(0.975, df)).toBeCloseTo(tQuantile975(df), 3);
  });

  it("the summary's t_{0.975} table is this quantile rounded to 3 decimals, and the quantile itself beyond df 30", () => {
    for (let df = 1; df <= 30; df++) {
      expect(tQuantile975(df), `df ${df}`).toBe(Math.round(tQuantile(0.975, df) * 1000) / 1000);
    }
    for (const df of [31, 45, 200]) expect(tQuantile975(df)).toBe(tQuantile(0.975, df));
  });

  it('CDF matches scipy.stats.t.cdf', () => {
    expect(tCdf(1.5, 3)).toBeCloseTo(0.8847080673775886, 12);
    expect(tCdf(-2.2, 7)).toBeCloseTo(0.03186550765131839, 12);
    expect(tCdf(0, 4)).toBe(0.5);
  });

  it('refuses df <= 0 and p outside [0, 1]', () => {
    expect(() => tQuantile(0.5, 0)).toThrow(/df/);
    expect(() => tQuantile(1.2, 3)).toThrow(/p must be/);
  });
});
