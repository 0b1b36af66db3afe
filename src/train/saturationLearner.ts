/**
 * Plumbing of the `saturation` experiment: one update of the token-level PPO learner in which the
 * all-right groups may get redistributed advantages from a ranker, and what that update measured.
 *
 * An update: K tasks x G samples from the current tabular policy; the outcome advantage is verl's
 * GRPO on the 0/1 scores (all-right and all-wrong groups get exactly 0); with a ranker, each
 * all-right group's rows also get `lambda (q − mean q)/(std q + eps)` (core
 * `redistributeAdvantages`), broadcast over their model tokens; then `ppo_epochs` clipped PPO steps.
 * Mixed groups feed the rubric (groupwise reward synthesis) whatever the arm, so every arm's rubric
 * is built from the same kind of evidence. For the audit, every pass of an all-right group gets an
 * independent quality — the success rate of its action sequence re-played with the tool slip rate
 * raised — and the ranker's scores are rank-correlated with it within the group.
 */
import { redistributeAdvantages } from '../core/advantageRedistribution.js';
import { spearman } from '../core/rankCorrelation.js';
import { replaySuccessRate } from '../envs/actionReplay.js';
import {
  FIRST_OBSERVATION_TOKEN,
  sampleTokenTask,
  type TokenEnvOptions,
  type TokenTask,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import type { Rng } from '../random.js';
import type { Optimizer } from './adam.js';
import { groupBatch } from './batching.js';
import { tabularModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';
import { type RankerName, type Rubric, rankerScores, trajectoryFeatures } from './rankers.js';
import { groupLabels, sampleTaskBatch, tokenEnvRollout } from './rollout.js';
import { gatherLogProbs } from './tokenLearner.js';

/** The learner's state: policy, optimizer and rubric. Arms branch from one state by {@link cloneState}. */
export interface LearnerState {
  policy: ContextPolicy;
  optimizer: Optimizer;
  rubric: Rubric;
}

/** An independent copy of a learner state (logits, optimizer moments and rubric sums copied). */
export function cloneState(s: LearnerState): LearnerState {
  const policy = new ContextPolicy(s.policy.contexts, s.policy.vocab);
  policy.logits.set(s.policy.logits);
  return { policy, optimizer: s.optimizer.clone(), rubric: s.rubric.clone() };
}

/** The initial logits: 0 for action tokens, `observationLogit` for observation tokens (the "pretrained" prior). */
export function initialTokenLogits(observationLogit: number): number[] {
  return Array.from({ length: VOCAB_SIZE }, (_, v) => (v >= FIRST_OBSERVATION_TOKEN ? observationLogit : 0));
}

/** Streams of one phase of training (tasks, sampling, tool noise, the random ranker, replays). */
export interface LearnerStreams {
  tasks: Rng;
  pick: Rng;
  noise: Rng;
  ranker: Rng;
  replay: Rng;
}

/** What one update does with all-right groups and how it trains. */
export interface UpdateSettings {
  groupsPerUpdate: number;
  groupSize: number;
  maxOperand: number;
  env: TokenEnvOptions;
  std: 'unbiased' | 'population' | 'none';
  ppoEpochs: number;
  clipRatio: number;
  /** null: binary GRPO (all-right groups get 0). */
  ranker: RankerName | null;
  lambda: number;
  /** The raised tool slip rate of the independent quality, and how many replays measure it. */
  robustToolErrorRate: number;
  robustReplays: number;
}

/** Measures of one update. */
export interface SaturationUpdate {
  success: number;
  verifyRate: number;
  meanLength: number;
  groups: number;
  allRightGroups: number;
  mixedGroups: number;
  /** Groups with a non-zero advantage on some row: mixed groups plus redistributed all-right groups. */
  gradientGroups: number;
  /** All-right groups whose quality scores all tied (redistribution gave 0). */
  tiedGroups: number;
  /** Per all-right group where both vary: Spearman of ranker score vs independent quality. */
  spearmans: number[];
}

/** One rollout + PPO update of `state` (in place) under `s`; returns what it measured. */
export function saturationUpdate(
  state: LearnerState,
  streams: LearnerStreams,
  s: UpdateSettings,
): SaturationUpdate {
  const G = s.groupSize;
  const tasks = sampleTaskBatch(streams.tasks, s.groupsPerUpdate, (r) => sampleTokenTask(r, s.maxOperand));
  const logTable = state.policy.logProbabilities();
  const probs = state.policy.probabilities();
  const episodes = tokenEnvRollout(probs, tasks, G, streams.pick, streams.noise, s.env);
  const index = groupLabels(episodes.length, G);
  const passed: number[] = episodes.map((e) => (e.status === 'success' ? 1 : 0));

  // --- groups: mixed ones teach the rubric; all-right ones get ranker scores and the audit
  const quality = new Float64Array(episodes.length).fill(Number.NaN);
  const spearmans: number[] = [];
  let allRightGroups = 0;
  let mixedGroups = 0;
  for (let g = 0; g < tasks.length; g++) {
    const group = episodes.slice(g * G, (g + 1) * G);
    const pass = group.map((e) => e.status === 'success');
    const passes = pass.filter(Boolean).length;
    if (passes > 0 && passes < G) {
      mixedGroups++;
      state.rubric.observeGroup((tasks[g] as TokenTask).kind, pass, group.map(trajectoryFeatures));
    }
    if (passes !== G || s.ranker === null) {
      if (passes === G) allRightGroups++;
      continue;
    }
    allRightGroups++;
    const q = rankerScores(s.ranker, group, streams.ranker, state.rubric);
    quality.set(q, g * G);
    const robust = group.map((e) =>
      replaySuccessRate(e, streams.replay, s.robustReplays, {
        ...s.env,
        toolErrorRate: s.robustToolErrorRate,
      }),
    );
    if (G >= 2) {
      const rho = spearman(q, robust);
      if (rho !== null) spearmans.push(rho);
    }
  }

  // --- advantages: GRPO on the 0/1 outcome, plus the redistribution inside all-right groups
  const { batch, mask, advantages: adv } = groupBatch(episodes, passed, index, { norm: { std: s.std } });
  let tiedGroups = 0;
  let redistributedGroups = 0;
  if (s.ranker !== null) {
    const r = redistributeAdvantages(passed, quality, index, {
      lambda: s.lambda,
      std: s.std === 'population' ? 'population' : 'unbiased',
    });
    tiedGroups = r.tiedGroups;
    redistributedGroups = r.redistributedGroups;
    const { cols } = batch.shape;
    for (let b = 0; b < episodes.length; b++) {
      const extra = r.advantages[b] as number;
      if (extra === 0) continue;
      for (let t = 0; t < cols; t++) {
        const i = b * cols + t;
        if (mask[i] !== 0) adv[i] = (adv[i] as number) + extra;
      }
    }
  }

  // --- PPO epochs on the batch
  const oldLogProb = gatherLogProbs(logTable, VOCAB_SIZE, batch);
  ppoUpdate(
    tabularModel(state.policy),
    state.optimizer,
    { batch, mask, advantages: adv, oldLogProb },
    {
      epochs: s.ppoEpochs,
      loss: { lossAggMode: 'token-mean', clipRatio: s.clipRatio },
    },
  );

  let verified = 0;
  let length = 0;
  for (const e of episodes) {
    if (e.verified) verified++;
    length += e.tokens.length;
  }
  const N = episodes.length;
  return {
    success: passed.reduce((a, b) => a + b, 0) / N,
    verifyRate: verified / N,
    meanLength: length / N,
    groups: tasks.length,
    allRightGroups,
    mixedGroups,
    gradientGroups: mixedGroups + redistributedGroups,
    tiedGroups,
    spearmans,
  };
}
