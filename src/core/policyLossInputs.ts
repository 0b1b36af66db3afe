/**
 * What every policy loss takes and returns, and the entry checks they share (verl's
 * `compute_policy_loss_*` signature: `old_log_prob`, `log_prob`, `advantages`, `response_mask`, all
 * `[B,T]`, optional `rollout_is_weights`). The four arrays travel as one named object, so a swapped
 * argument is a type error instead of a silently wrong loss. Helpers here are internal (not
 * exported from the package).
 */
import type { AggOptions, LossAggMode } from './aggLoss.js';
import { checkAggMode } from './aggLoss.js';
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type MaskArray,
  type OutOption,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { maskCountUnchecked, maskedMeanOf } from './maskedPrimitives.js';

/** The `[B,T]` inputs of a policy loss, by verl's argument names (camelCase). */
export interface PolicyLossInputs {
  /** `old_log_prob`: log-probs of the sampled tokens under the policy that generated them (the proximal policy). */
  oldLogProb: FloatArray;
  /** `log_prob`: log-probs under the current policy (the one being optimised). */
  logProb: FloatArray;
  /** `advantages`: one value per token (an outcome estimator broadcasts its row value over the mask). */
  advantages: FloatArray;
  /** `response_mask`: 1 where the token is a policy-generated response token, 0 elsewhere. */
  responseMask: MaskArray;
}

/**
 * The inputs of verl's `compute_policy_loss_reinforce`, whose behaviour log-prob is the rollout's
 * (`rollout_log_prob`, bypass mode) instead of the proximal policy's.
 */
export interface ReinforceLossInputs {
  rolloutLogProb: FloatArray;
  logProb: FloatArray;
  advantages: FloatArray;
  responseMask: MaskArray;
}

/** verl's metrics dict, without the `actor/` prefix. */
export interface PolicyLossMetrics {
  pg_clipfrac: number;
  ppo_kl: number;
  pg_clipfrac_lower: number;
}

/** A policy loss's value, its per-token loss (before aggregation, IS weights applied) and metrics. */
export interface PolicyLossOutput {
  loss: number;
  perTokenLoss: Float32Array;
  /** Only the metrics verl reports for this loss (GPG: none; REINFORCE: ppo_kl). */
  metrics: Partial<PolicyLossMetrics>;
}

/** Clip ratios shared by GSPO, CISPO and GMPO (ActorConfig names). */
export interface ClipRatioOptions {
  /** `clip_ratio`, the fallback of both sides. Default 0.2. */
  clipRatio?: number;
  /** `clip_ratio_low`; null falls back to clipRatio. */
  clipRatioLow?: number | null;
  /** `clip_ratio_high`; null falls back to clipRatio. */
  clipRatioHigh?: number | null;
}

export interface CommonLossOptions extends OutOption {
  /** verl `config.global_batch_info`, splatted into agg_loss. */
  agg?: AggOptions;
  /** `rollout_is_weights` [B,T]. */
  rolloutIsWeights?: FloatArray | null;
}

/** Validated inputs shared by every policy loss (checked once at the entry). */
export interface PolicyInputs {
  rows: number;
  cols: number;
  weights: FloatArray | null;
}

/**
 * Shape/length checks of the policy-loss inputs (finite values are checked lazily, see the file
 * header). Throws SHAPE_MISMATCH naming the field.
 */
export function checkPolicyInputs(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  weights: FloatArray | null | undefined,
): PolicyInputs {
  checkShape(shape);
  const shapeText = `[${shape.rows},${shape.cols}]`;
  const n = shape.rows * shape.cols;
  checkLength(oldLogProb, n, 'old_log_prob', shapeText);
  checkLength(logProb, n, 'log_prob', shapeText);
  checkLength(advantages, n, 'advantages', shapeText);
  checkLength(responseMask, n, 'response_mask', shapeText);
  if (weights) checkLength(weights, n, 'rollout_is_weights', shapeText);
  return { rows: shape.rows, cols: shape.cols, weights: weights ?? null };
}

/**
 * Names the first non-finite input where the mask is 1 (slow path of every policy loss): the mask
 * first (BAD_MASK), then `old` (reported as `oldName`), log_prob, advantages and, when given,
 * rollout_is_weights, in that order (NON_FINITE).
 */
export function throwIfNonFiniteUnderMask(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  w: FloatArray | null,
  mask: MaskArray,
  cols: number,
  oldName = 'old_log_prob',
): void {
  checkMask(mask, cols, 'response_mask');
  const fields = [
    [old, oldName],
    [lp, 'log_prob'],
    [adv, 'advantages'],
    [w, 'rollout_is_weights'],
  ] as const;
  for (const [arr, name] of fields) if (arr) checkFiniteWhereMasked(arr, mask, cols, name);
}

