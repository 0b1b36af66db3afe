import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  PRECISION_SPECS,
  type PrecisionFormat,
  parsePrecision,
  roundArrayToPrecision,
  roundToPrecision,
} from './precision.js';

/**
 * The value of a bit pattern, straight from the format's definition (independent of the code under
 * test): sign s, biased exponent field E (width eb), mantissa field M (width mb), bias 2^(eb−1) − 1;
 * E = 0 is subnormal (M/2^mb · 2^(1−bias)); the all-ones exponent is Inf/NaN in IEEE formats, while
 * e4m3fn (`fn`: finite, NaN only at S.1111.111) uses it for normal numbers except M all ones.
 */
function decode(code: number, eb: number, mb: number, ieee: boolean): number {
  const bias = 2 ** (eb - 1) - 1;
  const s = (code >> (eb + mb)) & 1 ? -1 : 1;
  const E = (code >> mb) & (2 ** eb - 1);
  const M = code & (2 ** mb - 1);
  const allOnes = E === 2 ** eb - 1;
  if (ieee && allOnes) return M === 0 ? s * Number.POSITIVE_INFINITY : Number.NaN;
  if (!ieee && allOnes && M === 2 ** mb - 1) return Number.NaN;
  if (E === 0) return s * (M / 2 ** mb) * 2 ** (1 - bias);
  return s * (1 + M / 2 ** mb) * 2 ** (E - bias);
}

interface Layout {
  format: PrecisionFormat;
  eb: number;
  mb: number;
  ieee: boolean;
}
const FP8_E4M3: Layout = { format: 'fp8_e4m3', eb: 4, mb: 3, ieee: false };
const FP8_E5M2: Layout = { format: 'fp8_e5m2', eb: 5, mb: 2, ieee: true };
const FP16: Layout = { format: 'fp16', eb: 5, mb: 10, ieee: true };

/** Every code round-trips, and every midpoint between adjacent finite values goes to the even code. */
function exhaustive(layout: Layout): { codes: number; midpoints: number } {
  const { format, eb, mb, ieee } = layout;
  const bits = 1 + eb + mb;
  const half = 2 ** (bits - 1); // positive codes 0 .. half−1 increase with the value
  let codes = 0;
  for (let c = 0; c < 2 ** bits; c++) {
    const v = decode(c, eb, mb, ieee);
    const r = roundToPrecision(v, format);
    if (Number.isNaN(v)) expect(Number.isNaN(r), `code ${c}`).toBe(true);
    else expect(Object.is(r, v), `code ${c}: ${v} -> ${r}`).toBe(true);
    codes++;
  }
  let midpoints = 0;
  for (let c = 0; c + 1 < half; c++) {
    const lo = decode(c, eb, mb, ieee);
    const hi = decode(c + 1, eb, mb, ieee);
    if (!Number.isFinite(lo) || !Number.isFinite(hi)) continue;
    const mid = (lo + hi) / 2;
    const even = c % 2 === 0 ? lo : hi;
    const nudge = (hi - lo) * 2 ** -20;
    expect(roundToPrecision(mid, format), `mid of codes ${c},${c + 1}`).toBe(even);
    expect(roundToPrecision(-mid, format)).toBe(-even === 0 ? -0 : -even);
    expect(roundToPrecision(mid + nudge, format)).toBe(hi);
    expect(roundToPrecision(mid - nudge, format)).toBe(lo);
    midpoints++;
  }
  return { codes, midpoints };
}

/** torch's bf16 conversion by bit manipulation (c10/util/BFloat16.h `round_to_nearest_even`) of a float32. */
function bf16Reference(x: number): number {
  const f = new Float32Array([x]);
  const u = new Uint32Array(f.buffer);
  if (Number.isNaN(f[0] as number)) return Number.NaN;
  const bits = u[0] as number;
  const lsb = (bits >>> 16) & 1;
  u[0] = ((bits + 0x7fff + lsb) & 0xffff0000) >>> 0;
  return f[0] as number;
}

