/**
 * verl `agg_loss` (verl/trainer/ppo/core_algos.py): a per-token loss matrix `[B,T]` to one scalar,
 * in verl's four `loss_agg_mode`s, with the exact denominators (docs/verl-semantics.md §4), plus the denominator on
 * its own (`aggLossDenominator`) and the gradient `dL/dx` (`aggLossGrad`).
 *
 * With `x = lossMat`, `m = lossMask`, `n_b = Σ_t m[b,t]`, `valid_b = [n_b > 0]`, `dp = dpSize`:
 *
 * | mode | L | denominator D (L = numerator / D) |
 * |---|---|---|
 * | token-mean | `Σ_{b,t} x·m / N · dp` | `N / dp`, `N = batchNumTokens ?? Σ m` |
 * | seq-mean-token-sum | `Σ_b valid_b·Σ_t x·m / G · dp` | `G / dp`, `G = globalBatchSize ?? Σ_b valid_b` |
 * | seq-mean-token-mean | `Σ_b valid_b·(Σ_t x·m)/(n_b + 1e-8) / G · dp` | `G / dp` |
 * | seq-mean-token-sum-norm | `Σ_{b,t} x·m / F` | `F = lossScaleFactor ?? T` (dp, G, N ignored) |
 *
 * verl multiplies by `dp_size` because the data-parallel all-reduce afterwards *averages* the
 * gradients of the dp ranks; with `batch_num_tokens` / `global_batch_size` set to global counts the
 * averaged result is the global token/sequence mean.
 *
 * Degenerate input: verl returns NaN (0/0) for an all-zero mask under token-mean and the seq-mean
 * modes; the lab throws `LabError('EMPTY_MASK')`. An unknown mode is `UNKNOWN_MODE` (verl:
 * ValueError). Non-finite loss values are `NON_FINITE` where the mask is 1; at masked positions
 * token-mean ignores them (as verl, which zeroes masked positions first) while the other modes
 * throw `NON_FINITE`, because verl's plain product `x·m` turns them into a NaN loss (a fully
 * masked row is left out of the seq-mean modes, so its padding may hold anything).
 */
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type MaskArray,
  outputBuffer64,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { lossSimdKernel } from './lossSimd.js';
import { MASKED_MEAN_EPS, maskedMeanOf } from './maskedPrimitives.js';

/** The `[B,T]` inputs of verl `agg_loss`: the per-token loss and the mask that selects its tokens. */
export interface AggLossInputs {
  lossMat: FloatArray;
  lossMask: MaskArray;
}

export type LossAggMode =
  | 'token-mean'
  | 'seq-mean-token-sum'
  | 'seq-mean-token-mean'
  | 'seq-mean-token-sum-norm';

/** verl's four `loss_agg_mode` names, in the order of the table in the file header. */
export const LOSS_AGG_MODES: readonly LossAggMode[] = [
  'token-mean',
  'seq-mean-token-sum',
  'seq-mean-token-mean',
  'seq-mean-token-sum-norm',
];

/**
 * verl's `global_batch_info` (splatted into agg_loss by the policy losses). `null` or absent means
 * "use the micro-batch statistic", as verl's `None`.
 */
export interface AggOptions {
  /** Data-parallel world size; the loss is multiplied by it (token-mean, seq-mean-*). Default 1. */
  dpSize?: number;
  /** Valid tokens of the global batch (token-mean denominator). Default: Σ mask of this batch. */
  batchNumTokens?: number | null;
  /** Sequences of the global batch (seq-mean-* denominator). Default: rows with ≥ 1 valid token. */
  globalBatchSize?: number | null;
  /** seq-mean-token-sum-norm divisor. Default: T (`loss_mask.shape[-1]`). */
  lossScaleFactor?: number | null;
}

/** verl's `1e-8` in the per-row token mean of seq-mean-token-mean (`Σ_t m + 1e-8`): masked_mean's. */
export const SEQ_TOKEN_MEAN_EPS = MASKED_MEAN_EPS;

