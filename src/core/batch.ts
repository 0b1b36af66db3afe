/**
 * Batch shapes and entry validation shared by every kernel.
 *
 * A batch is row-major `[B,T]`: token values are `Float32Array` (verl computes in float32; a
 * `Float64Array` is accepted for float64 reference runs), masks are `Float32Array`/`Uint8Array`/
 * `Float64Array` holding exactly 0 or 1, group labels are a length-B array of strings or integers.
 * Kernels validate once at their entry with these helpers and never inside the hot loop.
 */
import { LabError } from './errors.js';

export type FloatArray = Float32Array | Float64Array;
export type MaskArray = Float32Array | Float64Array | Uint8Array;
export type GroupLabel = string | number;
export type GroupLabels = ArrayLike<GroupLabel>;

/** Shape of a row-major matrix. */
export interface Shape2 {
  rows: number;
  cols: number;
}

/** Checks that `B`, `T` are positive integers (B=0 or T=0 is rejected: nothing to compute). */
export function checkShape(shape: Shape2, name = 'shape'): void {
  const { rows, cols } = shape;
  if (!Number.isInteger(rows) || rows <= 0 || !Number.isInteger(cols) || cols <= 0) {
    throw new LabError('SHAPE_MISMATCH', `${name}: expected positive integer [B,T], got [${rows},${cols}]`, {
      details: { field: name, rows, cols },
    });
  }
}

/** Checks that `arr` holds exactly `shape.rows * shape.cols` values. */
export function checkLength(
  arr: ArrayLike<unknown>,
  expected: number,
  field: string,
  shapeText: string,
): void {
  // `arr?.length`: a JavaScript caller that passes the arrays positionally (or leaves a field out of
  // the inputs object) gets this error naming the field, not a TypeError
  const actual = (arr as ArrayLike<unknown> | undefined)?.length;
  if (actual !== expected) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${field}: expected ${expected} values for shape ${shapeText}, got ${actual === undefined ? 'no array' : actual}`,
      { details: { field, expected, actual } },
    );
  }
}

/**
 * Option of every kernel that returns a new typed array: a preallocated buffer to write the result
 * into instead (reused across steps, it saves the allocation and, for large batches, the first-touch
 * page faults of fresh memory). It is then the returned array, overwritten at every position. It must
 * not share memory with any of the kernel's typed-array inputs nor with its other output buffers
 * (kernels read inputs while writing the output, so an overlap would give wrong numbers): an overlap
 * is BAD_ARGUMENT naming both (see {@link checkOutNotAliased}); a subarray of the same ArrayBuffer
 * that does not overlap any of them is fine.
 */
export interface OutOption {
  out?: Float32Array | null;
}

/** {@link OutOption} of kernels returning one float64 value per row: a length-B buffer. */
export interface RowOutOption {
  out?: Float64Array | null;
}

/** {@link OutOption} for kernels returning two distinct [B,T] arrays: `out` for the advantages, `outReturns` for the returns. */
export interface OutReturnsOption extends OutOption {
  outReturns?: Float32Array | null;
}

/**
 * `out` checked (a Float32Array of `length` values, else SHAPE_MISMATCH or BAD_ARGUMENT naming
 * `field`), or a new zero-filled Float32Array when `out` is null or undefined.
 */
export function outputBuffer(
  out: Float32Array | null | undefined,
  length: number,
  shapeText: string,
  field = 'out',
): Float32Array {
  if (out === null || out === undefined) return new Float32Array(length);
  if (!(out instanceof Float32Array)) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected a Float32Array, got ${describe(out)}`, {
      details: { field },
    });
  }
  checkLength(out, length, field, shapeText);
  return out;
}

