import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { importanceRatios, kishEss, truncateWeights } from './ess.js';

describe('kishEss', () => {
  it('equal weights give ESS = n', () => {
    const r = kishEss([0.5, 0.5, 0.5, 0.5]);
    expect(r.ess).toBe(4);
    expect(r.fraction).toBe(1);
    expect(r.n).toBe(4);
  });

  it('one non-zero weight among n gives ESS = 1', () => {
    const r = kishEss([0, 0, 3, 0, 0]);
    expect(r.ess).toBe(1);
    expect(r.fraction).toBeCloseTo(1 / 5, 15);
  });

  it('known weights: [1, 2, 3, 4] -> 100 / 30', () => {
    // (1+2+3+4)^2 = 100; 1+4+9+16 = 30.
    const r = kishEss([1, 2, 3, 4]);
    expect(r.ess).toBeCloseTo(100 / 30, 14);
    expect(r.fraction).toBeCloseTo(100 / 120, 14);
  });

  it('respects the mask: only mask-1 entries count', () => {
    const r = kishEss([1, 100, 1, 1], [1, 0, 1, 1]);
    expect(r.ess).toBe(3);
    expect(r.n).toBe(3);
  });

  it('weights whose squares overflow or underflow float64 still give the scale-free ESS', () => {
    expect(kishEss([1e200, 1e200]).ess).toBe(2); // (2e200)^2 / (2 * 1e400) would be Inf/Inf
    expect(kishEss([1e-200, 1e-200]).ess).toBe(2); // squares underflow to 0: 0/0 or a fake 0
    // (1 + 3)^2 / (1 + 9) = 1.6 at any scale
    expect(kishEss([1e-200, 0, 3e-200]).ess).toBeCloseTo(1.6, 14);
    expect(kishEss([1e180, 0, 3e180]).ess).toBeCloseTo(1.6, 14);
  });

  it('all-zero weights give 0, not NaN', () => {
    expect(kishEss([0, 0, 0])).toEqual({ ess: 0, fraction: 0, n: 3 });
    expect(kishEss([])).toEqual({ ess: 0, fraction: 0, n: 0 });
  });

  it('rejects negative and non-finite weights, naming the position', () => {
    expect(() => kishEss([1, -1])).toThrow(/position 1 is negative/);
    expect(() => kishEss([1, 2, Number.NaN])).toThrow(/position 2 is not finite/);
    expect(() => kishEss([1, 2], [1])).toThrow(/mask has 1 entries/);
  });

  it('property: 1 <= ESS <= n for positive weights, and scale invariant', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1e-3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 40 }),
        fc.double({ min: 1e-2, max: 1e2, noNaN: true }),
        (w, scale) => {
          const a = kishEss(w);
          expect(a.ess).toBeGreaterThanOrEqual(1 - 1e-12);
          expect(a.ess).toBeLessThanOrEqual(w.length);
          const b = kishEss(w.map((x) => x * scale));
          expect(b.ess).toBeCloseTo(a.ess, 8);
        },
      ),
    );
  });
});

describe('truncateWeights', () => {
  it('caps from above only', () => {
    expect(Array.from(truncateWeights([0.1, 1, 1.99, 2, 2.01, 50], 2))).toEqual([0.1, 1, 1.99, 2, 2, 2]);
  });

  it('property: result <= cap, equals the ratio below the cap', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { maxLength: 30 }),
        fc.double({ min: 1e-3, max: 10, noNaN: true }),
        (r, cap) => {
          const t = truncateWeights(r, cap);
          r.forEach((x, i) => {
            expect(t[i]).toBeLessThanOrEqual(cap);
            if (x <= cap) expect(t[i]).toBe(x);
            else expect(t[i]).toBe(cap);
          });
        },
      ),
    );
  });

  it('rejects a bad cap and bad ratios', () => {
    expect(() => truncateWeights([1], 0)).toThrow(/cap must be/);
    expect(() => truncateWeights([1], Number.POSITIVE_INFINITY)).toThrow(/cap must be/);
    expect(() => truncateWeights([1, -0.5], 2)).toThrow(/position 1/);
    const ratios = new Float64Array([0.5, 3, Number.NaN]);
    expect(() => truncateWeights(ratios, 2, ratios)).toThrow(/out: shares memory with ratios/);
    expect(Array.from(ratios)).toEqual([0.5, 3, Number.NaN]);
  });
});

describe('importanceRatios', () => {
  it('is exp of the log-prob difference', () => {
    const r = importanceRatios([Math.log(0.5), Math.log(0.2)], [Math.log(0.25), Math.log(0.4)]);
    expect(r[0]).toBeCloseTo(2, 14);
    expect(r[1]).toBeCloseTo(0.5, 14);
  });

  it('identical log-probs give exactly 1', () => {
    const lp = [-0.123456789, -3.5, -1e-12];
    expect(Array.from(importanceRatios(lp, lp))).toEqual([1, 1, 1]);
  });

  it('clamps the log-ratio at +-20 (verl)', () => {
    const r = importanceRatios([0, -100], [-100, 0]);
    expect(r[0]).toBe(Math.exp(20));
    expect(r[1]).toBe(Math.exp(-20));
  });

  it('refuses an out that shares memory with an input, writing nothing', () => {
    const buffer = new Float64Array([-1, -2, -3, -4]);
    const current = buffer.subarray(0, 3);
    for (const out of [current, buffer.subarray(1, 4)]) {
      expect(() => importanceRatios(current, [0, 0, 0], out)).toThrow(/out: shares memory with current/);
      expect(() => importanceRatios([0, 0, 0], current, out)).toThrow(/out: shares memory with behaviour/);
    }
    expect(Array.from(buffer)).toEqual([-1, -2, -3, -4]);
    const separate = new Float64Array(3);
    expect(importanceRatios(current, [-1, -2, -3], separate)).toBe(separate);
    expect(Array.from(separate)).toEqual([1, 1, 1]);
  });

  it('rejects length mismatch and non-finite log-probs', () => {
    expect(() => importanceRatios([0, 0], [0])).toThrow(/equal lengths/);
    expect(() => importanceRatios([0, Number.NEGATIVE_INFINITY], [0, 0])).toThrow(
      /current log-prob at position 1/,
    );
  });
});