/** `clip_ratio_low`/`clip_ratio_high` after verl's None fallback to `clip_ratio` (default 0.2), validated. */
export function clipBounds(o: ClipRatioOptions): { low: number; high: number } {
  const eps = o.clipRatio ?? 0.2;
  const low = o.clipRatioLow ?? eps;
  const high = o.clipRatioHigh ?? eps;
  for (const [v, field] of [
    [eps, 'clip_ratio'],
    [low, 'clip_ratio_low'],
    [high, 'clip_ratio_high'],
  ] as const) {
    if (!Number.isFinite(v) || v < 0) {
      throw new LabError('BAD_ARGUMENT', `${field}: must be a finite number >= 0, got ${v}`, {
        details: { field, value: v },
      });
    }
  }
  return { low, high };
}

/** Entry validation of every policy loss except the fused vanilla one; returns the IS weights or null. */
export function validatePolicyInputs(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  weights: FloatArray | null | undefined,
  oldName = 'old_log_prob',
): FloatArray | null {
  const { cols, weights: w } = checkPolicyInputs(old, lp, adv, mask, shape, weights);
  throwIfNonFiniteUnderMask(old, lp, adv, w, mask, cols, oldName);
  return w;
}

/**
 * {@link checkOutNotAliased} of a policy loss's output buffer `out` (option `field`) against its
 * inputs by verl's names (`oldName` for the behaviour log-prob, as in {@link validatePolicyInputs})
 * and the IS weights: BAD_ARGUMENT naming both when they share memory.
 */
export function checkLossOutput(
  out: unknown,
  field: string,
  inputs: PolicyLossInputs,
  weights: FloatArray | null | undefined,
  oldName = 'old_log_prob',
): void {
  checkOutNotAliased(out, field, {
    [oldName]: inputs.oldLogProb,
    log_prob: inputs.logProb,
    advantages: inputs.advantages,
    response_mask: inputs.responseMask,
    rollout_is_weights: weights,
  });
}

/**
 * Entry of the losses that aggregate with the caller's `lossAggMode`: {@link validatePolicyInputs}, then the mode
 * (`options.lossAggMode`, else `defaultMode`) checked (UNKNOWN_MODE). Returns the IS weights or null
 * and the mode.
 */
export function validateWithMode(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: CommonLossOptions & { lossAggMode?: LossAggMode },
  defaultMode: LossAggMode,
  oldName = 'old_log_prob',
): { w: FloatArray | null; mode: LossAggMode } {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const w = validatePolicyInputs(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    options.rolloutIsWeights,
    oldName,
  );
  const mode = options.lossAggMode ?? defaultMode;
  checkAggMode(mode);
  return { w, mode };
}

/**
 * Losses that reduce each row with a plain product `x·m` before anything else (GSPO's sequence
 * ratio, GMPO's means) turn a non-finite padded value into a NaN loss in verl; the lab raises
 * NON_FINITE there instead. `rowsThatCount`: 'valid' when fully masked rows drop out of the
 * aggregation (GSPO), 'all' when every row enters the mean (GMPO).
 */
export function checkPaddingFinite(
  fields: ReadonlyArray<readonly [FloatArray | null, string]>,
  mask: MaskArray,
  shape: Shape2,
  rowsThatCount: 'valid' | 'all',
  loss: string,
): void {
  const { rows, cols } = shape;
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    if (rowsThatCount === 'valid') {
      let any = false;
      for (let t = 0; t < cols && !any; t++) any = mask[base + t] !== 0;
      if (!any) continue;
    }
    for (let t = 0; t < cols; t++) {
      if (mask[base + t] !== 0) continue;
      for (const [arr, name] of fields) {
        const v = arr ? (arr[base + t] as number) : 0;
        if (!Number.isFinite(v)) {
          throw new LabError(
            'NON_FINITE',
            `${name}: value ${v} at row ${b}, token ${t} (mask 0) makes the ${loss} loss NaN in verl (it multiplies by the mask)`,
            { details: { field: name, row: b, token: t, value: v } },
          );
        }
      }
    }
  }
}

/**
 * verl's three metrics from their masked sums: pg_clipfrac `clip`, ppo_kl `kl`, pg_clipfrac_lower
 * `lower`, each `/ (Σ m + 1e-8)`; a loss that has no such clip passes 0 (the metric is then 0).
 */
export function clipMetrics(clip: number, kl: number, lower: number, mask: MaskArray): PolicyLossMetrics {
  const n = maskCountUnchecked(mask);
  return {
    pg_clipfrac: maskedMeanOf(clip, n),
    ppo_kl: maskedMeanOf(kl, n),
    pg_clipfrac_lower: maskedMeanOf(lower, n),
  };
}

/** How aggregation errors name a policy loss's per-token loss matrix. */
export const PER_TOKEN_LOSS_FIELD = 'per-token loss (from log_prob/old_log_prob/advantages)';
