/**
 * Entry helpers shared by the outcome-advantage estimators: validate a [B,T] batch once and reduce
 * token rewards to one score per row.
 */
import {
  checkLength,
  checkShape,
  type FloatArray,
  type GroupLabels,
  type MaskArray,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { factorizeLabels, type GroupIds } from './groupwise.js';

/** Throws SHAPE_MISMATCH unless `arr` has B·T entries (names the field and the shape). */
export function checkMatrixLength(arr: ArrayLike<unknown>, shape: Shape2, field: string): void {
  checkLength(arr, shape.rows * shape.cols, field, `[${shape.rows},${shape.cols}]`);
}

/** Validates the shape and the lengths of a token-value matrix and its mask. */
export function checkTokenBatch(
  values: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  valuesField: string,
): void {
  checkShape(shape);
  checkMatrixLength(values, shape, valuesField);
  checkMatrixLength(mask, shape, 'response_mask');
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
 * error names the first offending (row, token). A float32 row whose finite sum exceeds the float32
 * range (verl's float32 sum would be inf) is NON_FINITE too.
 */
export function rowSums(values: FloatArray, shape: Shape2, field = 'token_level_rewards'): Float64Array {
  const { rows, cols } = shape;
  const out = new Float64Array(rows);
  if (values instanceof Float32Array && values.byteOffset % 8 === 0 && cols % 8 === 0) {
    sparseFloat32RowSums(
      values,
      new Float64Array(values.buffer, values.byteOffset, (rows * cols) / 2),
      cols,
      out,
    );
  } else {
    denseRowSums(values, cols, out);
  }
  for (let b = 0; b < rows; b++) {
    const s = out[b] as number;
    if (!Number.isFinite(s)) throwNonFinite(values, b, cols, field);
    if (values instanceof Float32Array) {
      const s32 = Math.fround(s);
      if (!Number.isFinite(s32)) {
        throw new LabError('NON_FINITE', `${field}: the sum of row ${b} (${s}) overflows float32`, {
          details: { field, row: b },
        });
      }
      out[b] = s32;
    }
  }
  return out;
}

function denseRowSums(values: FloatArray, cols: number, out: Float64Array): void {
  for (let b = 0; b < out.length; b++) {
    // Four partial sums break the add-latency chain (the order changes the float64 sum by far less
    // than the float32 rounding that follows).
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    const base = b * cols;
    const end = base + cols;
    let i = base;
    for (; i + 3 < end; i += 4) {
      s0 += values[i] as number;
      s1 += values[i + 1] as number;
      s2 += values[i + 2] as number;
      s3 += values[i + 3] as number;
    }
    for (; i < end; i++) s0 += values[i] as number;
    out[b] = s0 + s1 + (s2 + s3);
  }
}

/**
 * Outcome rewards are mostly zeros (one reward per row), so blocks of 8 float32 values are first
 * tested through a Float64Array view, 2 values per comparison: a block whose four words are all ±0.0
 * is skipped. Any other block, including one holding a NaN or ±Inf, is summed value by value, so the
 * result is the same sum (up to float64 rounding order) and non-finite values still surface.
 */
function sparseFloat32RowSums(
  values: Float32Array,
  words: Float64Array,
  cols: number,
  out: Float64Array,
): void {
  const wordsPerRow = cols / 2;
  for (let b = 0; b < out.length; b++) {
    let s = 0;
    const wBase = b * wordsPerRow;
    const wEnd = wBase + wordsPerRow;
    for (let w = wBase; w < wEnd; w += 4) {
      if (words[w] !== 0 || words[w + 1] !== 0 || words[w + 2] !== 0 || words[w + 3] !== 0) {
        const i = 2 * w;
        s +=
          (values[i] as number) +
          (values[i + 1] as number) +
          (values[i + 2] as number) +
          (values[i + 3] as number) +
          ((values[i + 4] as number) +
            (values[i + 5] as number) +
            (values[i + 6] as number) +
            (values[i + 7] as number));
      }
    }
    out[b] = s;
  }
}

/** One outcome score per row and the dense groups of the rows: where every group estimator starts. */
export interface GroupedScores {
  /** `s_b = Σ_t token_level_rewards[b,t]`, length B (see {@link rowSums}). */
  scores: Float64Array;
  /** Dense group ids by exact label equality (see `factorizeLabels`). */
  groups: GroupIds;
}

/**
 * Entry of verl's loop-style group estimators (rloo, opo, gpg, grpo_passk,
 * reinforce_plus_plus_baseline): validates the [B,T] shape and lengths, then the B labels (BAD_VALUE,
 * SHAPE_MISMATCH), then sums each row over ALL T positions (`token_level_rewards.sum(dim=-1)`; NON_FINITE
 * names row and token) and numbers the groups in first-appearance order (Python dict equality: `1` ≠
 * `"1"`). The mask is only length-checked here; the caller's {@link broadcastRows} validates its 0/1 values.
 */
export function groupedRowScores(
  tokenLevelRewards: FloatArray,
  responseMask: MaskArray,
  index: GroupLabels,
  shape: Shape2,
): GroupedScores {
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  const groups = factorizeLabels(index, shape.rows);
  return { scores: rowSums(tokenLevelRewards, shape), groups };
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
 * What one pass over a 0/1 mask learns about each row: the number of valid tokens and, when the valid
 * tokens form a prefix `[0, len)` (right padding, the common case), that length; -1 for rows with
 * holes (multi-turn tool tokens) or valid tokens after padding.
 */
export interface MaskLayout {
  validTokens: Int32Array;
  prefixLength: Int32Array;
}

/** Bit patterns read through a Float64Array view: two float32 ones, eight uint8 ones. */
const F32_ONE_PAIR = new Float64Array(new Float32Array([1, 1]).buffer)[0] as number;
const U8_ONE_OCTET = new Float64Array(new Uint8Array([1, 1, 1, 1, 1, 1, 1, 1]).buffer)[0] as number;

/**
 * Entries [from, from+per) of row `b` as a bit pattern (bit k set when entry k is 1); BAD_MASK when one
 * is neither 0 nor 1. Kept out of the wide loop so that loop stays small.
 */
function onesPattern(mask: MaskArray, b: number, cols: number, from: number, per: number): number {
  let bits = 0;
  for (let k = 0; k < per; k++) {
    const m = mask[b * cols + from + k] as number;
    if (m === 1) bits |= 1 << k;
    else if (m !== 0) throwBadMaskInRow(mask, b, cols);
  }
  return bits;
}

function popcount8(x: number): number {
  let c = 0;
  for (let v = x; v !== 0; v &= v - 1) c++;
  return c;
}

/**
 * Wide scan: `words` views the mask 8 bytes at a time (`per` mask entries per word). A word equal to
 * `ones` is `per` ones, a word equal to +0/-0 is all zeros (a float32 or uint8 zero pattern; -0.0 as a
 * double is one +0 and one -0 float, both valid zeros); anything else is checked entry by entry.
 * Four words per step, with one combined test for the two common cases (all ones, all zeros).
 */
function scanWide(
  mask: MaskArray,
  words: Float64Array,
  per: number,
  ones: number,
  layout: MaskLayout,
  cols: number,
): void {
  const rows = layout.validTokens.length;
  const perRow = cols / per;
  for (let b = 0; b < rows; b++) {
    const wBase = b * perRow;
    let n = 0;
    let last = -1;
    let w = 0;
    for (; w + 3 < perRow; w += 4) {
      const j = wBase + w;
      const v0 = words[j] as number;
      const v1 = words[j + 1] as number;
      const v2 = words[j + 2] as number;
      const v3 = words[j + 3] as number;
      if (v0 === ones && v1 === ones && v2 === ones && v3 === ones) {
        n += 4 * per;
        last = (w + 4) * per - 1;
      } else if (v0 !== 0 || v1 !== 0 || v2 !== 0 || v3 !== 0) {
        for (let k = w; k < w + 4; k++) {
          const bits = wordOnes(mask, words[wBase + k] as number, ones, b, cols, k, per);
          if (bits !== 0) {
            n += popcount8(bits);
            last = k * per + 31 - Math.clz32(bits);
          }
        }
      }
    }
    for (; w < perRow; w++) {
      const bits = wordOnes(mask, words[wBase + w] as number, ones, b, cols, w, per);
      if (bits !== 0) {
        n += popcount8(bits);
        last = w * per + 31 - Math.clz32(bits);
      }
    }
    layout.validTokens[b] = n;
    layout.prefixLength[b] = last === n - 1 ? n : -1;
  }
}

/** Ones of word `w` as a bit pattern: the fast cases by value, anything else entry by entry. */
function wordOnes(
  mask: MaskArray,
  v: number,
  ones: number,
  b: number,
  cols: number,
  w: number,
  per: number,
): number {
  if (v === ones) return (1 << per) - 1;
  if (v === 0) return 0;
  return onesPattern(mask, b, cols, w * per, per);
}

function scanScalar(mask: MaskArray, layout: MaskLayout, cols: number): void {
  const rows = layout.validTokens.length;
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    let n = 0;
    let last = -1;
    for (let t = 0; t < cols; t++) {
      const m = mask[base + t] as number;
      if (m === 1) {
        n++;
        last = t;
      } else if (m !== 0) {
        throwBadMaskInRow(mask, b, cols);
      }
    }
    layout.validTokens[b] = n;
    layout.prefixLength[b] = last === n - 1 ? n : -1;
  }
}

/**
 * Validates the mask (BAD_MASK names row and token) and computes its {@link MaskLayout} in one read:
 * with every entry 0 or 1, the n ones form the prefix `[0, n)` exactly when the last one sits at n−1.
 * Float32 and uint8 masks are read 8 bytes at a time when aligned (2 or 8 entries per comparison), the
 * mask check being the part of a GRPO step that touches the most memory after the rewards.
 */
export function scanMask(mask: MaskArray, shape: Shape2): MaskLayout {
  const { rows, cols } = shape;
  const layout: MaskLayout = { validTokens: new Int32Array(rows), prefixLength: new Int32Array(rows) };
  const aligned = mask.byteOffset % 8 === 0;
  if (mask instanceof Float32Array && aligned && cols % 2 === 0) {
    scanWide(
      mask,
      new Float64Array(mask.buffer, mask.byteOffset, (rows * cols) / 2),
      2,
      F32_ONE_PAIR,
      layout,
      cols,
    );
  } else if (mask instanceof Uint8Array && aligned && cols % 8 === 0) {
    scanWide(
      mask,
      new Float64Array(mask.buffer, mask.byteOffset, (rows * cols) / 8),
      8,
      U8_ONE_OCTET,
      layout,
      cols,
    );
  } else {
    scanScalar(mask, layout, cols);
  }
  return layout;
}

/**
 * `out[b,t] = a_b` where `mask[b,t] = 1`, `+0` where it is 0 (verl multiplies, which gives `-0.0`
 * for a negative `a_b`; a plain `+0` keeps equality checks free of signed-zero surprises).
 * A value that is not a finite float32 (|a| > 3.4e38, e.g. from float64 scores near 1e300) is
 * NON_FINITE rather than an infinite output. Validates the mask unless a {@link scanMask} layout of the same mask is passed. Prefix rows are
 * written with one `fill` (padding of a new array is never touched: it is already +0). `reuse`, a
 * [B,T] buffer from an earlier call, is overwritten entirely instead of allocating (fresh memory costs
 * page faults on first write, more than the arithmetic here).
 */
export function broadcastRows(
  perRow: ArrayLike<number>,
  mask: MaskArray,
  shape: Shape2,
  layout: MaskLayout = scanMask(mask, shape),
  reuse?: Float32Array,
): Float32Array {
  const { rows, cols } = shape;
  if (reuse !== undefined) outputBuffer(reuse, rows * cols, `[${rows},${cols}]`);
  const fresh = reuse === undefined;
  const out = reuse ?? new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    const a = (perRow[b] as number) + 0; // -0 -> +0
    if (!Number.isFinite(Math.fround(a))) {
      throw new LabError('NON_FINITE', `advantages: the value ${a} of row ${b} is not a finite float32`, {
        details: { field: 'advantages', row: b, value: a },
      });
    }
    const base = b * cols;
    const len = layout.prefixLength[b] as number;
    if (len >= 0) {
      if (len > 0) out.fill(a, base, base + len);
      if (!fresh) out.fill(0, base + len, base + cols);
      continue;
    }
    for (let i = base; i < base + cols; i++) out[i] = mask[i] === 1 ? a : 0;
  }
  return out;
}
