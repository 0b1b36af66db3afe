/**
 * verl `compute_value_loss` (PPO critic loss with value clipping; docs/verl-semantics.md §7).
 */
import { type AggOptions, aggLossNamed, checkAggMode, type LossAggMode } from './aggLoss.js';
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkShape,
  type FloatArray,
  type MaskArray,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { maskedMeanOf } from './maskedPrimitives.js';

/** The `[B,T]` inputs of verl `compute_value_loss`. */
export interface ValueLossInputs {
  /** The critic's new predictions. */
  vpreds: FloatArray;
  /** The targets (GAE returns). */
  returns: FloatArray;
  /** The critic's predictions at rollout time (the clip centre). */
  values: FloatArray;
  responseMask: MaskArray;
}

export interface ValueLossResult {
  /** `vf_loss`. */
  loss: number;
  /** `vf_clipfrac = masked_mean([(v' − R)² > (vpreds − R)²], m)`. */
  clipfrac: number;
}

/**
 * verl `compute_value_loss(vpreds, returns, values, response_mask, cliprange_value, loss_agg_mode)`:
 * `v' = clamp(vpreds, values − c, values + c)`,
 * `loss = 0.5·agg_loss(max((vpreds − R)², (v' − R)²), m, mode)`,
 * `clipfrac = masked_mean([(v' − R)² > (vpreds − R)²], m)` (denominator `Σm + 1e-8`).
 * All arrays `[B,T]`; `clipRange` ≥ 0 (verl `cliprange_value`, default 0.5 in its config).
 */
export function valueLoss(
  inputs: ValueLossInputs,
  shape: Shape2,
  clipRange: number,
  mode: LossAggMode = 'token-mean',
  agg: AggOptions = {},
): ValueLossResult {
  const { vpreds, returns, values, responseMask: mask } = inputs;
  checkShape(shape);
  const n = shape.rows * shape.cols;
  const shapeText = `[${shape.rows},${shape.cols}]`;
  checkLength(vpreds, n, 'vpreds', shapeText);
  checkLength(returns, n, 'returns', shapeText);
  checkLength(values, n, 'values', shapeText);
  checkLength(mask, n, 'response_mask', shapeText);
  checkAggMode(mode);
  if (!Number.isFinite(clipRange) || clipRange < 0) {
    throw new LabError('BAD_ARGUMENT', `cliprange_value: must be a finite number >= 0, got ${clipRange}`, {
      details: { field: 'cliprange_value', value: clipRange },
    });
  }
  checkMask(mask, shape.cols);
  checkFiniteWhereMasked(vpreds, mask, shape.cols, 'vpreds');
  checkFiniteWhereMasked(returns, mask, shape.cols, 'returns');
  checkFiniteWhereMasked(values, mask, shape.cols, 'values');
  const losses = new Float64Array(n);
  let clipped = 0;
  let tokens = 0;
  for (let i = 0; i < n; i++) {
    const v = vpreds[i] as number;
    const r = returns[i] as number;
    const old = values[i] as number;
    const vc = Math.min(Math.max(v, old - clipRange), old + clipRange);
    const l1 = (v - r) * (v - r);
    const l2 = (vc - r) * (vc - r);
    losses[i] = Math.max(l1, l2);
    if (mask[i] !== 0) {
      tokens++;
      if (l2 > l1) clipped++;
    }
  }
  const loss = 0.5 * aggLossNamed(losses, mask, shape, mode, agg, 'value loss (from vpreds/returns/values)');
  return { loss, clipfrac: maskedMeanOf(clipped, tokens) };
}
