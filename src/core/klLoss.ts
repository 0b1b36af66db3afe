/**
 * verl's KL loss to the reference policy (`actor.use_kl_loss`, dp_actor `update_policy`):
 *
 *     kld      = kl_penalty(log_prob, ref_log_prob, kl_loss_type)          [B,T]
 *     kl_loss  = agg_loss(kld, response_mask, loss_agg_mode)
 *     loss     = pg_loss + kl_loss_coef · kl_loss                           (metric actor/kl_loss)
 *
 * and its gradient with respect to `log_prob` (the reference is fixed). With `d = lp − ref`:
 * `kl`/`k1` → 1; `abs` → sign(d); `mse`/`k2` → d; `low_var_kl`/`k3` (`k = clamp(−d, ±20)`,
 * `v = clamp(e^k − k − 1, ±10)`) → `1 − e^k` where both clamps pass the gradient (torch's clamp
 * backward: inside or on the bound), 0 otherwise. Times `∂agg/∂kld` ({@link aggLossGrad}).
 */
import { type AggOptions, aggLoss, aggLossGrad, type LossAggMode } from './aggLoss.js';
import type { FloatArray, MaskArray, Shape2 } from './batch.js';
import { K3_LOG_RATIO_CLAMP, K3_VALUE_CLAMP, type KlPenaltyName, klPenalty } from './kl.js';

/** The `[B,T]` inputs of {@link klLossGrad}, named so that a swapped argument is a type error. */
export interface KlLossInputs {
  /** Current policy log-probs (verl's `log_prob`). */
  logProb: FloatArray;
  /** Reference policy log-probs (verl's `ref_log_prob`). */
  refLogProb: FloatArray;
  /** verl's `response_mask`. */
  mask: MaskArray;
}

export interface KlLossResult {
  /** verl's `kl_loss` (before the coefficient). */
  loss: number;
  /** `∂kl_loss/∂log_prob [B,T]` (float64; 0 where the mask is 0). */
  grad: Float64Array;
}

/**
 * verl's `kl_loss` of `logProb` against `refLogProb` (both `[B,T]`) and its gradient, formulas in
 * the file header. Errors: those of `klPenalty` (NON_FINITE under the mask, NOT_SUPPORTED,
 * UNKNOWN_MODE, SHAPE_MISMATCH, BAD_MASK) and of `aggLoss` (EMPTY_MASK, UNKNOWN_MODE).
 */
export function klLossGrad(
  inputs: KlLossInputs,
  shape: Shape2,
  name: KlPenaltyName,
  mode: LossAggMode = 'token-mean',
  agg: AggOptions = {},
): KlLossResult {
  const { logProb, refLogProb, mask } = inputs;
  const kld = klPenalty({ logprob: logProb, refLogprob: refLogProb }, name, { shape, mask });
  const loss = aggLoss({ lossMat: kld, lossMask: mask }, shape, mode, agg);
  const grad = aggLossGrad(mask, shape, mode, agg);
  for (let i = 0; i < grad.length; i++) {
    const g = grad[i] as number;
    if (g === 0) continue;
    const d = (logProb[i] as number) - (refLogProb[i] as number);
    grad[i] = g * klPenaltyDerivative(d, name);
  }
  return { loss, grad };
}

/** `∂ kl_penalty / ∂ log_prob` at one token with `d = log_prob − ref_log_prob` (file header). */
export function klPenaltyDerivative(d: number, name: KlPenaltyName): number {
  switch (name) {
    case 'kl':
    case 'k1':
      return 1;
    case 'abs':
      return d > 0 ? 1 : d < 0 ? -1 : 0;
    case 'mse':
    case 'k2':
      return d;
    case 'low_var_kl':
    case 'k3': {
      const raw = -d;
      if (raw < -K3_LOG_RATIO_CLAMP || raw > K3_LOG_RATIO_CLAMP) return 0;
      const v = Math.exp(raw) - raw - 1;
      if (v < -K3_VALUE_CLAMP || v > K3_VALUE_CLAMP) return 0;
      return 1 - Math.exp(raw);
    }
  }
}
