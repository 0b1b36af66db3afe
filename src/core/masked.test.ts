import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labErrorText } from '../../test/support/labError.js';
import { maskedMean, maskedRowMeans, maskedRowSums, maskedSum, maskedVar, maskedWhiten } from './masked.js';

const shape = { rows: 2, cols: 3 };
const x = Float32Array.from([1, 2, 3, 4, 5, 6]);
const m = Float32Array.from([1, 1, 0, 1, 0, 0]); // valid values {1, 2, 4}

describe('masked helpers (verl torch_functional), hand-computed on valid values {1,2,4}', () => {
  it('sum 7 and row sums [3, 4]', () => {
    expect(maskedSum({ values: x, mask: m }, shape)).toBe(7);
    expect(Array.from(maskedRowSums({ values: x, mask: m }, shape))).toEqual([3, 4]);
  });

  it('mean 7/(3+1e-8) and row means [3/(2+1e-8), 4/(1+1e-8)]', () => {
    expect(maskedMean({ values: x, mask: m }, shape)).toBe(7 / (3 + 1e-8));
    expect(Array.from(maskedRowMeans({ values: x, mask: m }, shape))).toEqual([
      3 / (2 + 1e-8),
      4 / (1 + 1e-8),
    ]);
  });

  it('variance: biased 14/9, unbiased 7/3', () => {
    expect(maskedVar({ values: x, mask: m }, shape, { correction: 'biased' })).toBeCloseTo(14 / 9, 7);
    expect(maskedVar({ values: x, mask: m }, shape)).toBeCloseTo(7 / 3, 7);
  });

  it('whiten transforms every position (not re-masked); keep adds the mean back', () => {
    const w = maskedWhiten({ values: x, mask: m }, shape);
    const k = maskedWhiten({ values: x, mask: m }, shape, { mean: 'keep' });
    const r = 1 / Math.sqrt(7 / 3 + 1e-8);
    x.forEach((v, i) => {
      expect(w[i]).toBeCloseTo((v - 7 / 3) * r, 6);
      expect(k[i]).toBeCloseTo((v - 7 / 3) * r + 7 / 3, 6);
    });
  });

  it('NaN under a 0 mask is ignored by sum/mean/var (verl uses where), but refused by whiten', () => {
    const xn = x.slice();
    xn[2] = Number.NaN;
    expect(maskedSum({ values: xn, mask: m }, shape)).toBe(7);
    expect(maskedVar({ values: xn, mask: m }, shape)).toBeCloseTo(7 / 3, 7);
    expect(labErrorText(() => maskedWhiten({ values: xn, mask: m }, shape))).toMatch(
      /^NON_FINITE: values: value NaN at row 0, token 2/,
    );
    const xv = x.slice();
    xv[3] = Number.POSITIVE_INFINITY;
    expect(labErrorText(() => maskedMean({ values: xv, mask: m }, shape))).toMatch(
      /^NON_FINITE: values: value Infinity at row 1, token 0/,
    );
  });

  it('an all-zero mask: mean 0 (1e-8 guard, as verl); unbiased var and whiten need >= 2 valid tokens', () => {
    const z = new Float32Array(6);
    expect(maskedMean({ values: x, mask: z }, shape)).toBe(0);
    expect(labErrorText(() => maskedVar({ values: x, mask: z }, shape))).toMatch(/^EMPTY_MASK: mask/);
    const one = Float32Array.from([0, 0, 0, 0, 1, 0]);
    expect(labErrorText(() => maskedWhiten({ values: x, mask: one }, shape))).toMatch(
      /^EMPTY_MASK: mask: .* 1$/,
    );
  });

  it('bad mask and shapes are LabErrors naming the field', () => {
    expect(
      labErrorText(() => maskedSum({ values: x, mask: Float32Array.from([1, 1, 0, 1, 0, 0.5]) }, shape)),
    ).toMatch(/^BAD_MASK: mask: value 0.5 at row 1, token 2/);
    expect(labErrorText(() => maskedSum({ values: x.subarray(1), mask: m }, shape))).toMatch(
      /^SHAPE_MISMATCH: values/,
    );
    expect(labErrorText(() => maskedSum({ values: x, mask: m.subarray(1) }, shape))).toMatch(
      /^SHAPE_MISMATCH: mask/,
    );
  });

  it('whitening that would write an infinity (a masked-out outlier, zero valid variance) is NON_FINITE', () => {
    // valid values {0, 0}: rsqrt(0 + 1e-8) = 1e4, so the masked-out -5e35 becomes -5e39, beyond float32
    const v = Float32Array.from([-5e35, 0, 0, 0]);
    const mk = Float32Array.from([0, 1, 1, 0]);
    expect(labErrorText(() => maskedWhiten({ values: v, mask: mk }, { rows: 2, cols: 2 }))).toMatch(
      /^NON_FINITE: values: the whitened value at position 0 \(-\d\.\d+e\+39\) is not a finite float32/,
    );
    // a representable result is returned as before: -5e31 * 1e4 = -5e35
    const w = maskedWhiten({ values: Float32Array.from([-5e31, 0, 0, 0]), mask: mk }, { rows: 2, cols: 2 });
    expect((w[0] as number) / -5e35).toBeCloseTo(1, 6);
  });

  it('an unknown correction or mean choice is UNKNOWN_MODE, not a silent default', () => {
    const bad = { correction: 'sample' } as unknown as Parameters<typeof maskedVar>[2];
    expect(labErrorText(() => maskedVar({ values: x, mask: m }, shape, bad))).toMatch(
      /^UNKNOWN_MODE: correction: .* got 'sample'/,
    );
    const shift = { mean: 'center' } as unknown as Parameters<typeof maskedWhiten>[2];
    expect(labErrorText(() => maskedWhiten({ values: x, mask: m }, shape, shift))).toMatch(
      /^UNKNOWN_MODE: mean: .* got 'center'/,
    );
  });

  it('property: whitened valid values have mean ~0 and unbiased variance ~1', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -100, max: 100 }), fc.boolean()), {
          minLength: 3,
          maxLength: 24,
        }),
        (cells) => {
          const vals = Float64Array.from(cells.map(([v]) => v / 8));
          const mask = Uint8Array.from(cells.map(([, on], i) => (on || i < 2 ? 1 : 0)));
          const s = { rows: 1, cols: cells.length };
          const valid = Array.from(vals).filter((_, i) => mask[i] === 1);
          if (new Set(valid).size < 2) return; // a constant batch has variance 0: whitening just centres
          const w = maskedWhiten({ values: vals, mask }, s);
          const wv = Array.from(w).filter((_, i) => mask[i] === 1);
          const mean = wv.reduce((a, b) => a + b, 0) / wv.length;
          const v = wv.reduce((a, b) => a + (b - mean) ** 2, 0) / (wv.length - 1);
          expect(Math.abs(mean)).toBeLessThan(1e-5);
          expect(v).toBeCloseTo(1, 4);
        },
      ),
    );
  });
});