/** The denominator aggLoss divides by, and what it counts. */
export interface AggDenominator {
  mode: LossAggMode;
  /** `L = numerator / denominator` (numerator: Σ x·m, or the sum of per-row sums / row means). */
  denominator: number;
  /** The formula, in verl's argument names, e.g. `'sum(mask) / dp_size'`. */
  formula: string;
  /** Σ mask. */
  validTokens: number;
  /** Rows with at least one valid token. */
  validRows: number;
}

/** Throws UNKNOWN_MODE unless `mode` is one of verl's four names. */
export function checkAggMode(mode: unknown, field = 'loss_agg_mode'): asserts mode is LossAggMode {
  if (!(LOSS_AGG_MODES as readonly unknown[]).includes(mode)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `${field}: invalid loss_agg_mode ${JSON.stringify(mode)}; expected one of ${LOSS_AGG_MODES.join(', ')}`,
      { details: { field, value: mode } },
    );
  }
}

interface ResolvedAgg {
  dp: number;
  batchNumTokens: number | null;
  globalBatchSize: number | null;
  lossScaleFactor: number | null;
}

function positiveOrNull(v: number | null | undefined, field: string): number | null {
  if (v === null || v === undefined) return null;
  if (!Number.isFinite(v) || v <= 0) {
    throw new LabError('BAD_ARGUMENT', `${field}: must be a positive finite number or null, got ${v}`, {
      details: { field, value: v },
    });
  }
  return v;
}

/** Validates and resolves the global batch info once (used by every loss that aggregates). */
export function resolveAggOptions(options: AggOptions = {}): ResolvedAgg {
  const dp = options.dpSize ?? 1;
  if (!Number.isInteger(dp) || dp <= 0) {
    throw new LabError('BAD_ARGUMENT', `dp_size: must be a positive integer, got ${dp}`, {
      details: { field: 'dp_size', value: dp },
    });
  }
  return {
    dp,
    batchNumTokens: positiveOrNull(options.batchNumTokens, 'batch_num_tokens'),
    globalBatchSize: positiveOrNull(options.globalBatchSize, 'global_batch_size'),
    lossScaleFactor: positiveOrNull(options.lossScaleFactor, 'loss_scale_factor'),
  };
}

/**
 * Per-batch sums from which every mode's value follows (one pass over the rows). Kernels that fuse
 * aggregation into their own token loop fill this and call {@link finishAgg}.
 */
export interface AggSums {
  /** Σ_b Σ_t x·m over all rows. */
  sumAll: number;
  /** Σ_b valid_b · Σ_t x·m. */
  sumValidRows: number;
  /** Σ_b valid_b · Σ_t x·m / (n_b + 1e-8). */
  sumRowMeans: number;
  validTokens: number;
  validRows: number;
}

function denominatorOf(
  mode: LossAggMode,
  r: ResolvedAgg,
  validTokens: number,
  validRows: number,
  cols: number,
): AggDenominator {
  const dpText = r.dp === 1 ? '' : ' / dp_size';
  switch (mode) {
    case 'token-mean': {
      const n = r.batchNumTokens ?? validTokens;
      return {
        mode,
        denominator: n / r.dp,
        formula: `${r.batchNumTokens === null ? 'sum(mask)' : 'batch_num_tokens'}${dpText}`,
        validTokens,
        validRows,
      };
    }
    case 'seq-mean-token-sum':
    case 'seq-mean-token-mean': {
      const g = r.globalBatchSize ?? validRows;
      return {
        mode,
        denominator: g / r.dp,
        formula: `${r.globalBatchSize === null ? 'count(rows with sum(mask) > 0)' : 'global_batch_size'}${dpText}`,
        validTokens,
        validRows,
      };
    }
    case 'seq-mean-token-sum-norm':
      return {
        mode,
        denominator: r.lossScaleFactor ?? cols,
        formula: r.lossScaleFactor === null ? 'T (loss_mask.shape[-1])' : 'loss_scale_factor',
        validTokens,
        validRows,
      };
  }
}

