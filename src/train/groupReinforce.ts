/**
 * Group-standardised on-policy REINFORCE for the tabular policy (the course's `labs/agent.py`
 * learner): per update, K tasks x G sampled episodes each, one scalar GRPO advantage per episode from
 * the core kernel (`grpoScalarAdvantages`, grouped by task), then ONE gradient-ascent step on
 *
 *   J(z) = (1/B) * sum_i A_i * sum_t log pi_z(a_{i,t} | kind_i, stage_{i,t}),   B = K * G
 *
 * (`reduce: 'mean'`, the default; verl's name for this aggregation is `seq-mean-token-sum`: sum over a
 * trajectory's actions, mean over trajectories) or the same without the 1/B (`reduce: 'sum'`).
 *
 * What it is not: no PPO clip, no ratio (one step per on-policy batch, so pi_old = pi and the ratio is
 * exactly 1), no reference-policy KL, no token mask (every recorded step is a policy action; the env's
 * observations are not tokens here). The advantage is the same scalar for every action of a trajectory.
 */

import { LabError } from '../core/errors.js';
import { classifyGroups, countGroupKinds } from '../core/groupDiagnostics.js';
import { grpoScalarAdvantages, type SingletonRule, type StdKind } from '../core/grpo.js';
import type { Task } from '../envs/toolArithmetic.js';
import { accumulateGradLogProb, checkLogits, NUM_LOGITS } from '../policy/tabular.js';
import type { Rng } from '../random.js';
import { type Episode, rolloutEpisode } from './episode.js';
import { groupLabels, rolloutGroups } from './rollout.js';

/** One on-policy batch: `tasks.length` groups of `groupSize` episodes, group-major. */
export interface GroupBatch {
  episodes: Episode[];
  /** Reward of each episode (0/1), length B = groups * groupSize. */
  rewards: Float64Array;
  /** Group label (the task's position in `tasks`) of each episode. */
  index: Int32Array;
  groups: number;
  groupSize: number;
}

/**
 * Samples `groupSize` episodes for each task with `logits` (policy draws from `rng`, task by task),
 * the GRPO "G responses per prompt". Episode i belongs to group floor(i / groupSize).
 */
export function collectGroups(
  logits: ArrayLike<number>,
  tasks: readonly Task[],
  groupSize: number,
  rng: Rng,
): GroupBatch {
  checkLogits(logits);
  if (!Number.isInteger(groupSize) || groupSize < 1) {
    throw new LabError('BAD_ARGUMENT', `group_size: expected an integer >= 1, got ${groupSize}`, {
      details: { field: 'group_size', value: groupSize },
    });
  }
  const episodes = rolloutGroups(tasks, groupSize, (task) => rolloutEpisode(logits, task, rng));
  const rewards = Float64Array.from(episodes, (ep) => ep.reward);
  const index = Int32Array.from(groupLabels(episodes.length, groupSize));
  return { episodes, rewards, index, groups: tasks.length, groupSize };
}

export interface GroupAdvantageOptions {
  /** Which std divides the centred reward. The course's teaching code uses `population`; verl `unbiased`. */
  std: StdKind;
  /** Added to the std; verl's 1e-6. */
  epsilon: number;
  /** Groups of one (G = 1): verl's mean 0 / std 1, zero, or an error. */
  singleton: SingletonRule;
}

/** The agent experiment's convention: the course's population std, verl's epsilon and singleton rule. */
export const TEACHING_ADVANTAGE: GroupAdvantageOptions = Object.freeze({
  std: 'population',
  epsilon: 1e-6,
  singleton: 'verl',
});

/**
 * One advantage per episode by the core GRPO kernel (verl `compute_grpo_outcome_advantage`, scalar
 * form): a_i = (r_i - mean_g) / (std_g + eps), grouped by task.
 */
export function reinforceGroupAdvantages(
  batch: GroupBatch,
  options: Partial<GroupAdvantageOptions> = {},
): Float64Array {
  return grpoScalarAdvantages(batch.rewards, batch.index, { ...TEACHING_ADVANTAGE, ...options });
}

/**
 * Entry check of the episode-batch gradients: B >= 1 episodes with one finite advantage each, and a
 * length-24 output buffer (SHAPE_MISMATCH / NON_FINITE naming the field and row).
 */
