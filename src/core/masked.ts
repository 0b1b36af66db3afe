/**
 * Masked reductions of a [B,T] matrix, as verl's `verl/utils/torch_functional.py`
 * (`masked_sum`, `masked_mean`, `masked_var`, `masked_whiten`). Reductions accumulate in float64.
 *
 * Where verl ignores a value (a masked position in a sum or mean: `torch.where(mask, x, 0)`), the lab
 * ignores it too, NaN included. Where verl's output would be NaN or it raises (whitening with fewer
 * than two valid tokens, a NaN that reaches the output), the lab throws a LabError.
 */
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type MaskArray,
  type OutOption,
  outputBuffer,
  outputBuffer64,
  type RowOutOption,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import {
  maskCountUnchecked,
  maskedMeanOf,
  maskedRowMeansUnchecked,
  maskedRowSumsUnchecked,
  maskedSumUnchecked,
} from './maskedPrimitives.js';

/** The `[B,T]` values and 0/1 mask of a masked reduction (verl `masked_*(values, mask)`). */
export interface MaskedValues {
  values: ArrayLike<number>;
  mask: MaskArray;
}
/** verl's masked_whiten variance guard: `rsqrt(var + 1e-8)`. */
export const WHITEN_EPS = 1e-8;

/** Validates shape, lengths, the 0/1 mask, and finiteness of `values` where the mask is 1. */
export function checkMasked(
  values: ArrayLike<number>,
  mask: MaskArray,
  shape: Shape2,
  field = 'values',
): void {
  checkShape(shape);
  const shapeText = `[${shape.rows},${shape.cols}]`;
  checkLength(values, shape.rows * shape.cols, field, shapeText);
  checkLength(mask, shape.rows * shape.cols, 'mask', shapeText);
  checkMask(mask, shape.cols, 'mask');
  checkFiniteWhereMasked(values, mask, shape.cols, field);
}

/** UNKNOWN_MODE unless `value` is one of `choices` (options typed as unions can still arrive from JS). */
function checkChoice(value: string, choices: readonly string[], field: string): void {
  if (!choices.includes(value)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `${field}: expected ${choices.map((c) => `'${c}'`).join(' or ')}, got '${value}'`,
      { details: { field, value } },
    );
  }
}

/** `Σ_{b,t} x·m` (verl `masked_sum(values, mask)`; masked positions, NaN included, count as 0). */
export function maskedSum(inputs: MaskedValues, shape: Shape2, field = 'values'): number {
  const { values, mask } = inputs;
  checkMasked(values, mask, shape, field);
  return maskedSumUnchecked(values, mask);
}

/** Per-row `Σ_t x·m` (verl `masked_sum(values, mask, axis=-1)`), length B. */
export function maskedRowSums(
  inputs: MaskedValues,
  shape: Shape2,
  field = 'values',
  options: RowOutOption = {},
): Float64Array {
  const { values, mask } = inputs;
  checkMasked(values, mask, shape, field);
  checkOutNotAliased(options.out, 'out', { [field]: values, mask });
  return maskedRowSumsUnchecked(
    values,
    mask,
    shape,
    outputBuffer64(options.out, shape.rows, `[${shape.rows}]`),
  );
}

/** `Σ x·m / (Σ m + 1e-8)` (verl `masked_mean`); an all-zero mask gives 0, as in verl. */
export function maskedMean(inputs: MaskedValues, shape: Shape2, field = 'values'): number {
  const { values, mask } = inputs;
  checkMasked(values, mask, shape, field);
  return maskedMeanOf(maskedSumUnchecked(values, mask), maskCountUnchecked(mask));
}

/** Per-row `Σ_t x·m / (Σ_t m + 1e-8)` (verl `masked_mean(values, mask, axis=-1)`); empty rows give 0. */
export function maskedRowMeans(
  inputs: MaskedValues,
  shape: Shape2,
  field = 'values',
  options: RowOutOption = {},
): Float64Array {
  const { values, mask } = inputs;
  checkMasked(values, mask, shape, field);
  checkOutNotAliased(options.out, 'out', { [field]: values, mask });
  return maskedRowMeansUnchecked(
    values,
    mask,
    shape,
    outputBuffer64(options.out, shape.rows, `[${shape.rows}]`),
  );
}

export interface MaskedVarOptions {
  /** `unbiased` multiplies by Σm/(Σm−1) (verl's default); `biased` is the plain masked mean of squares. */
  correction?: 'unbiased' | 'biased';
}

const MASKED_VAR_DEFAULTS: Readonly<Required<MaskedVarOptions>> = Object.freeze({ correction: 'unbiased' });

function varianceOf(
  values: ArrayLike<number>,
  mask: MaskArray,
  correction: 'unbiased' | 'biased',
  field: string,
) {
  const n = maskCountUnchecked(mask);
  const mean = maskedMeanOf(maskedSumUnchecked(values, mask), n);
  let ss = 0;
  for (let i = 0; i < values.length; i++) {
    if (mask[i] !== 0) {
      const d = (values[i] as number) - mean;
      ss += d * d;
    }
  }
  let variance = maskedMeanOf(ss, n);
  if (correction === 'unbiased') {
    if (n <= 1) {
      throw new LabError(
        'EMPTY_MASK',
        `mask: the unbiased masked variance of ${field} needs at least 2 valid tokens, the mask has ${n}`,
        { details: { field: 'mask', valid: n } },
      );
    }
    variance *= n / (n - 1);
  }
  return { mean, variance };
}