/** Final division of {@link AggSums}; EMPTY_MASK where verl divides 0 by 0. */
export function finishAgg(
  mode: LossAggMode,
  r: ResolvedAgg,
  s: AggSums,
  cols: number,
  field = 'loss_mask',
): number {
  const d = denominatorOf(mode, r, s.validTokens, s.validRows, cols);
  if (d.denominator === 0) {
    throw new LabError(
      'EMPTY_MASK',
      `${field}: all-zero mask under ${mode}: the denominator ${d.formula} is 0 (verl returns NaN)`,
      { details: { field, mode } },
    );
  }
  const numerator =
    mode === 'seq-mean-token-sum'
      ? s.sumValidRows
      : mode === 'seq-mean-token-mean'
        ? s.sumRowMeans
        : s.sumAll;
  return numerator / d.denominator;
}

/** Number of valid tokens and valid rows; validates the mask (one pass). */
function countMask(mask: MaskArray, rows: number, cols: number): { validTokens: number; validRows: number } {
  let validTokens = 0;
  let validRows = 0;
  let bad = 0;
  for (let b = 0; b < rows; b++) {
    let n = 0;
    const base = b * cols;
    for (let t = 0; t < cols; t++) {
      const m = mask[base + t] as number;
      n += m;
      bad += Math.abs(m * m - m);
    }
    validTokens += n;
    if (n > 0) validRows++;
  }
  if (bad !== 0) checkMask(mask, cols, 'loss_mask');
  return { validTokens, validRows };
}

function checkLossMatrices(lossMat: FloatArray, lossMask: MaskArray, shape: Shape2): string {
  checkShape(shape);
  const shapeText = `[${shape.rows},${shape.cols}]`;
  const n = shape.rows * shape.cols;
  checkLength(lossMat, n, 'loss_mat', shapeText);
  checkLength(lossMask, n, 'loss_mask', shapeText);
  return shapeText;
}

/**
 * Slow path after the fast loop met a non-finite value: names it (NON_FINITE), or, for token-mean,
 * recomputes ignoring masked positions as verl does.
 */
function aggSlow(
  lossMat: FloatArray,
  lossMask: MaskArray,
  rows: number,
  cols: number,
  mode: LossAggMode,
  field: string,
): AggSums {
  checkFiniteWhereMasked(lossMat, lossMask, cols, field);
  const s: AggSums = { sumAll: 0, sumValidRows: 0, sumRowMeans: 0, validTokens: 0, validRows: 0 };
  for (let b = 0; b < rows; b++) {
    let sum = 0;
    let n = 0;
    const base = b * cols;
    for (let t = 0; t < cols; t++) {
      const m = lossMask[base + t] as number;
      n += m;
      if (m !== 0) sum += lossMat[base + t] as number;
    }
    const rowValid = n > 0;
    if (mode !== 'token-mean' && (rowValid || mode === 'seq-mean-token-sum-norm')) {
      for (let t = 0; t < cols; t++) {
        const v = lossMat[base + t] as number;
        if (!Number.isFinite(v)) {
          throw new LabError(
            'NON_FINITE',
            `${field}: value ${v} at row ${b}, token ${t} (mask 0) makes the ${mode} loss NaN in verl (it multiplies loss by mask; only token-mean ignores masked values)`,
            { details: { field, row: b, token: t, value: v, mode } },
          );
        }
      }
    }
    s.sumAll += sum;
    s.validTokens += n;
    if (rowValid) {
      s.validRows++;
      s.sumValidRows += sum;
      s.sumRowMeans += maskedMeanOf(sum, n);
    }
  }
  return s;
}

/**
 * The fused passes (this file's {@link aggRows}, vanillaPolicyLoss.ts's fused pass) accumulate into a
 * float64 array whose first {@link AGG_SUM_SLOTS} slots are the {@link AggSums}: sumAll, sumValidRows,
 * sumRowMeans, validTokens, validRows. Adds one call's partial sums there (once per call, never per
 * token).
 */
