/**
 * REINFORCE++ (https://arxiv.org/abs/2501.03262) as verl's
 * `compute_reinforce_plus_plus_outcome_advantage` ("reinforce_plus_plus") and
 * `compute_reinforce_plus_plus_baseline_outcome_advantage` ("reinforce_plus_plus_baseline").
 * Both whiten over the WHOLE batch's valid tokens (not per group).
 */

import {
  checkFinite,
  checkMask,
  checkOutNotAliased,
  type FloatArray,
  type MaskArray,
  type OutcomeBatch,
  type OutOption,
  type OutReturnsOption,
  outcomeFields,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { type AdvantageReturn, groupMoments } from './grpo.js';
import { whitenValidated } from './masked.js';
import { broadcastRows, checkTokenBatch, groupedRowScores } from './rowScores.js';

/** The inputs of verl `compute_reinforce_plus_plus_outcome_advantage` (`[B,T]` each). */
export interface ReinforcePlusPlusInputs {
  tokenLevelRewards: FloatArray;
  responseMask: MaskArray;
}

/** Zeroes masked positions (+0) of a whitened matrix: verl's final `· response_mask`. */
function applyMask(x: Float32Array, mask: MaskArray): Float32Array {
  for (let i = 0; i < x.length; i++) if (mask[i] === 0) x[i] = 0;
  return x;
}

export interface ReinforcePlusPlusOptions extends OutReturnsOption {
  /** Discount γ (verl `config.gamma`; verl asserts a config is given). Default 1. */
  gamma?: number;
}

/** verl's default: `gamma` 1 (undiscounted returns). */
export const REINFORCE_PLUS_PLUS_DEFAULTS: Readonly<
  Required<Omit<ReinforcePlusPlusOptions, 'out' | 'outReturns'>>
> = Object.freeze({
  gamma: 1,
});

/**
 * verl `compute_reinforce_plus_plus_outcome_advantage`: discounted reward-to-go with a reset at masked
 * positions, going backwards `G_t = r_t + γ·carry`, `returns[t] = G_t`, then `carry = G_t·m_t` (a 0-mask
 * position, a multi-turn hole included, stops propagation to earlier tokens).
 * `advantages = masked_whiten(returns, m)·m` (batch-wide mean and unbiased variance);
 * `returns` are NOT masked and are a separate array. Float32 recursion as verl (γ rounded to float32).
 * Errors: EMPTY_MASK when fewer than 2 valid tokens (verl's masked_var raises), BAD_ARGUMENT gamma,
 * NON_FINITE reward, BAD_MASK, shape errors.
 */
export function reinforcePlusPlusAdvantage(
  inputs: ReinforcePlusPlusInputs,
  shape: Shape2,
  options: ReinforcePlusPlusOptions = {},
): AdvantageReturn {
  const { tokenLevelRewards, responseMask } = inputs;
  const { gamma } = { ...REINFORCE_PLUS_PLUS_DEFAULTS, ...options };
  if (!Number.isFinite(gamma)) {
    throw new LabError('BAD_ARGUMENT', `gamma: expected a finite number, got ${gamma}`, {
      details: { field: 'gamma', value: gamma },
    });
  }
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  checkFinite(tokenLevelRewards, shape.cols, 'token_level_rewards');
  checkMask(responseMask, shape.cols);
  const { rows, cols } = shape;
  const f32 = Math.fround;
  const g32 = f32(gamma);
  const shapeText = `[${rows},${cols}]`;
  const returns = outputBuffer(options.outReturns, rows * cols, shapeText, 'outReturns');
  const out = outputBuffer(options.out, rows * cols, shapeText);
  const named = { token_level_rewards: tokenLevelRewards, response_mask: responseMask };
  checkOutNotAliased(options.outReturns, 'outReturns', named);
  checkOutNotAliased(options.out, 'out', { ...named, outReturns: options.outReturns });
  for (let b = 0; b < rows; b++) {
    let carry = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      const G = f32((tokenLevelRewards[i] as number) + f32(g32 * carry));
      returns[i] = G;
      carry = responseMask[i] === 1 ? G : 0;
    }
  }
  const advantages = applyMask(whitenValidated(returns, responseMask, 'returns', out), responseMask);
  return { advantages, returns };
}

/**
 * verl `compute_reinforce_plus_plus_baseline_outcome_advantage`: `a_b = s_b − mean_g` (group of one:
 * mean 0), tiled over T and × m, then `masked_whiten(·, m)·m` over the whole batch.
 * `returns` is the same object as `advantages`.
 * Errors: EMPTY_MASK when fewer than 2 valid tokens, plus the usual input errors.
 */
export function reinforcePlusPlusBaselineAdvantage(
  inputs: OutcomeBatch,
  shape: Shape2,
  options: OutOption = {},
): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  const { scores, groups } = groupedRowScores(tokenLevelRewards, responseMask, index, shape);
  checkOutNotAliased(options.out, 'out', outcomeFields(inputs));
  const { count, mean } = groupMoments(scores, groups);
  const centred = new Float64Array(shape.rows);
  for (let b = 0; b < shape.rows; b++) {
    const g = groups.ids[b] as number;
    centred[b] = Math.fround((scores[b] as number) - ((count[g] as number) === 1 ? 0 : (mean[g] as number)));
  }
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  const tiled = broadcastRows(centred, responseMask, shape);
  const advantages = applyMask(whitenValidated(tiled, responseMask, 'advantages', out), responseMask);
  return { advantages, returns: advantages };
}