describe('roundToPrecision: formats against their definitions', () => {
  it('fp8 e4m3fn: all 256 codes round-trip and all 126 midpoints go to the even code', () => {
    // positive codes 0..0x7e are finite (0x7f is NaN): 127 values, 126 adjacent pairs
    expect(exhaustive(FP8_E4M3)).toEqual({ codes: 256, midpoints: 126 });
  });

  it('fp8 e5m2: all 256 codes round-trip and all 123 midpoints go to the even code', () => {
    // positive finite codes 0..0x7b (0x7c is Infinity): 124 values, 123 adjacent pairs
    expect(exhaustive(FP8_E5M2)).toEqual({ codes: 256, midpoints: 123 });
  });

  it('fp16: all 65536 codes round-trip and all 31743 midpoints go to the even code', () => {
    expect(exhaustive(FP16)).toEqual({ codes: 65536, midpoints: 31743 });
  });

  it('bf16 equals the bit-manipulation reference on every float32 (sampled)', () => {
    fc.assert(
      fc.property(fc.float({ noNaN: true }), (x) => {
        expect(Object.is(roundToPrecision(x, 'bf16'), bf16Reference(x))).toBe(true);
      }),
      { numRuns: 20000 },
    );
  });

  it('bf16 of a double: a bf16 value, nearest (error at most half its spacing)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e38, max: 1e38 }), (x) => {
        const r = roundToPrecision(x, 'bf16');
        expect(bf16Reference(r)).toBe(r);
        const e = Math.max(Math.floor(Math.log2(Math.abs(r) || 1e-300)), -126);
        expect(Math.abs(x - r)).toBeLessThanOrEqual(2 ** (e - 7) / 2 + 1e-300);
      }),
      { numRuns: 5000 },
    );
  });

  it('the generic kernel agrees with Math.fround on doubles (fp32 in saturate mode, finite range)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, min: -3e38, max: 3e38 }), (x) => {
        expect(Object.is(roundToPrecision(x, 'fp32', { overflow: 'saturate' }), Math.fround(x))).toBe(true);
      }),
      { numRuns: 20000 },
    );
  });

  it('fp64 is the identity and fp32 is Math.fround', () => {
    for (const x of [0.1, -1 / 3, 1e-310, 2 ** 200, -0]) {
      expect(Object.is(roundToPrecision(x, 'fp64'), x)).toBe(true);
      expect(Object.is(roundToPrecision(x, 'fp32'), Math.fround(x))).toBe(true);
    }
  });
});

describe('roundToPrecision: edge values', () => {
  const formats: PrecisionFormat[] = ['fp32', 'bf16', 'fp16', 'fp8_e4m3', 'fp8_e5m2'];

  it.each(formats)('%s: max normal, min subnormal, half of it, -0', (format) => {
    const s = PRECISION_SPECS[format];
    const m = s.minSubnormal;
    expect(roundToPrecision(s.maxFinite, format)).toBe(s.maxFinite);
    expect(roundToPrecision(-s.maxFinite, format)).toBe(-s.maxFinite);
    expect(roundToPrecision(m, format)).toBe(m);
    expect(roundToPrecision(2 ** s.minExponent, format)).toBe(2 ** s.minExponent);
    // half the smallest subnormal is the midpoint of 0 and m: ties to even -> 0
    expect(Object.is(roundToPrecision(m / 2, format), 0)).toBe(true);
    expect(Object.is(roundToPrecision(-m / 2, format), -0)).toBe(true);
    expect(roundToPrecision(m * 0.5000001, format)).toBe(m);
    // 1.5·m is the midpoint of m (odd) and 2m (even) -> 2m
    expect(roundToPrecision(1.5 * m, format)).toBe(2 * m);
    expect(roundToPrecision(2.5 * m, format)).toBe(2 * m);
    expect(Object.is(roundToPrecision(-0, format), -0)).toBe(true);
    expect(Number.isNaN(roundToPrecision(Number.NaN, format))).toBe(true);
  });

  it('the formats have the documented constants', () => {
    expect(PRECISION_SPECS.fp16.maxFinite).toBe(65504);
    expect(PRECISION_SPECS.fp16.minSubnormal).toBe(2 ** -24);
    expect(PRECISION_SPECS.fp8_e4m3.maxFinite).toBe(448);
    expect(PRECISION_SPECS.fp8_e4m3.minSubnormal).toBe(2 ** -9);
    expect(PRECISION_SPECS.fp8_e5m2.maxFinite).toBe(57344);
    expect(PRECISION_SPECS.fp8_e5m2.minSubnormal).toBe(2 ** -16);
    expect(PRECISION_SPECS.bf16.maxFinite).toBe(bf16Reference(3.3895313892515355e38));
    expect(PRECISION_SPECS.fp32.maxFinite).toBe(Math.fround(3.4028234663852886e38));
  });

  it('fp16 overflows to Infinity from the midpoint 65520 on (IEEE), or saturates when asked', () => {
    expect(roundToPrecision(65519.99, 'fp16')).toBe(65504);
    expect(roundToPrecision(65520, 'fp16')).toBe(Number.POSITIVE_INFINITY);
    expect(roundToPrecision(-1e6, 'fp16')).toBe(Number.NEGATIVE_INFINITY);
    expect(roundToPrecision(Number.POSITIVE_INFINITY, 'fp16')).toBe(Number.POSITIVE_INFINITY);
    expect(roundToPrecision(1e6, 'fp16', { overflow: 'saturate' })).toBe(65504);
  });

  it('bf16 overflows to Infinity past (2 − 2^-8)·2^127', () => {
    expect(roundToPrecision((2 - 2 ** -8) * 2 ** 127, 'bf16')).toBe(Number.POSITIVE_INFINITY);
    expect(roundToPrecision((2 - 2 ** -8 - 2 ** -12) * 2 ** 127, 'bf16')).toBe(
      PRECISION_SPECS.bf16.maxFinite,
    );
  });

  it('fp8 e4m3fn: 464 ties down to 448; beyond it saturates by default, NaN in nonfinite mode', () => {
    expect(roundToPrecision(464, 'fp8_e4m3')).toBe(448);
    expect(roundToPrecision(464, 'fp8_e4m3', { overflow: 'nonfinite' })).toBe(448);
    expect(roundToPrecision(465, 'fp8_e4m3')).toBe(448);
    expect(roundToPrecision(-1e6, 'fp8_e4m3')).toBe(-448);
    expect(roundToPrecision(Number.POSITIVE_INFINITY, 'fp8_e4m3')).toBe(448);
    // the non-saturating (c10 Float8_e4m3fn.h before pytorch#178817, ml_dtypes) behaviour
    expect(Number.isNaN(roundToPrecision(465, 'fp8_e4m3', { overflow: 'nonfinite' }))).toBe(true);
    expect(Number.isNaN(roundToPrecision(480, 'fp8_e4m3', { overflow: 'nonfinite' }))).toBe(true);
    expect(
      Number.isNaN(roundToPrecision(Number.NEGATIVE_INFINITY, 'fp8_e4m3', { overflow: 'nonfinite' })),
    ).toBe(true);
  });

  it('fp8 e5m2: overflow to Infinity from the midpoint 61440 on (IEEE)', () => {
    expect(roundToPrecision(61439, 'fp8_e5m2')).toBe(57344);
    expect(roundToPrecision(61440, 'fp8_e5m2')).toBe(Number.POSITIVE_INFINITY);
    expect(roundToPrecision(-61440, 'fp8_e5m2', { overflow: 'saturate' })).toBe(-57344);
  });
});