/** {@link outputBuffer} for a float64 result (gradients, per-row values). */
export function outputBuffer64(
  out: Float64Array | null | undefined,
  length: number,
  shapeText: string,
  field = 'out',
): Float64Array {
  if (out === null || out === undefined) return new Float64Array(length);
  if (!(out instanceof Float64Array)) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected a Float64Array, got ${describe(out)}`, {
      details: { field },
    });
  }
  checkLength(out, length, field, shapeText);
  return out;
}

/**
 * Throws BAD_ARGUMENT naming `field` and the input when the output buffer `out` shares memory with
 * one of `inputs` (same ArrayBuffer, overlapping byte ranges; disjoint subarrays of one buffer are
 * fine). `inputs` maps each typed-array input (or other output buffer) of the kernel, by its verl
 * field name, to its value; entries that are not typed arrays (null, label arrays, numbers) are
 * skipped, as is a null/undefined `out`. Cost: one comparison per entry, nothing per element. Call it
 * before anything is written into `out`.
 */
export function checkOutNotAliased(
  out: unknown,
  field: string,
  inputs: Readonly<Record<string, unknown>>,
): void {
  if (!ArrayBuffer.isView(out) || out.byteLength === 0) return;
  const start = out.byteOffset;
  const end = start + out.byteLength;
  for (const name in inputs) {
    const v = inputs[name];
    if (!ArrayBuffer.isView(v) || v.buffer !== out.buffer || v.byteLength === 0) continue;
    if (v.byteOffset < end && start < v.byteOffset + v.byteLength) {
      throw new LabError('BAD_ARGUMENT', `${field}: shares memory with ${name}; pass a separate buffer`, {
        details: { field, input: name },
      });
    }
  }
}

function describe(x: unknown): string {
  return typeof x === 'object' && x !== null ? (x.constructor?.name ?? 'an object') : typeof x;
}

/** Throws NON_FINITE naming the first non-finite entry as (row, token). */
export function checkFinite(arr: ArrayLike<number>, cols: number, field: string): void {
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i] as number;
    if (!Number.isFinite(v)) {
      const row = Math.floor(i / cols);
      const token = i - row * cols;
      throw new LabError('NON_FINITE', `${field}: value ${v} at row ${row}, token ${token} is not finite`, {
        details: { field, row, token, value: v },
      });
    }
  }
}

/**
 * Like {@link checkFinite} but only where the mask is 1: verl ignores NaN in padding for token-mean
 * (masked positions are replaced by 0 first), so a NaN under a 0 mask is legal input.
 */
export function checkFiniteWhereMasked(
  arr: ArrayLike<number>,
  mask: MaskArray,
  cols: number,
  field: string,
): void {
  for (let i = 0; i < arr.length; i++) {
    const v = arr[i] as number;
    if (mask[i] !== 0 && !Number.isFinite(v)) {
      const row = Math.floor(i / cols);
      const token = i - row * cols;
      throw new LabError(
        'NON_FINITE',
        `${field}: value ${v} at row ${row}, token ${token} is not finite (mask is 1 there)`,
        { details: { field, row, token, value: v } },
      );
    }
  }
}

/** Throws BAD_MASK naming the first entry that is not exactly 0 or 1. */
export function checkMask(mask: MaskArray, cols: number, field = 'response_mask'): void {
  for (let i = 0; i < mask.length; i++) {
    const v = mask[i] as number;
    if (v !== 0 && v !== 1) {
      const row = Math.floor(i / cols);
      const token = i - row * cols;
      throw new LabError('BAD_MASK', `${field}: value ${v} at row ${row}, token ${token} is not 0 or 1`, {
        details: { field, row, token, value: v },
      });
    }
  }
}

/** Checks a length-B label array (strings or finite numbers). */
export function checkLabels(labels: GroupLabels, rows: number, field = 'index'): void {
  if (labels.length !== rows) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${field}: expected ${rows} group labels (one per row), got ${labels.length}`,
      {
        details: { field, expected: rows, actual: labels.length },
      },
    );
  }
  for (let i = 0; i < rows; i++) {
    const l = labels[i];
    if (typeof l === 'number' ? !Number.isFinite(l) : typeof l !== 'string') {
      throw new LabError(
        'BAD_VALUE',
        `${field}: label at row ${i} is ${String(l)}, expected a string or finite number`,
        {
          details: { field, row: i },
        },
      );
    }
  }
}

/** Row-major index helper for readability at call sites outside hot loops. */
export function at(row: number, token: number, cols: number): number {
  return row * cols + token;
}

/**
 * The inputs of verl's outcome advantage estimators (`compute_*_outcome_advantage`): the `[B,T]`
 * token rewards (`token_level_rewards`; the estimators sum each row over all T positions), the
 * `[B,T]` 0/1 `response_mask` and the length-B group labels (`index`, verl's uid of the prompt).
 * One named object, so that rewards and mask (both float32 [B,T]) cannot be swapped silently.
 */
export interface OutcomeBatch {
  tokenLevelRewards: FloatArray;
  responseMask: MaskArray;
  index: GroupLabels;
}

/** The arrays of an {@link OutcomeBatch} by verl's names, the `inputs` of {@link checkOutNotAliased}. */
export function outcomeFields(batch: OutcomeBatch): Record<string, unknown> {
  return {
    token_level_rewards: batch.tokenLevelRewards,
    response_mask: batch.responseMask,
    index: batch.index,
  };
}
