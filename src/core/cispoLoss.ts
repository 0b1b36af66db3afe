/**
 * verl `compute_policy_loss_cispo` (CISPO, `"cispo"`; docs/verl-semantics.md §5.1): the clipped ratio as a
 * stop-gradient weight on the log-prob (REINFORCE-style gradient that is never zeroed).
 */
import { aggLossNamed, type LossAggMode, resolveAggOptions } from './aggLoss.js';
import { outputBuffer, type Shape2 } from './batch.js';
import { LOG_RATIO_CLAMP } from './ess.js';
import {
  type ClipRatioOptions,
  type CommonLossOptions,
  checkLossOutput,
  clipBounds,
  clipMetrics,
  PER_TOKEN_LOSS_FIELD as FIELD,
  type PolicyLossInputs,
  type PolicyLossOutput,
  validateWithMode,
} from './policyLossInputs.js';

/**
 * verl `compute_policy_loss_cispo` (clipped IS weight, REINFORCE-style gradient):
 * `ℓ = clamp(lp − old, ±20)`, `r = exp(ℓ)`, per-token loss `−sg(clamp(r, 1−ε_lo, 1+ε_hi))·A·lp` × w
 * (`sg` = stop-gradient: the clipped ratio only weights the log-prob gradient, it never zeroes
 * it), aggregated with `lossAggMode` (default token-mean). Metrics: pg_clipfrac `[r ≠ clip(r)]`,
 * pg_clipfrac_lower 0, ppo_kl `masked_mean(−ℓ)`.
 */
export function policyLossCispo(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: ClipRatioOptions & CommonLossOptions & { lossAggMode?: LossAggMode } = {},
): PolicyLossOutput {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const { w, mode } = validateWithMode(inputs, shape, options, 'token-mean');
  const { low, high } = clipBounds(options);
  const agg = options.agg ?? {};
  resolveAggOptions(agg);
  const n = shape.rows * shape.cols;
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(out, 'out', inputs, w);
  let kl = 0;
  let clip = 0;
  for (let i = 0; i < n; i++) {
    const lp = logProb[i] as number;
    const l = Math.min(Math.max(lp - (oldLogProb[i] as number), -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
    const r = Math.exp(l);
    const rc = Math.min(Math.max(r, 1 - low), 1 + high);
    out[i] = -rc * (advantages[i] as number) * lp * (w ? (w[i] as number) : 1);
    if (responseMask[i] !== 0) {
      kl -= l;
      if (r !== rc) clip++;
    }
  }
  const loss = aggLossNamed(out, responseMask, shape, mode, agg, FIELD);
  return {
    loss,
    perTokenLoss: out,
    metrics: clipMetrics(clip, kl, 0, responseMask),
  };
}
