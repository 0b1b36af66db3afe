/**
 * What an importance-sampling correction does to a batch, in verl's definitions, whatever framework
 * the correction comes from: the statistics of the weights it multiplies into the per-token loss and
 * the share of tokens and sequences it rejects. verl logs these for its own modes
 * (`rollout_corr/rollout_is_*`, `rollout_corr/rollout_rs_*`, `verl/trainer/ppo/rollout_corr_helper.py`,
 * docs/verl-semantics.md §8); TRL and OpenRLHF log none of them, so the audit computes them here for
 * their modes (trlVllmIs.ts, openrlhfVllmIs.ts) to put every correction in one table.
 *
 * On the applied weights `w` (0 where the mode rejected a token) over the response-mask tokens, with
 * verl's `masked_mean(x) = Σ x·m / (Σ m + 1e-8)`:
 *   is_mean = masked_mean(w), is_max / is_min over valid tokens,
 *   is_std = sqrt(max(masked_mean(w²) − is_mean², 0)) (0 for a single valid token),
 *   eff_sample_size = (Σ w)² / (n·Σ w²) over the n valid tokens: verl's `1 / masked_mean((w / mean w)²)`
 *     without its two 1e-8 guards, which dominate when the weights are tiny (verl's are ≥ 1/τ; a TRL
 *     sequence ratio can be e^-30), computed scale-free by `kishEss` (ess.ts); 0 when every w is 0,
 *   masked_fraction = masked_mean(1 − new_mask) (verl `rollout_rs_masked_fraction`),
 *   seq_masked_fraction = share of ALL rows with a rejected valid token (verl `rollout_rs_seq_masked_fraction`).
 * verl computes its own `rollout_is_*` on the weights before truncation and its ESS on them clamped to
 * [1/τ, τ]; here everything is on the weights that reach the loss, the only weights TRL and OpenRLHF have.
 */
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type MaskArray,
  outputBuffer,
  outputBuffer64,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { kishEss } from './ess.js';
import { MASKED_MEAN_EPS } from './maskedPrimitives.js';
import type { RolloutLogProbs } from './rolloutCorrection.js';

/** verl-definition statistics of a correction's applied weights and rejections (see the file header). */
export interface CorrectionSummary {
  is_mean: number;
  is_max: number;
  is_min: number;
  is_std: number;
  eff_sample_size: number;
  masked_fraction: number;
  seq_masked_fraction: number;
  /** Valid tokens the correction kept (weight may still be 0 by underflow). */
  kept_tokens: number;
  /** Valid tokens the correction rejected. */
  rejected_tokens: number;
  /** Rows with at least one rejected valid token. */
  rejected_sequences: number;
}

/** What every framework correction kernel returns. */
export interface FrameworkCorrectionResult {
  /**
   * `[B,T]` float64: the factor the framework multiplies into the per-token loss at response-mask
   * tokens (a sequence-level ratio repeated along its row); 0 at masked positions, where the framework's
   * own tensor holds values its masked loss never reads.
   */
  weights: Float64Array;
  /** `[B,T]` `response_mask` AND the mode's keep decision (equal to the response mask for clamping modes). */
  mask: Float32Array;
  /** The framework's own logged metrics under its own names. */
  metrics: Record<string, number>;
  summary: CorrectionSummary;
}

/** `[B,T]` output buffers of the correction kernels (see batch.ts OutOption for the rules). */
export interface CorrectionOutOptions {
  outWeights?: Float64Array | null;
  outMask?: Float32Array | null;
}

/**
 * Entry check of the correction kernels: shape, lengths, 0/1 mask, finite log-probs where the mask
 * is 1 (masked positions are never read), at least one valid token (EMPTY_MASK: a dump with no loss
 * token has nothing to correct).
 */
export function checkCorrectionInputs(
  oldLogProb: FloatArray,
  rolloutLogProb: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
): void {
  checkShape(shape);
  const n = shape.rows * shape.cols;
  const text = `[${shape.rows},${shape.cols}]`;
  checkLength(oldLogProb, n, 'old_log_prob', text);
  checkLength(rolloutLogProb, n, 'rollout_log_prob', text);
  checkLength(responseMask, n, 'response_mask', text);
  checkMask(responseMask, shape.cols);
  checkFiniteWhereMasked(oldLogProb, responseMask, shape.cols, 'old_log_prob');
  checkFiniteWhereMasked(rolloutLogProb, responseMask, shape.cols, 'rollout_log_prob');
  let any = false;
  for (let i = 0; i < n && !any; i++) any = responseMask[i] !== 0;
  if (!any) {
    throw new LabError('EMPTY_MASK', 'response_mask: no valid token, nothing to correct', {
      details: { field: 'response_mask' },
    });
  }
}

