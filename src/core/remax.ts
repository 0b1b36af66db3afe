/**
 * ReMax (https://arxiv.org/abs/2310.10505) as verl's `compute_remax_outcome_advantage` ("remax").
 */

import {
  checkFinite,
  checkMask,
  checkOutNotAliased,
  type FloatArray,
  type MaskArray,
  type OutReturnsOption,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import type { AdvantageReturn } from './grpo.js';
import { checkTokenBatch } from './rowScores.js';

/** The inputs of verl `compute_remax_outcome_advantage`: `[B,T]` rewards and mask, one greedy-rollout baseline per row. */
export interface RemaxInputs {
  tokenLevelRewards: FloatArray;
  /** `reward_baselines`, length B: the score of the greedy rollout of each prompt. */
  rewardBaselines: ArrayLike<number>;
  responseMask: MaskArray;
}

/**
 * verl `compute_remax_outcome_advantage`: `returns[b,t] = Σ_{t' ≥ t} r[b,t']·m[b,t']` (reverse cumsum of
 * the masked rewards), `advantages = returns − reward_baselines[b]·m[b,t]` ([B] baselines, from the greedy
 * rollout). No whitening; advantages are not re-masked, so a mask-0 hole before later valid rewards keeps
 * its return (as in verl). `returns` is a separate array.
 * Errors: SHAPE_MISMATCH baselines length, NON_FINITE rewards or baselines, BAD_MASK, shape errors.
 */
export function remaxAdvantage(
  inputs: RemaxInputs,
  shape: Shape2,
  options: OutReturnsOption = {},
): AdvantageReturn {
  const { tokenLevelRewards, rewardBaselines, responseMask } = inputs;
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  const { rows, cols } = shape;
  if (rewardBaselines.length !== rows) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `reward_baselines: expected ${rows} values (one per row), got ${rewardBaselines.length}`,
      { details: { field: 'reward_baselines', expected: rows, actual: rewardBaselines.length } },
    );
  }
  for (let b = 0; b < rows; b++) {
    const v = rewardBaselines[b] as number;
    if (!Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `reward_baselines: value ${v} at row ${b} is not finite`, {
        details: { field: 'reward_baselines', row: b, value: v },
      });
    }
  }
  checkFinite(tokenLevelRewards, shape.cols, 'token_level_rewards');
  checkMask(responseMask, shape.cols);
  const shapeText = `[${rows},${cols}]`;
  const returns = outputBuffer(options.outReturns, rows * cols, shapeText, 'outReturns');
  const advantages = outputBuffer(options.out, rows * cols, shapeText);
  const named = {
    token_level_rewards: tokenLevelRewards,
    reward_baselines: rewardBaselines,
    response_mask: responseMask,
  };
  checkOutNotAliased(options.outReturns, 'outReturns', named);
  checkOutNotAliased(options.out, 'out', { ...named, outReturns: options.outReturns });
  for (let b = 0; b < rows; b++) {
    const base = Math.fround(rewardBaselines[b] as number);
    let acc = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      if (responseMask[i] === 1) acc += tokenLevelRewards[i] as number;
      const ret = Math.fround(acc);
      returns[i] = ret;
      advantages[i] = responseMask[i] === 1 ? ret - base : ret;
    }
  }
  return { advantages, returns };
}