export function addAggSums(
  acc: Float64Array,
  sumAll: number,
  sumValidRows: number,
  sumRowMeans: number,
  validTokens: number,
  validRows: number,
): void {
  acc[0] = (acc[0] as number) + sumAll;
  acc[1] = (acc[1] as number) + sumValidRows;
  acc[2] = (acc[2] as number) + sumRowMeans;
  acc[3] = (acc[3] as number) + validTokens;
  acc[4] = (acc[4] as number) + validRows;
}

/** Slots used by {@link addAggSums}; a pass's own accumulators start here. */
export const AGG_SUM_SLOTS = 5;

/** The {@link AggSums} held in the first {@link AGG_SUM_SLOTS} slots of a pass's accumulator. */
export function aggSumsOf(acc: Float64Array): AggSums {
  return {
    sumAll: acc[0] as number,
    sumValidRows: acc[1] as number,
    sumRowMeans: acc[2] as number,
    validTokens: acc[3] as number,
    validRows: acc[4] as number,
  };
}

/** Tokens per call of {@link aggRows}. */
const TOKENS_PER_CALL = 16384;

/**
 * Row sums of `x·m` for all modes in one pass (float64 accumulation); NaN propagates through the
 * plain product exactly as in verl's seq-mean modes, and a non-finite total sends the caller to the
 * slow path. The batch is cut into calls of about {@link TOKENS_PER_CALL} tokens so that V8
 * optimises {@link aggRows} as a whole; a single long call runs through on-stack replacement,
 * whose code deoptimises at the loop exit on every call.
 */
function aggSums(
  lossMat: FloatArray,
  lossMask: MaskArray,
  rows: number,
  cols: number,
  mode: LossAggMode,
  engine: SumEngine,
): { sums: AggSums; badMask: number } {
  const acc = new Float64Array(AGG_SUM_SLOTS + 1);
  const step = Math.max(1, Math.floor(TOKENS_PER_CALL / cols));
  const padCheck = mode !== 'token-mean';
  const simd =
    engine === 'auto' &&
    lossMat instanceof Float32Array &&
    (lossMask instanceof Float32Array || lossMask instanceof Uint8Array)
      ? lossSimdKernel()
      : null;
  // the JavaScript loop's per-row results, in the SIMD kernel's layout (one call's rows)
  const rowSum = new Float64Array(simd ? 0 : Math.min(rows, step));
  const rowCount = new Float64Array(rowSum.length);
  for (let b = 0; b < rows; b += step) {
    const b1 = Math.min(rows, b + step);
    if (simd) {
      const chunk = simd.runAgg(
        lossMat as Float32Array,
        lossMask as Float32Array | Uint8Array,
        b,
        b1,
        cols,
        padCheck,
      );
      addRowSums(chunk.rowSum, chunk.rowCount, b1 - b, acc);
      acc[AGG_SUM_SLOTS] = (acc[AGG_SUM_SLOTS] as number) + chunk.bad;
    } else {
      const bad = aggRows(lossMat, lossMask, b, b1, cols, padCheck, rowSum, rowCount);
      addRowSums(rowSum, rowCount, b1 - b, acc);
      acc[AGG_SUM_SLOTS] = (acc[AGG_SUM_SLOTS] as number) + bad;
    }
  }
  return { sums: aggSumsOf(acc), badMask: acc[AGG_SUM_SLOTS] as number };
}

/**
 * Adds per-row sums and valid counts of `rows` rows (the output of a SIMD kernel, lossSimd.ts, or of
 * {@link aggRows}) into the {@link AggSums} slots of `acc`: in row order, with the operations of the
 * end of the vanilla loss's JavaScript pass, so every engine gives the same float64 sums.
 */
