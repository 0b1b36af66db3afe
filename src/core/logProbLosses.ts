/**
 * Policy losses on the log-prob itself, without a ratio (docs/verl-semantics.md §5.1): GPG (`"gpg"`) and verl's
 * REINFORCE helper (`compute_policy_loss_reinforce`, used by bypass mode).
 */
import { aggLossNamed, type LossAggMode } from './aggLoss.js';
import { outputBuffer, type Shape2 } from './batch.js';
import { maskCountUnchecked, maskedMeanOf } from './maskedPrimitives.js';
import {
  type CommonLossOptions,
  checkLossOutput,
  PER_TOKEN_LOSS_FIELD as FIELD,
  type PolicyLossInputs,
  type PolicyLossOutput,
  type ReinforceLossInputs,
  validateWithMode,
} from './policyLossInputs.js';

/**
 * verl `compute_policy_loss_gpg` (GPG): per-token loss `−lp·A` × w, aggregated with `lossAggMode`
 * (default token-mean) and the global batch info. No ratio, no clip; verl reports no metrics.
 * `oldLogProb` is accepted for the common signature and only validated.
 */
export function policyLossGpg(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: CommonLossOptions & { lossAggMode?: LossAggMode } = {},
): PolicyLossOutput {
  const { logProb, advantages, responseMask } = inputs;
  const { w, mode } = validateWithMode(inputs, shape, options, 'token-mean');
  const n = shape.rows * shape.cols;
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(out, 'out', inputs, w);
  for (let i = 0; i < n; i++) {
    out[i] = -(logProb[i] as number) * (advantages[i] as number) * (w ? (w[i] as number) : 1);
  }
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return { loss, perTokenLoss: out, metrics: {} };
}

/**
 * verl `compute_policy_loss_reinforce(rollout_log_prob, log_prob, advantages, response_mask,
 * loss_agg_mode="seq-mean-token-sum", config, rollout_is_weights)` (used by bypass mode):
 * per-token loss `−A·lp` × w, aggregated with `lossAggMode` (default **seq-mean-token-sum**).
 * Metric: ppo_kl `masked_mean(rollout_lp − lp)`.
 */
export function policyLossReinforce(
  inputs: ReinforceLossInputs,
  shape: Shape2,
  options: CommonLossOptions & { lossAggMode?: LossAggMode } = {},
): PolicyLossOutput {
  const { rolloutLogProb, logProb, advantages, responseMask } = inputs;
  const { w, mode } = validateWithMode(
    { oldLogProb: rolloutLogProb, logProb, advantages, responseMask },
    shape,
    options,
    'seq-mean-token-sum',
    'rollout_log_prob',
  );
  const n = shape.rows * shape.cols;
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(
    out,
    'out',
    { oldLogProb: rolloutLogProb, logProb, advantages, responseMask },
    w,
    'rollout_log_prob',
  );
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const lp = logProb[i] as number;
    out[i] = -(advantages[i] as number) * lp * (w ? (w[i] as number) : 1);
    if (responseMask[i] !== 0) kl += (rolloutLogProb[i] as number) - lp;
  }
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return { loss, perTokenLoss: out, metrics: { ppo_kl: maskedMeanOf(kl, maskCountUnchecked(responseMask)) } };
}
