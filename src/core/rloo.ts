/**
 * RLOO outcome advantages (REINFORCE leave-one-out, https://arxiv.org/abs/2402.14740), as verl's
 * `compute_rloo_outcome_advantage` ("rloo") and `compute_rloo_vectorized_outcome_advantage`
 * ("rloo_vectorized"). The two differ on groups of one: the loop version returns the score itself,
 * the vectorized one returns 0.
 */

import {
  checkOutNotAliased,
  type FloatArray,
  type GroupLabels,
  type MaskArray,
  type OutcomeBatch,
  type OutOption,
  outcomeFields,
  type Shape2,
} from './batch.js';
import { type AdvantageReturn, groupMoments } from './grpo.js';
import { broadcastRows, groupedRowScores } from './rowScores.js';

export type RlooSingleton = 'score' | 'zero';

function rloo(
  tokenLevelRewards: FloatArray,
  responseMask: MaskArray,
  index: GroupLabels,
  shape: Shape2,
  singleton: RlooSingleton,
  out: Float32Array | null | undefined,
): AdvantageReturn {
  const { scores, groups } = groupedRowScores(tokenLevelRewards, responseMask, index, shape);
  const { count, mean } = groupMoments(scores, groups);
  const perRow = new Float64Array(shape.rows);
  for (let b = 0; b < shape.rows; b++) {
    const g = groups.ids[b] as number;
    const n = count[g] as number;
    const s = scores[b] as number;
    // n/(n-1)·(s − mean) = s − mean of the other n−1 members; exactly 0 for an all-equal group.
    perRow[b] = n > 1 ? ((s - (mean[g] as number)) * n) / (n - 1) : singleton === 'score' ? s : 0;
  }
  const advantages = broadcastRows(perRow, responseMask, shape, undefined, out ?? undefined);
  return { advantages, returns: advantages };
}

/**
 * verl `compute_rloo_outcome_advantage` ("rloo"): `s_b = Σ_t r[b,t]` (all positions), grouped by
 * `index` (exact equality); `a = n/(n−1)·s − n/(n−1)·mean_g` = s minus the mean of the other members;
 * a group of one keeps `a = s`. `advantages = a·m` ([B,T] float32, +0 under a 0 mask);
 * `returns` is the same object. `options.out`: a [B,T] buffer to write into (see {@link OutOption}).
 */
export function rlooAdvantage(inputs: OutcomeBatch, shape: Shape2, options: OutOption = {}): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  checkOutNotAliased(options.out, 'out', outcomeFields(inputs));
  return rloo(tokenLevelRewards, responseMask, index, shape, 'score', options.out);
}

/**
 * verl `compute_rloo_vectorized_outcome_advantage` ("rloo_vectorized"):
 * `a = (n·s − Σ_g s)/max(n−1, 1)·[n > 1]`, so a group of one gets 0 (unlike {@link rlooAdvantage}).
 * verl groups with `np.unique(index)` on the object array, i.e. by equality, as here.
 */
export function rlooVectorizedAdvantage(
  inputs: OutcomeBatch,
  shape: Shape2,
  options: OutOption = {},
): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  checkOutNotAliased(options.out, 'out', outcomeFields(inputs));
  return rloo(tokenLevelRewards, responseMask, index, shape, 'zero', options.out);
}