describe('roundArrayToPrecision', () => {
  it('rounds each entry as the scalar version does, into out or in place', () => {
    const values = new Float64Array([0.1, -2.7, 1000, 1e-5, -0]);
    const want = Array.from(values, (x) => roundToPrecision(x, 'fp8_e4m3'));
    expect(Array.from(roundArrayToPrecision(values, 'fp8_e4m3'))).toEqual(want);
    const out = new Float32Array(5);
    expect(roundArrayToPrecision(values, 'fp8_e4m3', out)).toBe(out);
    expect(Array.from(out)).toEqual(want);
    roundArrayToPrecision(values, 'fp8_e4m3', values);
    expect(Array.from(values)).toEqual(want);
    expect(Object.is(values[4], -0)).toBe(true);
  });

  it('fp64 copies and fp32 matches Math.fround', () => {
    const values = new Float64Array([0.1, 1 / 3]);
    expect(Array.from(roundArrayToPrecision(values, 'fp64'))).toEqual([0.1, 1 / 3]);
    expect(Array.from(roundArrayToPrecision(values, 'fp32'))).toEqual([Math.fround(0.1), Math.fround(1 / 3)]);
  });

  it('refuses an out of another length and unknown formats or modes', () => {
    expect(() => roundArrayToPrecision(new Float64Array(3), 'bf16', new Float64Array(2))).toThrow(
      expect.objectContaining({ code: 'SHAPE_MISMATCH' }),
    );
    expect(() => roundToPrecision(1, 'fp4' as PrecisionFormat)).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_MODE' }),
    );
    expect(() => roundToPrecision(1, 'fp16', { overflow: 'wrap' as 'saturate' })).toThrow(/overflow/);
  });
});

describe('parsePrecision', () => {
  it('accepts the names, maps fp8 to e4m3fn and names the option on an unknown one', () => {
    expect(parsePrecision('bf16')).toBe('bf16');
    expect(parsePrecision('fp8')).toBe('fp8_e4m3');
    expect(() => parsePrecision('int8')).toThrow(/engine_precision: unknown precision 'int8'/);
    expect(() => parsePrecision('x', 'trainer_precision')).toThrow(
      expect.objectContaining({ code: 'UNKNOWN_MODE', message: expect.stringMatching(/^trainer_precision/) }),
    );
  });
});
