/**
 * Rounding float64 values to the number formats inference engines compute in, so the lab can run a
 * model "at bf16" or "at fp8" and measure what that does to log-probs (the training–inference
 * mismatch of issue 30). Every function returns the float64 value of the nearest representable
 * number, not its bit pattern: code that runs "at precision F" rounds each stored weight and each
 * computed output with {@link roundToPrecision} and keeps computing in doubles.
 *
 * A binary floating-point format with `p` significand bits (the implicit leading 1 included), minimum
 * normal exponent `emin` and largest finite value `max` represents, for every exponent `e ≥ emin`,
 * the numbers `k · 2^(e − p + 1)` with integer `0 ≤ k < 2^p`; below `2^emin` the spacing stays
 * `2^(emin − p + 1)` (subnormals, gradual underflow). Rounding is round-to-nearest, ties-to-even
 * (IEEE 754 `roundTiesToEven`, what `torch.Tensor.to(dtype)` and CUDA's `__float2bfloat16_rn` /
 * `__float2half_rn` do): pick the representable neighbour nearest to `x`, and at an exact midpoint
 * the one whose last significand bit is 0.
 *
 * | format (torch dtype) | p | emin | max finite | min subnormal | overflow |
 * |---|---|---|---|---|---|
 * | `fp64` (`float64`) | 53 | −1022 | ≈1.8e308 | 2^−1074 | identity: values are already doubles |
 * | `fp32` (`float32`) | 24 | −126 | ≈3.4e38 | 2^−149 | ±Infinity (IEEE) |
 * | `bf16` (`bfloat16`) | 8 | −126 | ≈3.39e38 | 2^−133 | ±Infinity (IEEE) |
 * | `fp16` (`float16`) | 11 | −14 | 65504 | 2^−24 | ±Infinity (IEEE) |
 * | `fp8_e4m3` (`float8_e4m3fn`) | 4 | −6 | 448 | 2^−9 | saturate to ±448 (default) or NaN |
 * | `fp8_e5m2` (`float8_e5m2`) | 3 | −14 | 57344 | 2^−16 | ±Infinity (IEEE) or saturate |
 *
 * Overflow is decided after rounding: a value overflows when it rounds (with an unbounded exponent)
 * to something larger than `max`. In fp16 that is `|x| ≥ 65520` (the midpoint 65520 between 65504
 * and 2^16 goes to the even 2^16, which overflows); in e4m3fn it is `|x| > 464` (464, the midpoint
 * between 448 = 1.110·2^8 and 480 = 1.111·2^8, goes to the even 448; 480's code S.1111.111 is NaN).
 *
 * What happens at overflow, by `overflow` option:
 * - `'nonfinite'`: IEEE behaviour: ±Infinity; e4m3fn has no infinity, so NaN. This is the OCP OFP8
 *   spec's non-saturating mode and what PyTorch's eager cast did up to 2026: c10
 *   `fp8e4m3fn_from_fp32_value` (torch/headeronly/util/Float8_e4m3fn.h at 298f37ee) returns 0x7F
 *   (NaN) for `|x| ≥ 480` and rounds (464, 480) into the NaN code; ml_dtypes does the same
 *   (jax-ml/ml_dtypes#260, #400: 465 → nan).
 * - `'saturate'`: ±max. What the kernels an fp8 inference engine runs do: vLLM's fp8 quantization
 *   (`scaled_fp8_conversion`, csrc/quantization/fp8/common.cu) clamps with
 *   `fmax(-FP8_E4M3_MAX, fmin(x, FP8_E4M3_MAX))` before converting (which, through `fmin`, would also
 *   turn a NaN into 448; here NaN stays NaN),
 *   its Triton quantizers `tl.clamp(x, -448, 448)`, CUDA's `__nv_cvt_float_to_fp8(…, __NV_SATFINITE,
 *   …)` saturates, Triton's cast saturates (pytorch/ao#1912), and PyTorch's own CPU/C++ cast was made
 *   to saturate on finite overflow by pytorch/pytorch#178817 (2026-04). Infinities saturate to ±max as
 *   well; NaN stays NaN.
 * The default is `'saturate'` for e4m3fn (the kernels) and `'nonfinite'` for every IEEE format
 * (fp32/bf16/fp16/e5m2 casts in torch and CUDA's `_rn` intrinsics give ±Infinity).
 *
 * Rounding here is one rounding of the float64 value. A torch cast from a float64 tensor to bf16,
 * fp16 or fp8 goes through float32 (c10's converters take a `float`), which rounds twice; the two
 * differ only for doubles within 2^−24 (relative) of a midpoint of the narrow format, and never for
 * inputs that are already float32.
 */