export function addRowSums(
  rowSum: Float64Array,
  rowCount: Float64Array,
  rows: number,
  acc: Float64Array,
): void {
  let sumAll = 0;
  let sumValidRows = 0;
  let sumRowMeans = 0;
  let validTokens = 0;
  let validRows = 0;
  for (let r = 0; r < rows; r++) {
    const sum = rowSum[r] as number;
    const n = rowCount[r] as number;
    sumAll += sum;
    validTokens += n;
    if (n > 0) {
      validRows++;
      sumValidRows += sum;
      sumRowMeans += maskedMeanOf(sum, n);
    }
  }
  addAggSums(acc, sumAll, sumValidRows, sumRowMeans, validTokens, validRows);
}

/**
 * Which implementation runs the row sums: 'auto' takes the WebAssembly SIMD kernel (lossSimd.ts) for a
 * float32 loss matrix with a float32/uint8 mask, the JavaScript loop otherwise; 'js' always the loop.
 * Both give the same bits (lossSimd.test.ts).
 */
export type SumEngine = 'auto' | 'js';

/**
 * Rows `[b0, b1)` of {@link aggSums}: row b's masked sum and valid count into `rowSum[b − b0]`,
 * `rowCount[b − b0]` (combined by {@link addRowSums}, as the SIMD kernel's); returns the bad-mask sum.
 */
function aggRows(
  lossMat: FloatArray,
  lossMask: MaskArray,
  b0: number,
  b1: number,
  cols: number,
  padCheck: boolean,
  rowSum: Float64Array,
  rowCount: Float64Array,
): number {
  let bad = 0;
  for (let b = b0; b < b1; b++) {
    // Four independent partial sums: the loop is bound by the latency of the running additions,
    // not by memory, so splitting the chains is what brings it near the copy floor.
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    let n0 = 0;
    let n1 = 0;
    const base = b * cols;
    const rowEnd = base + cols;
    // token-mean never looks at padding (verl zeroes it first), so the row's tail of mask zeros is
    // checked as mask only; the other modes multiply every loss value by its mask (a non-finite
    // padded value makes verl's row NaN), so they read the whole row.
    let end = rowEnd;
    if (!padCheck) while (end > base && lossMask[end - 1] === 0) end--;
    let i = base;
    for (; i + 3 < end; i += 4) {
      const m0 = lossMask[i] as number;
      const m1 = lossMask[i + 1] as number;
      const m2 = lossMask[i + 2] as number;
      const m3 = lossMask[i + 3] as number;
      s0 += (lossMat[i] as number) * m0;
      s1 += (lossMat[i + 1] as number) * m1;
      s2 += (lossMat[i + 2] as number) * m2;
      s3 += (lossMat[i + 3] as number) * m3;
      n0 += m0 + m1;
      n1 += m2 + m3;
      bad +=
        Math.abs(m0 * m0 - m0) + Math.abs(m1 * m1 - m1) + (Math.abs(m2 * m2 - m2) + Math.abs(m3 * m3 - m3));
    }
    for (; i < end; i++) {
      const m = lossMask[i] as number;
      s0 += (lossMat[i] as number) * m;
      n0 += m;
      bad += Math.abs(m * m - m);
    }
    rowSum[b - b0] = s0 + s1 + (s2 + s3);
    rowCount[b - b0] = n0 + n1;
  }
  return bad;
}

/**
 * verl `agg_loss(loss_mat, loss_mask, loss_agg_mode, dp_size, batch_num_tokens, global_batch_size,
 * loss_scale_factor)`. Shapes: `lossMat`, `lossMask` `[B,T]` row-major. Formulas in the file header.
 * Throws EMPTY_MASK (verl: NaN), UNKNOWN_MODE (verl: ValueError), BAD_MASK, NON_FINITE,
 * SHAPE_MISMATCH, BAD_ARGUMENT (dp_size not a positive integer, non-positive counts).
 */
export function aggLoss(
  inputs: AggLossInputs,
  shape: Shape2,
  mode: LossAggMode,
  options: AggOptions = {},
): number {
  const { lossMat, lossMask } = inputs;
  return aggLossNamed(lossMat, lossMask, shape, mode, options, 'loss_mat');
}