export function checkEpisodeBatch(
  episodes: readonly Episode[],
  advantages: ArrayLike<number>,
  out: Float64Array,
): void {
  if (episodes.length !== advantages.length || episodes.length === 0) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `advantages: expected one per episode (${episodes.length} episodes, at least 1), got ${advantages.length}`,
      { details: { field: 'advantages', expected: episodes.length, actual: advantages.length } },
    );
  }
  if (out.length !== NUM_LOGITS) {
    throw new LabError('SHAPE_MISMATCH', `out: expected ${NUM_LOGITS} entries, got ${out.length}`, {
      details: { field: 'out' },
    });
  }
  for (let i = 0; i < advantages.length; i++) {
    const a = advantages[i] as number;
    if (!Number.isFinite(a)) {
      throw new LabError('NON_FINITE', `advantages: value ${a} at row ${i} is not finite`, {
        details: { field: 'advantages', row: i, value: a },
      });
    }
  }
}

/** `mean`: divide the summed REINFORCE term by the number of trajectories B; `sum`: do not. */
export type GradientReduce = 'mean' | 'sum';

/**
 * dJ/dz for J(z) = c * sum_i A_i * sum_t log pi_z(a_{i,t} | s_{i,t}), c = 1/B (`mean`) or 1 (`sum`),
 * evaluated at `logits` (the policy that sampled the episodes: on-policy). Writes into and returns
 * `out` (length 24, zeroed first). Shapes: episodes and advantages of equal length B >= 1.
 */
export function reinforceGradient(
  logits: ArrayLike<number>,
  episodes: readonly Episode[],
  advantages: ArrayLike<number>,
  reduce: GradientReduce = 'mean',
  out: Float64Array = new Float64Array(NUM_LOGITS),
): Float64Array {
  checkLogits(logits);
  checkEpisodeBatch(episodes, advantages, out);
  out.fill(0);
  const c = reduce === 'mean' ? 1 / episodes.length : 1;
  for (let i = 0; i < episodes.length; i++) {
    const a = advantages[i] as number;
    if (a === 0) continue; // contributes exactly nothing: the zero-variance groups of the course
    for (const s of (episodes[i] as Episode).steps) {
      accumulateGradLogProb(logits, s.kind, s.stage, s.action, c * a, out);
    }
  }
  return out;
}

/**
 * `z ← z + lr·grad` (gradient ascent on J, plain SGD as the course's teaching code), in place; returns
 * `‖grad‖₂`. Errors: SHAPE_MISMATCH when `grad` and `logits` differ in length (a short gradient would
 * write NaN into the table).
 */
export function ascend(logits: Float64Array, grad: ArrayLike<number>, lr: number): number {
  if (grad.length !== logits.length) {
    throw new LabError('SHAPE_MISMATCH', `grad: expected ${logits.length} entries, got ${grad.length}`, {
      details: { field: 'grad', expected: logits.length, actual: grad.length },
    });
  }
  let sq = 0;
  for (let j = 0; j < logits.length; j++) {
    const g = grad[j] as number;
    logits[j] = (logits[j] as number) + lr * g;
    sq += g * g;
  }
  return Math.sqrt(sq);
}

/** Per-update diagnostics of the course's first section. All fractions are in [0, 1]. */
export interface UpdateDiagnostics {
  /** Fractions of the batch's groups by kind (they sum to 1). */
  allWrong: number;
  allRight: number;
  mixed: number;
  singleton: number;
  /** Fraction of episodes whose advantage is exactly 0 (they move no logit). */
  zeroAdvantage: number;
  /** Fraction of episodes with reward 1. */
  success: number;
}

/**
 * Classifies the groups of a 0/1-reward batch with the core `classifyGroups` (fail 0, pass 1) and
 * counts zero advantages. `allWrong + allRight + mixed + singleton = 1` (rewards are 0/1, so the core's
 * `all_equal_other` cannot occur; it is checked).
 */
export function updateDiagnostics(batch: GroupBatch, advantages: ArrayLike<number>): UpdateDiagnostics {
  const groups = classifyGroups(batch.rewards, batch.index, { failValue: 0, passValue: 1 });
  const counts = countGroupKinds(groups);
  const n = groups.length;
  let zero = 0;
  let wins = 0;
  for (let i = 0; i < advantages.length; i++) {
    if (advantages[i] === 0) zero += 1;
    wins += batch.rewards[i] as number;
  }
  const other = counts.all_equal_other;
  if (other !== 0) {
    throw new LabError(
      'BAD_VALUE',
      `rewards: ${other} groups are constant at a value that is neither 0 nor 1`,
      {
        details: { field: 'rewards' },
      },
    );
  }
  return {
    allWrong: counts.all_wrong / n,
    allRight: counts.all_right / n,
    mixed: counts.mixed / n,
    singleton: counts.singleton / n,
    zeroAdvantage: zero / advantages.length,
    success: wins / batch.rewards.length,
  };
}