import { LabError } from './errors.js';

/** The formats {@link roundToPrecision} rounds to (`engine_precision` values, plus `fp8` = `fp8_e4m3`). */
export type PrecisionFormat = 'fp64' | 'fp32' | 'bf16' | 'fp16' | 'fp8_e4m3' | 'fp8_e5m2';

/** The names accepted by {@link parsePrecision}: the formats and the alias `fp8` (= `fp8_e4m3`). */
export const PRECISION_NAMES = Object.freeze([
  'fp64',
  'fp32',
  'bf16',
  'fp16',
  'fp8',
  'fp8_e4m3',
  'fp8_e5m2',
] as const);

/** What a value beyond the largest finite one becomes (see the file comment). */
export type OverflowMode = 'saturate' | 'nonfinite';

/** The parameters of one format (p, emin and max as in the file comment's table). */
export interface PrecisionSpec {
  /** torch's name for the dtype. */
  readonly torchName: string;
  /** Significand bits p, the implicit leading bit included (stored mantissa bits + 1). */
  readonly significandBits: number;
  /** Exponent field width in bits. */
  readonly exponentBits: number;
  /** Smallest normal exponent: the smallest normal number is 2^emin. */
  readonly minExponent: number;
  /** Largest finite value. */
  readonly maxFinite: number;
  /** Smallest positive (subnormal) value, 2^(emin − p + 1). */
  readonly minSubnormal: number;
  /** Whether the format has ±Infinity (e4m3fn does not). */
  readonly hasInfinity: boolean;
  /** The overflow mode used when none is given. */
  readonly defaultOverflow: OverflowMode;
}

function spec(
  torchName: string,
  p: number,
  exponentBits: number,
  emin: number,
  maxFinite: number,
  hasInfinity: boolean,
  defaultOverflow: OverflowMode,
): PrecisionSpec {
  return Object.freeze({
    torchName,
    significandBits: p,
    exponentBits,
    minExponent: emin,
    maxFinite,
    minSubnormal: 2 ** (emin - p + 1),
    hasInfinity,
    defaultOverflow,
  });
}

/** Every format's parameters. */
export const PRECISION_SPECS: Readonly<Record<PrecisionFormat, PrecisionSpec>> = Object.freeze({
  fp64: spec('float64', 53, 11, -1022, Number.MAX_VALUE, true, 'nonfinite'),
  fp32: spec('float32', 24, 8, -126, (2 - 2 ** -23) * 2 ** 127, true, 'nonfinite'),
  bf16: spec('bfloat16', 8, 8, -126, (2 - 2 ** -7) * 2 ** 127, true, 'nonfinite'),
  fp16: spec('float16', 11, 5, -14, 65504, true, 'nonfinite'),
  fp8_e4m3: spec('float8_e4m3fn', 4, 4, -6, 448, false, 'saturate'),
  fp8_e5m2: spec('float8_e5m2', 3, 5, -14, 57344, true, 'nonfinite'),
});

/**
 * The format named `name` (`engine_precision`): one of {@link PRECISION_NAMES}; `fp8` means
 * `fp8_e4m3` (e4m3fn is the format vLLM's `quantization="fp8"` stores weights and activations in).
 * Errors: UNKNOWN_MODE naming `option` (default `engine_precision`) and the accepted names.
 */
export function parsePrecision(name: string, option = 'engine_precision'): PrecisionFormat {
  if (name === 'fp8') return 'fp8_e4m3';
  if ((PRECISION_NAMES as readonly string[]).includes(name)) return name as PrecisionFormat;
  throw new LabError(
    'UNKNOWN_MODE',
    `${option}: unknown precision '${name}' (expected one of ${PRECISION_NAMES.join(', ')})`,
    { details: { field: option, value: name, allowed: [...PRECISION_NAMES] } },
  );
}

function checkFormat(format: string): PrecisionSpec {
  const s = (PRECISION_SPECS as Record<string, PrecisionSpec>)[format];
  if (!s) {
    throw new LabError(
      'UNKNOWN_MODE',
      `format: unknown precision '${format}' (expected one of ${Object.keys(PRECISION_SPECS).join(', ')})`,
      { details: { field: 'format', value: format } },
    );
  }
  return s;
}

function checkOverflow(mode: string): OverflowMode {
  if (mode !== 'saturate' && mode !== 'nonfinite') {
    throw new LabError('UNKNOWN_MODE', `overflow: unknown mode '${mode}' (expected saturate or nonfinite)`, {
      details: { field: 'overflow', value: mode },
    });
  }
  return mode;
}