/** {@link aggLoss} on a chosen {@link SumEngine} (internal: tests compare the two). */
export function aggLossOn(
  engine: SumEngine,
  inputs: AggLossInputs,
  shape: Shape2,
  mode: LossAggMode,
  options: AggOptions = {},
): number {
  const { lossMat, lossMask } = inputs;
  return aggLossNamed(lossMat, lossMask, shape, mode, options, 'loss_mat', engine);
}

/**
 * {@link aggLoss} with the name the error messages give the loss matrix (a kernel aggregating its
 * own per-token loss names the inputs it came from).
 */
export function aggLossNamed(
  lossMat: FloatArray,
  lossMask: MaskArray,
  shape: Shape2,
  mode: LossAggMode,
  options: AggOptions,
  field: string,
  engine: SumEngine = 'auto',
): number {
  checkLossMatrices(lossMat, lossMask, shape);
  checkAggMode(mode);
  const r = resolveAggOptions(options);
  const { rows, cols } = shape;
  let { sums, badMask } = aggSums(lossMat, lossMask, rows, cols, mode, engine);
  if (badMask !== 0) checkMask(lossMask, cols, 'loss_mask');
  const value =
    mode === 'seq-mean-token-sum'
      ? sums.sumValidRows
      : mode === 'seq-mean-token-mean'
        ? sums.sumRowMeans
        : sums.sumAll;
  if (!Number.isFinite(value) || (mode === 'token-mean' && !Number.isFinite(sums.sumAll))) {
    sums = aggSlow(lossMat, lossMask, rows, cols, mode, field);
  }
  return finishAgg(mode, r, sums, cols);
}

/**
 * The denominator `D` of {@link aggLoss} (`L = numerator / D`) with its formula in verl's names,
 * the valid token count and the valid row count. Does not throw on an all-zero mask (D is then 0).
 */
export function aggLossDenominator(
  lossMask: MaskArray,
  shape: Shape2,
  mode: LossAggMode,
  options: AggOptions = {},
): AggDenominator {
  checkShape(shape);
  checkLength(lossMask, shape.rows * shape.cols, 'loss_mask', `[${shape.rows},${shape.cols}]`);
  checkAggMode(mode);
  const r = resolveAggOptions(options);
  const { validTokens, validRows } = countMask(lossMask, shape.rows, shape.cols);
  return denominatorOf(mode, r, validTokens, validRows, shape.cols);
}

/**
 * `∂L/∂lossMat[b,t]` of {@link aggLoss}, `[B,T]` float64 (aggLoss is linear in `lossMat`):
 * token-mean `m·dp/N`; seq-mean-token-sum `m·dp/G`; seq-mean-token-mean `m·dp/((n_b + 1e-8)·G)`;
 * seq-mean-token-sum-norm `m/F`. Zero where the mask is 0. EMPTY_MASK where aggLoss throws it.
 * `options.out`: a `[B,T]` Float64Array to write into instead of a new one.
 */
export function aggLossGrad(
  lossMask: MaskArray,
  shape: Shape2,
  mode: LossAggMode,
  options: AggOptions & { out?: Float64Array | null } = {},
): Float64Array {
  const d = aggLossDenominator(lossMask, shape, mode, options);
  if (d.denominator === 0) {
    throw new LabError(
      'EMPTY_MASK',
      `loss_mask: all-zero mask under ${mode}: the denominator ${d.formula} is 0`,
      {
        details: { field: 'loss_mask', mode },
      },
    );
  }
  const { rows, cols } = shape;
  const grad = outputBuffer64(options.out, rows * cols, `[${rows},${cols}]`);
  checkOutNotAliased(grad, 'out', { loss_mask: lossMask });
  const scale = 1 / d.denominator;
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    let rowScale = scale;
    if (mode === 'seq-mean-token-mean') {
      let n = 0;
      for (let t = 0; t < cols; t++) n += lossMask[base + t] as number;
      rowScale = scale / (n + SEQ_TOKEN_MEAN_EPS);
    }
    for (let t = 0; t < cols; t++) grad[base + t] = (lossMask[base + t] as number) * rowScale;
  }
  return grad;
}
