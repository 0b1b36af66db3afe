/**
 * A small fixed PPO batch of the tabular token lab for learner tests (src/train/ppoUpdate.test.ts,
 * clipSweep.test.ts), made by the project's own rollout and batching (train/rollout.ts,
 * train/batching.ts) rather than re-spelled in each test.
 */
import { contextCount, sampleTokenTask, VOCAB_SIZE } from '../../src/envs/tokenArithmetic.js';
import { ContextPolicy } from '../../src/policy/contextPolicy.js';
import { Rng } from '../../src/random.js';
import { groupBatch } from '../../src/train/batching.js';
import type { FixedBatch } from '../../src/train/clipSweep.js';
import { groupLabels, sampleTaskBatch, tokenEnvRollout } from '../../src/train/rollout.js';
import { gatherLogProbs } from '../../src/train/tokenLearner.js';

/** A table policy over 3 think buckets with logits uniform in [−1.5, 1.5) from `seed`. */
export function randomTablePolicy(seed: number): ContextPolicy {
  const p = new ContextPolicy(contextCount(3), VOCAB_SIZE);
  const rng = new Rng(seed);
  for (let i = 0; i < p.logits.length; i++) p.logits[i] = (rng.next() * 2 - 1) * 1.5;
  return p;
}

/**
 * 4 groups x 4 samples from `policy` at budget 20, scores alternating 0/1 within each group (so
 * every advantage is non-zero), GRPO advantages at verl's defaults, old log-probs of `policy`.
 */
export function fixedTokenBatch(policy: ContextPolicy, seed: number): FixedBatch {
  const rng = new Rng(seed);
  const pick = rng.fork('policy');
  const noise = rng.fork('noise');
  const tasks = sampleTaskBatch(rng, 4, (r) => sampleTokenTask(r));
  const episodes = tokenEnvRollout(policy.probabilities(), tasks, 4, pick, noise, { budget: 20 });
  const scores = episodes.map((_, i) => i % 2);
  const { batch, mask, advantages } = groupBatch(episodes, scores, groupLabels(episodes.length, 4));
  return {
    batch,
    mask,
    advantages,
    oldLogProb: gatherLogProbs(policy.logProbabilities(), VOCAB_SIZE, batch),
  };
}