/** {@link correctionSummary} after the inputs were checked. */
export function correctionSummaryUnchecked(
  weights: ArrayLike<number>,
  responseMask: MaskArray,
  mask: MaskArray,
  shape: Shape2,
): CorrectionSummary {
  const { rows, cols } = shape;
  let count = 0;
  let sum = 0;
  let sumSq = 0;
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  let rejected = 0;
  let rejectedRows = 0;
  for (let b = 0; b < rows; b++) {
    let rowRejected = false;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      if (responseMask[i] === 0) continue;
      const w = weights[i] as number;
      count++;
      sum += w;
      sumSq += w * w;
      if (w > max) max = w;
      if (w < min) min = w;
      if (mask[i] === 0) {
        rejected++;
        rowRejected = true;
      }
    }
    if (rowRejected) rejectedRows++;
  }
  const den = count + MASKED_MEAN_EPS;
  const mean = sum / den;
  const meanSq = sumSq / den;
  return {
    is_mean: mean,
    is_max: max,
    is_min: min,
    is_std: count > 1 ? Math.sqrt(Math.max(meanSq - mean * mean, 0)) : 0,
    eff_sample_size: kishEss(weights, responseMask).fraction,
    masked_fraction: rejected / den,
    seq_masked_fraction: rejectedRows / rows,
    kept_tokens: count - rejected,
    rejected_tokens: rejected,
    rejected_sequences: rejectedRows,
  };
}

/**
 * The verl-definition summary (file header) of a correction's applied `[B,T]` weights: `weights`
 * are read at `response_mask` tokens only and must be finite and ≥ 0 there; `mask` is the response
 * mask after the correction's rejections (1 = kept). Use it on verl's own output too
 * (`rolloutCorrection`'s weights, 1 where IS is off, times its mask) to fill one comparable row per
 * correction. Throws SHAPE_MISMATCH, BAD_MASK, NON_FINITE / BAD_VALUE (a weight, naming row and
 * token), BAD_VALUE (a kept token outside the response mask), EMPTY_MASK.
 */
export function correctionSummary(
  weights: FloatArray,
  responseMask: MaskArray,
  mask: MaskArray,
  shape: Shape2,
): CorrectionSummary {
  checkShape(shape);
  const { rows, cols } = shape;
  const n = rows * cols;
  const text = `[${rows},${cols}]`;
  checkLength(weights, n, 'weights', text);
  checkLength(responseMask, n, 'response_mask', text);
  checkLength(mask, n, 'mask', text);
  checkMask(responseMask, cols, 'response_mask');
  checkMask(mask, cols, 'mask');
  checkFiniteWhereMasked(weights, responseMask, cols, 'weights');
  let any = false;
  for (let i = 0; i < n; i++) {
    const row = Math.floor(i / cols);
    const token = i - row * cols;
    if (responseMask[i] === 0) {
      if (mask[i] !== 0) {
        throw new LabError(
          'BAD_VALUE',
          `mask: token ${token} of row ${row} is kept but is not in response_mask`,
          { details: { field: 'mask', row, token } },
        );
      }
      continue;
    }
    any = true;
    const w = weights[i] as number;
    if (w < 0) {
      throw new LabError('BAD_VALUE', `weights: value ${w} at row ${row}, token ${token} is negative`, {
        details: { field: 'weights', row, token, value: w },
      });
    }
  }
  if (!any) {
    throw new LabError('EMPTY_MASK', 'response_mask: no valid token to summarise', {
      details: { field: 'response_mask' },
    });
  }
  return correctionSummaryUnchecked(weights, responseMask, mask, shape);
}

/**
 * The entry of a framework correction kernel (trlVllmIs.ts, openrlhfVllmIs.ts), written once: checks
 * the inputs ({@link checkCorrectionInputs}) and returns the output buffers — `weights` float64 and
 * `mask` [B,T], the caller's `outWeights` / `outMask` when given (checked for length and for not
 * aliasing an input or each other), fresh ones otherwise.
 */
export function correctionEntry(
  inputs: RolloutLogProbs,
  shape: Shape2,
  out: { outWeights?: Float64Array | null | undefined; outMask?: Float32Array | null | undefined },
): { weights: Float64Array; mask: Float32Array; rows: number; cols: number } {
  const { oldLogProb, rolloutLogProb, responseMask } = inputs;
  checkCorrectionInputs(oldLogProb, rolloutLogProb, responseMask, shape);
  const { rows, cols } = shape;
  const n = rows * cols;
  const text = `[${rows},${cols}]`;
  const weights = outputBuffer64(out.outWeights, n, text, 'outWeights');
  const mask = outputBuffer(out.outMask, n, text, 'outMask');
  const named = { old_log_prob: oldLogProb, rollout_log_prob: rolloutLogProb, response_mask: responseMask };
  checkOutNotAliased(weights, 'outWeights', named);
  checkOutNotAliased(mask, 'outMask', { ...named, outWeights: weights });
  return { weights, mask, rows, cols };
}
