/**
 * The unchecked masked reductions every kernel uses after its single entry check (internal: not
 * exported from the package). verl writes them once, in `verl/utils/torch_functional.py`
 * (`masked_sum`, `masked_mean`); so does the lab, here. The checked public versions are in
 * masked.ts; a kernel that already validated its shape, its 0/1 mask and the finiteness of the
 * values where the mask is 1 calls these directly instead of validating the same arrays again.
 *
 * A position counts when its mask entry is not 0 (after validation: exactly 1). Where the mask is 0
 * the value is not read, so NaN in padding is ignored, as verl's `torch.where(mask, x, 0)` does.
 * Sums accumulate in float64.
 */
import type { MaskArray, Shape2 } from './batch.js';

/** verl's masked_mean denominator guard: `Σ m + 1e-8`. */
export const MASKED_MEAN_EPS = 1e-8;

/**
 * verl `masked_mean`'s division: `sum / (count + 1e-8)` (0 for an empty mask, as in verl). Kernels
 * that accumulate the masked sum and the count in their own fused pass finish with this.
 */
export function maskedMeanOf(sum: number, count: number): number {
  return sum / (count + MASKED_MEAN_EPS);
}

/** `Σ_{i ∈ [from,to)} x_i·[m_i ≠ 0]` (verl `masked_sum` over a flat range), unchecked. */
export function maskedSumUnchecked(
  values: ArrayLike<number>,
  mask: MaskArray,
  from = 0,
  to = mask.length,
): number {
  let s = 0;
  for (let i = from; i < to; i++) if (mask[i] !== 0) s += values[i] as number;
  return s;
}

/** `Σ_{i ∈ [from,to)} [m_i ≠ 0]`: the number of valid positions, unchecked. */
export function maskCountUnchecked(mask: MaskArray, from = 0, to = mask.length): number {
  let n = 0;
  for (let i = from; i < to; i++) if (mask[i] !== 0) n++;
  return n;
}

/** verl `masked_mean(values, mask)` over the whole batch: `Σ x·m / (Σ m + 1e-8)`, unchecked. */
export function maskedMeanUnchecked(values: ArrayLike<number>, mask: MaskArray): number {
  return maskedMeanOf(maskedSumUnchecked(values, mask), maskCountUnchecked(mask));
}

/** Per-row `Σ_t x·m` (verl `masked_sum(values, mask, axis=-1)`), length B, unchecked. */
export function maskedRowSumsUnchecked(
  values: ArrayLike<number>,
  mask: MaskArray,
  shape: Shape2,
  out: Float64Array = new Float64Array(shape.rows),
): Float64Array {
  const { rows, cols } = shape;
  for (let b = 0; b < rows; b++) out[b] = maskedSumUnchecked(values, mask, b * cols, (b + 1) * cols);
  return out;
}

/** Per-row verl `masked_mean(values, mask, axis=-1)`: `Σ_t x·m / (Σ_t m + 1e-8)`, length B, unchecked. */
export function maskedRowMeansUnchecked(
  values: ArrayLike<number>,
  mask: MaskArray,
  shape: Shape2,
  out: Float64Array = new Float64Array(shape.rows),
): Float64Array {
  const { rows, cols } = shape;
  for (let b = 0; b < rows; b++) {
    const from = b * cols;
    const to = from + cols;
    out[b] = maskedMeanOf(maskedSumUnchecked(values, mask, from, to), maskCountUnchecked(mask, from, to));
  }
  return out;
}
