/**
 * verl `compute_policy_loss_sapo` (SAPO, `"sapo"`; docs/verl-semantics.md §5.1): a soft sigmoid gate on the ratio
 * instead of a hard clip.
 */
import { aggLossNamed, resolveAggOptions } from './aggLoss.js';
import { outputBuffer, type Shape2 } from './batch.js';
import { LabError } from './errors.js';
import { LOG_RATIO_CLAMP } from './ess.js';
import {
  type CommonLossOptions,
  checkLossOutput,
  clipMetrics,
  PER_TOKEN_LOSS_FIELD as FIELD,
  type PolicyLossInputs,
  type PolicyLossOutput,
  validatePolicyInputs as validate,
} from './policyLossInputs.js';

/** SAPO temperatures (ActorConfig `tau_pos`, `tau_neg`). */
export interface SapoOptions extends CommonLossOptions {
  /** Temperature where A > 0. Default 1.0. */
  tauPos?: number;
  /** Temperature where A <= 0. Default 1.05. */
  tauNeg?: number;
}

/**
 * verl `compute_policy_loss_sapo` (soft adaptive gate instead of a hard clip):
 * `ℓ = clamp(lp − old, ±20)`, `r = exp(ℓ)`, `τ = A > 0 ? τ_pos : τ_neg`,
 * `gate = sigmoid(τ·(r − 1))·4/τ`, per-token loss `−gate·A` × w, aggregated
 * **seq-mean-token-mean** (mode argument ignored, as verl). Metrics: pg_clipfrac 0,
 * pg_clipfrac_lower 0, ppo_kl `masked_mean(−ℓ)`. The gate's slope at r = 1 is 1 for every τ,
 * so near on-policy it matches the unclipped surrogate.
 */
export function policyLossSapo(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: SapoOptions = {},
): PolicyLossOutput {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const w = validate(oldLogProb, logProb, advantages, responseMask, shape, options.rolloutIsWeights);
  const tauPos = options.tauPos ?? 1.0;
  const tauNeg = options.tauNeg ?? 1.05;
  for (const [v, field] of [
    [tauPos, 'tau_pos'],
    [tauNeg, 'tau_neg'],
  ] as const) {
    if (!(v > 0) || !Number.isFinite(v)) {
      throw new LabError('BAD_ARGUMENT', `${field}: must be a positive finite number, got ${v}`, {
        details: { field, value: v },
      });
    }
  }
  const agg = options.agg ?? {};
  resolveAggOptions(agg);
  const n = shape.rows * shape.cols;
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(out, 'out', inputs, w);
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const a = advantages[i] as number;
    const l = Math.min(
      Math.max((logProb[i] as number) - (oldLogProb[i] as number), -LOG_RATIO_CLAMP),
      LOG_RATIO_CLAMP,
    );
    const tau = a > 0 ? tauPos : tauNeg;
    const gate = (4 / tau) * (1 / (1 + Math.exp(-tau * (Math.exp(l) - 1))));
    out[i] = -gate * a * (w ? (w[i] as number) : 1);
    if (responseMask[i] !== 0) kl -= l;
  }
  const loss = aggLossNamed(out, responseMask, shape, 'seq-mean-token-mean', agg, FIELD);
  return {
    loss,
    perTokenLoss: out,
    metrics: clipMetrics(0, kl, 0, responseMask),
  };
}
