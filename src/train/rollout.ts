/**
 * The rollout of every learner: K tasks × G samples, task-major (a task's group of G episodes is
 * contiguous, as verl's `n` responses per prompt are), drawn from seeded streams the caller owns.
 *
 * Streams: the caller forks its streams (tasks, sampling, tool noise) under its own labels and
 * passes them in; this file only fixes the order of the draws, which is the order every learner of
 * the lab has always used, so the same seed gives the same episodes byte for byte:
 * 1. all K tasks are drawn first, one after another, from the task stream ({@link sampleTaskBatch});
 * 2. then task by task, sample by sample, one episode at a time ({@link rolloutGroups}): each episode
 *    interleaves its token draws (sampling stream) with its tool-noise draws (noise stream) in the
 *    environment's own order.
 * The env, the policy and the agent differ by learner (tabular choose function, GRU agent, tempered
 * agent, engine agent); they enter as the `runEpisode` callback.
 */
import {
  type ChooseToken,
  runTokenEpisode,
  type TokenEnvOptions,
  type TokenEpisode,
  type TokenTask,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import type { Rng } from '../random.js';

/** `count` tasks drawn one after another from `rng` by `sample` (the K prompts of a batch). */
export function sampleTaskBatch<T>(rng: Rng, count: number, sample: (rng: Rng) => T): T[] {
  return Array.from({ length: count }, () => sample(rng));
}

/**
 * The K × G rollout: `groupSize` episodes of every task, task-major (row `k·G + g` is sample g of
 * task k); `groupSize` may instead give one size per task (explore's larger groups for some tasks).
 * `runEpisode(task, k)` runs one episode with the caller's policy and streams; it is called in row
 * order, so draws happen task by task, sample by sample.
 */
export function rolloutGroups<T, E>(
  tasks: readonly T[],
  groupSize: number | readonly number[],
  runEpisode: (task: T, taskIndex: number) => E,
): E[] {
  const out: E[] = [];
  tasks.forEach((task, k) => {
    const size = typeof groupSize === 'number' ? groupSize : (groupSize[k] as number);
    for (let g = 0; g < size; g++) out.push(runEpisode(task, k));
  });
  return out;
}

/** The group label of each row of a task-major K × G rollout: `floor(row / G)` (verl's `uid` per prompt). */
export function groupLabels(rows: number, groupSize: number): number[] {
  return Array.from({ length: rows }, (_, i) => Math.floor(i / groupSize));
}

/** The group labels of a task-major rollout with `sizes[k]` rows for task k: k repeated `sizes[k]` times. */
export function groupLabelsOfSizes(sizes: readonly number[]): Int32Array {
  const out: number[] = [];
  sizes.forEach((s, k) => {
    for (let i = 0; i < s; i++) out.push(k);
  });
  return Int32Array.from(out);
}

/** The tabular policy's sampler: one draw from `pick` per token, from row `context` of `probs` `[contexts, vocab]`. */
export function tableChooser(probs: Float64Array, vocab: number, pick: Rng): ChooseToken {
  return (ctx: number) => ContextPolicy.sample(probs, vocab, ctx, pick);
}

/**
 * The token env's K × G rollout with a tabular policy: tokens drawn from `probs` (`[contexts,
 * vocab]`, e.g. `policy.probabilities()` or a tempered table) with `pick`, tool noise from `noise`.
 */
export function tokenEnvRollout(
  probs: Float64Array,
  tasks: readonly TokenTask[],
  groupSize: number,
  pick: Rng,
  noise: Rng,
  env: Partial<TokenEnvOptions>,
): TokenEpisode[] {
  const choose = tableChooser(probs, VOCAB_SIZE, pick);
  return rolloutGroups(tasks, groupSize, (task) => runTokenEpisode(task, choose, noise, env));
}
