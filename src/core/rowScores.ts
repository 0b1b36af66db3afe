/**
 * Entry helpers shared by the outcome-advantage estimators: validate a [B,T] batch once and reduce
 * token rewards to one score per row.
 */
import { checkLength, checkShape, type FloatArray, type MaskArray, type Shape2 } from './batch.js';
import { LabError } from './errors.js';

/** Throws SHAPE_MISMATCH unless `arr` has B·T entries (names the field and the shape). */
export function checkMatrix(arr: ArrayLike<unknown>, shape: Shape2, field: string): void {
  checkLength(arr, shape.rows * shape.cols, field, `[${shape.rows},${shape.cols}]`);
}

/** Validates the shape and the lengths of a token-value matrix and its mask. */
export function checkBatch(values: FloatArray, mask: MaskArray, shape: Shape2, valuesField: string): void {
  checkShape(shape);
  checkMatrix(values, shape, valuesField);
  checkMatrix(mask, shape, 'response_mask');
}

function throwNonFinite(values: ArrayLike<number>, row: number, cols: number, field: string): never {
  for (let t = 0; t < cols; t++) {
    const v = values[row * cols + t] as number;
    if (!Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: value ${v} at row ${row}, token ${t} is not finite`, {
        details: { field, row, token: t, value: v },
      });
    }
  }
  throw new LabError('NON_FINITE', `${field}: the sum of row ${row} overflows`, { details: { field, row } });
}

/**
 * `s_b = Σ_t values[b,t]` over ALL T positions (verl's `token_level_rewards.sum(dim=-1)`: the mask is
 * not applied). Accumulated in float64; rounded to float32 when the input is a Float32Array, as verl's
 * float32 sum is (the two differ by at most about one float32 ulp per row).
 * A non-finite entry anywhere makes the row sum non-finite, so one check per row finds it; the
 * error names the first offending (row, token).
 */
export function rowSums(values: FloatArray, shape: Shape2, field = 'token_level_rewards'): Float64Array {
  const { rows, cols } = shape;
  const out = new Float64Array(rows);
  const round = values instanceof Float32Array;
  for (let b = 0; b < rows; b++) {
    let s = 0;
    const base = b * cols;
    for (let t = 0; t < cols; t++) s += values[base + t] as number;
    if (!Number.isFinite(s)) throwNonFinite(values, b, cols, field);
    out[b] = round ? Math.fround(s) : s;
  }
  return out;
}

/** Throws BAD_MASK naming the first mask entry of row `row` that is not 0 or 1. */
export function throwBadMaskInRow(
  mask: MaskArray,
  row: number,
  cols: number,
  field = 'response_mask',
): never {
  for (let t = 0; t < cols; t++) {
    const v = mask[row * cols + t] as number;
    if (v !== 0 && v !== 1) {
      throw new LabError('BAD_MASK', `${field}: value ${v} at row ${row}, token ${t} is not 0 or 1`, {
        details: { field, row, token: t, value: v },
      });
    }
  }
  throw new LabError('BAD_MASK', `${field}: row ${row} is not 0/1`, { details: { field, row } });
}

/**
 * `out[b,t] = a_b` where `mask[b,t] = 1`, `+0` where it is 0 (verl multiplies, which gives `-0.0`
 * for a negative `a_b`; a plain `+0` keeps equality checks free of signed-zero surprises).
 * Validates the mask in the same pass (BAD_MASK names row and token).
 */
export function broadcastRows(perRow: ArrayLike<number>, mask: MaskArray, shape: Shape2): Float32Array {
  const { rows, cols } = shape;
  const out = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    const a = (perRow[b] as number) + 0; // -0 -> +0
    const base = b * cols;
    const end = base + cols;
    let bad = 0;
    for (let i = base; i < end; i++) {
      const m = mask[i] as number;
      out[i] = m === 1 ? a : 0;
      bad |= m !== 0 && m !== 1 ? 1 : 0;
    }
    if (bad !== 0) throwBadMaskInRow(mask, b, cols);
  }
  return out;
}
