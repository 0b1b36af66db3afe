/**
 * verl `compute_policy_loss_bypass_mode` (docs/verl-semantics.md §5.1, §8 "Bypass mode"): the trainer skips the
 * old-log-prob forward pass and uses the inference engine's log-probs as `old_log_prob`. The loss
 * then recomputes the rollout correction against the *current* log-probs:
 *
 *     ℓ = log_prob − old_log_prob (= rollout log-probs)
 *     weights, mask' , rollout_corr metrics = rollout_correction(log_prob, old_log_prob, mask, is, rs)
 *     loss_type 'ppo_clip'  → vanilla PPO on mask' (no IS weights: the PPO ratio is the IS ratio)
 *     loss_type 'reinforce' → REINFORCE (−A·lp·w) on mask' with the (detached) IS weights
 *     perTokenLoss [B,T] = the inner loss's per-token loss before aggregation (ppo_clip: 0 where
 *                          mask' is 0; reinforce: −A·lp·w at every position)
 *
 * Metrics: the loss's own (`actor/...` in verl) merged with every `rollout_corr/...` metric.
 */
import type { LossAggMode } from './aggLoss.js';
import { checkOutNotAliased, type OutOption, type Shape2 } from './batch.js';
import { LabError } from './errors.js';
import { policyLossReinforce } from './logProbLosses.js';
import type { PolicyLossInputs, PolicyLossMetrics } from './policyLossInputs.js';
import {
  type RolloutCorrectionOptions,
  type RolloutMetrics,
  rolloutCorrection,
} from './rolloutCorrection.js';
import { policyLossVanilla, type VanillaLossOptions } from './vanillaPolicyLoss.js';

/** verl `rollout_correction.loss_type`. */
export type BypassLossType = 'ppo_clip' | 'reinforce';

export interface BypassLossOptions extends RolloutCorrectionOptions, OutOption {
  /** Default 'ppo_clip' (verl's YAML default). */
  lossType?: BypassLossType;
  /** `loss_agg_mode` of the inner loss. Default 'token-mean'. */
  lossAggMode?: LossAggMode;
  /** Clip settings and global batch info of the inner vanilla loss (ppo_clip). */
  vanilla?: Omit<VanillaLossOptions, 'lossAggMode' | 'rolloutIsWeights' | 'out' | 'outGrad'>;
}

/**
 * verl's YAML defaults: ppo_clip, token-mean, `rollout_is: null`, `rollout_rs: null`, default clip
 * settings; no caller buffers (`out`, `outWeights`, `outMask`: fresh arrays).
 */
const BYPASS_DEFAULTS: Readonly<Required<BypassLossOptions>> = Object.freeze({
  lossType: 'ppo_clip',
  lossAggMode: 'token-mean',
  is: null,
  rejection: null,
  vanilla: Object.freeze({}),
  outWeights: null,
  outMask: null,
  out: null,
});

export interface BypassLossResult {
  loss: number;
  /** The inner loss's per-token loss `[B,T]` before aggregation (`out` when given). */
  perTokenLoss: Float32Array;
  /** The inner loss's metrics (verl prefixes them `actor/`). */
  metrics: Partial<PolicyLossMetrics>;
  /** `rollout_corr/...` metrics of the correction computed inside the loss. */
  rolloutMetrics: RolloutMetrics;
  /** The response mask after rejection sampling. */
  mask: Float32Array;
  /** IS weights (null when `is` is disabled). */
  weights: Float32Array | null;
}

/**
 * verl `compute_policy_loss_bypass_mode(old_log_prob, log_prob, advantages, response_mask,
 * loss_agg_mode, config)` with `old_log_prob` = the rollout log-probs; formulas in the file
 * header; defaults {@link BYPASS_DEFAULTS}, merged once. `outWeights` / `outMask` reuse [B,T] buffers
 * for the returned `weights` / `mask`, as in {@link rolloutCorrection}; `out` reuses a [B,T] buffer
 * for the returned `perTokenLoss`, passed to the inner vanilla or REINFORCE loss (either loss type).
 * A buffer sharing memory with an input or with another of the three is BAD_ARGUMENT naming both,
 * raised before anything is written. Throws what the inner pieces throw (EMPTY_MASK, NON_FINITE,
 * BAD_OPTION_VALUE, SHAPE_MISMATCH / BAD_ARGUMENT naming a wrong buffer...) and UNKNOWN_MODE for an
 * unknown loss type.
 */
export function policyLossBypass(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: BypassLossOptions = {},
): BypassLossResult {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const { lossType, lossAggMode, is, rejection, vanilla, outWeights, outMask, out } = {
    ...BYPASS_DEFAULTS,
    ...options,
  };
  if (lossType !== 'ppo_clip' && lossType !== 'reinforce') {
    throw new LabError(
      'UNKNOWN_MODE',
      `loss_type: invalid ${JSON.stringify(lossType)}; expected ppo_clip or reinforce`,
      {
        details: { field: 'loss_type', value: lossType },
      },
    );
  }
  // here, with this loss's names: rolloutCorrection sees log_prob as its old_log_prob, and cannot
  // know that `advantages`, read after it wrote outMask, must not be overwritten either; `out` here
  // too, before the correction writes outWeights/outMask (the inner loss sees corr.mask and names
  // the rollout log-probs rollout_log_prob for reinforce)
  const named = { old_log_prob: oldLogProb, log_prob: logProb, advantages, response_mask: responseMask };
  checkOutNotAliased(outWeights, 'outWeights', named);
  checkOutNotAliased(outMask, 'outMask', { ...named, outWeights });
  checkOutNotAliased(out, 'out', { ...named, outWeights, outMask });
  const corr = rolloutCorrection({ oldLogProb: logProb, rolloutLogProb: oldLogProb, responseMask }, shape, {
    is,
    rejection,
    outWeights,
    outMask,
  });
  const r =
    lossType === 'ppo_clip'
      ? policyLossVanilla({ oldLogProb, logProb, advantages, responseMask: corr.mask }, shape, {
          ...vanilla,
          lossAggMode,
          out,
        })
      : policyLossReinforce(
          { rolloutLogProb: oldLogProb, logProb, advantages, responseMask: corr.mask },
          shape,
          {
            lossAggMode,
            rolloutIsWeights: corr.weights,
            out,
            ...(vanilla.agg ? { agg: vanilla.agg } : {}),
          },
        );
  return {
    loss: r.loss,
    perTokenLoss: r.perTokenLoss,
    metrics: r.metrics,
    rolloutMetrics: corr.metrics,
    mask: corr.mask,
    weights: corr.weights,
  };
}