/**
 * verl `masked_var(values, mask, unbiased=True)`: `masked_mean((x − masked_mean(x))², m)`, times
 * `Σm/(Σm−1)` when unbiased. Unbiased with Σm ≤ 1 → EMPTY_MASK (verl raises ValueError).
 */
export function maskedVar(
  inputs: MaskedValues,
  shape: Shape2,
  options: MaskedVarOptions = {},
  field = 'values',
): number {
  const { values, mask } = inputs;
  checkMasked(values, mask, shape, field);
  const { correction } = { ...MASKED_VAR_DEFAULTS, ...options };
  checkChoice(correction, ['unbiased', 'biased'], 'correction');
  return varianceOf(values, mask, correction, field).variance;
}

export interface MaskedWhitenOptions extends OutOption {
  /** `subtract` (verl shift_mean=True, default) or `keep` (shift_mean=False: the mean is added back). */
  mean?: 'subtract' | 'keep';
}

const MASKED_WHITEN_DEFAULTS: Readonly<Required<Omit<MaskedWhitenOptions, 'out'>>> = Object.freeze({
  mean: 'subtract',
});

/**
 * verl `masked_whiten(values, mask, shift_mean=True)`: `(x − mean)·rsqrt(var + 1e-8)` with the masked
 * mean and unbiased masked variance over the whole batch; the output is NOT re-masked (every position
 * is transformed), so every value must be finite. [B,T] float32 out (`options.out` to reuse a buffer).
 * Errors: EMPTY_MASK when Σm ≤ 1 (verl raises), NON_FINITE anywhere in `values` (verl would output NaN).
 */
export function maskedWhiten(
  inputs: MaskedValues,
  shape: Shape2,
  options: MaskedWhitenOptions = {},
  field = 'values',
): Float32Array {
  const { values, mask } = inputs;
  const { mean: shift } = { ...MASKED_WHITEN_DEFAULTS, ...options };
  checkChoice(shift, ['subtract', 'keep'], 'mean');
  checkMasked(values, mask, shape, field);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v)) {
      const row = Math.floor(i / shape.cols);
      throw new LabError(
        'NON_FINITE',
        `${field}: value ${v} at row ${row}, token ${i - row * shape.cols} is not finite (whitening transforms every position)`,
        { details: { field, row, token: i - row * shape.cols, value: v } },
      );
    }
  }
  const out = outputBuffer(options.out, values.length, `[${shape.rows},${shape.cols}]`);
  checkOutNotAliased(out, 'out', { [field]: values, mask });
  const { mean, variance } = varianceOf(values, mask, 'unbiased', field);
  return whitenWith(values, mean, variance, shift, out);
}

/**
 * The last step of verl's `masked_whiten`: `(x − mean)·rsqrt(var + 1e-8)`, plus `mean` again with
 * 'keep' (`shift_mean=False`), at every position, into a new Float32Array of the same length (or
 * `into`, which must not be `values`). Inputs
 * are not validated (callers computed `mean` and `variance` from validated values); an output beyond
 * the float32 range is NON_FINITE (naming the position) instead of an infinity.
 */
export function whitenWith(
  values: ArrayLike<number>,
  mean: number,
  variance: number,
  shift: 'subtract' | 'keep',
  into?: Float32Array | null,
): Float32Array {
  const r = 1 / Math.sqrt(variance + WHITEN_EPS);
  const back = shift === 'keep' ? mean : 0;
  const out = outputBuffer(into, values.length, `[${values.length}]`);
  let largest = 0;
  for (let i = 0; i < values.length; i++) {
    const w = ((values[i] as number) - mean) * r + back;
    out[i] = w;
    largest = Math.max(largest, Math.abs(w));
  }
  if (!Number.isFinite(Math.fround(largest))) {
    // e.g. a masked-out value far from the valid ones when their variance is ~0 (verl: inf in float32)
    const i = out.findIndex((v) => !Number.isFinite(v));
    throw new LabError(
      'NON_FINITE',
      `values: the whitened value at position ${i} (${((values[i] as number) - mean) * r + back}) is not a finite float32`,
      { details: { field: 'values', position: i } },
    );
  }
  return out;
}

/**
 * Whitening as verl's estimators call it, on values the caller already validated (finite everywhere):
 * masked mean and unbiased masked variance, EMPTY_MASK when Σm ≤ 1.
 */
export function whitenValidated(
  values: FloatArray,
  mask: MaskArray,
  field: string,
  into?: Float32Array | null,
): Float32Array {
  const { mean, variance } = varianceOf(values, mask, 'unbiased', field);
  return whitenWith(values, mean, variance, 'subtract', into);
}