// One 8-byte scratch to read a double's exponent field.
const scratch = new Float64Array(1);
const scratchHi = new Uint32Array(scratch.buffer);
// little-endian hosts keep the high word (sign, exponent) at index 1
const HI = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;

/** floor(log2 a) for a finite a > 0 given as a normal double; −1023 for subnormal doubles. */
function exponentOf(a: number): number {
  scratch[0] = a;
  return (((scratchHi[HI] as number) >>> 20) & 0x7ff) - 1023;
}

/** The rounding kernel, no validation: `s` a finite-precision format, `overflow` checked. */
function roundWith(x: number, s: PrecisionSpec, overflow: OverflowMode): number {
  if (Number.isNaN(x)) return x;
  if (x === 0) return x; // ±0 keep their sign
  const a = Math.abs(x);
  let r: number;
  if (a === Number.POSITIVE_INFINITY) r = a;
  else {
    // quantum of the binade of a (subnormals share the smallest normal binade's quantum)
    const e = Math.max(exponentOf(a), s.minExponent);
    const q = 2 ** (e - s.significandBits + 1);
    const y = a / q; // exact: q is a power of two and y < 2^p+1 stays far inside the double range
    const f = Math.floor(y);
    const frac = y - f; // exact (y < 2^53)
    const k = frac > 0.5 || (frac === 0.5 && f % 2 === 1) ? f + 1 : f;
    r = k * q;
  }
  if (r > s.maxFinite) {
    if (overflow === 'saturate') r = s.maxFinite;
    else r = s.hasInfinity ? Number.POSITIVE_INFINITY : Number.NaN;
  }
  return x < 0 ? -r : r;
}

/** Options of {@link roundToPrecision} and {@link roundArrayToPrecision}. */
export interface RoundOptions {
  /** What overflow gives; default the format's {@link PrecisionSpec.defaultOverflow}. */
  overflow?: OverflowMode;
}

/**
 * `x` rounded to the nearest value of `format`, ties to even, as a double (torch:
 * `torch.tensor(x, dtype=float64).to(dtype).item()` for inputs that are float32 already; see the file
 * comment for overflow and double rounding). `fp64` returns `x` unchanged; `fp32` equals
 * `Math.fround(x)` (same IEEE rounding). NaN stays NaN; −0 stays −0; a value below half the smallest
 * subnormal gives ±0, exactly half of it gives ±0 (0 is even), above half gives ±min subnormal.
 * Errors: UNKNOWN_MODE for an unknown format or overflow mode.
 */
export function roundToPrecision(x: number, format: PrecisionFormat, options: RoundOptions = {}): number {
  const s = checkFormat(format);
  const overflow = checkOverflow(options.overflow ?? s.defaultOverflow);
  if (format === 'fp64') return x;
  if (format === 'fp32' && overflow === 'nonfinite') return Math.fround(x);
  return roundWith(x, s, overflow);
}

/**
 * Rounds every entry of `values` (length n) to `format` as {@link roundToPrecision} does, writing
 * into `out` (length n; may be `values` itself for in-place rounding; default a new Float64Array)
 * and returning it. A Float32Array `out` stores the rounded values exactly for every format but
 * fp64 (every other format's values are float32 values; an fp64 result is rounded again to fp32).
 * Errors: SHAPE_MISMATCH when `out` has another length; UNKNOWN_MODE as {@link roundToPrecision}.
 */
export function roundArrayToPrecision<O extends Float64Array | Float32Array = Float64Array>(
  values: Float64Array | Float32Array,
  format: PrecisionFormat,
  out?: O,
  options: RoundOptions = {},
): O {
  const s = checkFormat(format);
  const overflow = checkOverflow(options.overflow ?? s.defaultOverflow);
  const n = values.length;
  const res = (out ?? new Float64Array(n)) as O;
  if (res.length !== n) {
    throw new LabError('SHAPE_MISMATCH', `out: expected ${n} values, got ${res.length}`, {
      details: { field: 'out', expected: n, actual: res.length },
    });
  }
  if (format === 'fp64') {
    if (res !== values) for (let i = 0; i < n; i++) res[i] = values[i] as number;
  } else if (format === 'fp32' && overflow === 'nonfinite') {
    for (let i = 0; i < n; i++) res[i] = Math.fround(values[i] as number);
  } else {
    for (let i = 0; i < n; i++) res[i] = roundWith(values[i] as number, s, overflow);
  }
  return res;
}
