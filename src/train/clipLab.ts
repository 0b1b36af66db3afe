/**
 * Plumbing of the `clip` experiment: the tabular policy of the token lab, rollouts at a sampling
 * temperature, fixed batches (GRPO advantages, old log-probs), the warm-up that gives the sweep a
 * policy in mid-training, one sweep arm on one fixed batch measured after every checkpoint epoch,
 * and a full training run with verl's KL loss to the reference policy. The experiment
 * (src/experiments/clip/clip.ts) says which arms to run and what to report.
 *
 * Streams: every draw comes from a stream forked from the seed under a fixed label, so all arms of
 * a seed see the same warm-up, the same fixed batches and the same held-out tasks.
 */
import { trueKlAtPositions } from '../core/clipMeasures.js';
import { LabError } from '../core/errors.js';
import type { KlPenaltyName } from '../core/kl.js';
import {
  contextCount,
  FIRST_OBSERVATION_TOKEN,
  sampleTokenTask,
  type TokenEnvOptions,
  type TokenEpisode,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { softmaxRow } from '../policy/softmax.js';
import { Rng } from '../random.js';
import { Optimizer, type OptimizerKind } from './adam.js';
import { groupBatch } from './batching.js';
import { type DriftMeasures, type FixedBatch, measureDrift, recordStepTotals } from './clipSweep.js';
import { type PolicyModel, tabularModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';
import { groupLabels, sampleTaskBatch, tokenEnvRollout } from './rollout.js';
import { gatherLogProbs } from './tokenLearner.js';

/**
 * The clip experiment's config keys this learner reads (src/experiments/clip/clipOptions.ts declares
 * them, with defaults and ranges; its `ClipConfig` satisfies this).
 */
export interface ClipLabConfig {
  budget: number;
  tool_error_rate: number;
  think_buckets: number;
  observation_logit_init: number;
  max_operand: number;
  tasks_per_update: number;
  group_size: number;
  eval_tasks: number;
  warmup_updates: number;
  stale_lag: number;
  train_lr: number;
  train_ppo_epochs: number;
  train_clip_ratio: number;
  clip_ratio_c: number;
  kl_loss_type: KlPenaltyName;
  ref_updates: number;
}

/**
 * A clip ratio that never binds: `1 − ε < 0` and `log(1 + ε) > 20`, verl's log-ratio clamp, so the
 * kernel's clip regions are empty ("no clip"). Also the dual-clip bound when dual clip is off.
 */
export const NEVER_BINDS = 1e9;

/** One clip setting of the sweep: its name and verl's clip_ratio_low / clip_ratio_high. */
export interface ClipSetting {
  name: string;
  low: number;
  high: number;
}

/** One arm of the sweep: everything but the epoch count (measured at every checkpoint of one run). */
export interface SweepArm {
  clip: ClipSetting;
  dualClip: boolean;
  miniBatches: number;
  optimizer: OptimizerKind;
  lr: number;
  /**
   * Adam's first-moment decay (torch's and the token lab's 0.9 when absent). The sweep never sets
   * it; clip.test.ts sets 0 to show how much of `clipped_moved_further` is Adam's momentum.
   */
  beta1?: number;
}

/** The token env's options of a config (budget, tool error rate, think buckets). */
export function envOptions(cfg: ClipLabConfig): TokenEnvOptions {
  return { budget: cfg.budget, toolErrorRate: cfg.tool_error_rate, thinkBuckets: cfg.think_buckets };
}

/** The initial ("pretrained") policy: action logits 0, observation tokens `observation_logit_init`. */
export function initialPolicy(cfg: ClipLabConfig): ContextPolicy {
  const tokenLogits = Array.from({ length: VOCAB_SIZE }, (_, v) =>
    v >= FIRST_OBSERVATION_TOKEN ? cfg.observation_logit_init : 0,
  );
  return new ContextPolicy(contextCount(cfg.think_buckets), VOCAB_SIZE, { tokenLogits });
}

/** `softmax(z / T)` of every context: the behaviour policy of a rollout at temperature T. */
export function temperedProbabilities(policy: ContextPolicy, temperature: number): Float64Array {
  if (!(temperature > 0) || !Number.isFinite(temperature)) {
    throw new LabError('BAD_ARGUMENT', `temperature: expected a positive number, got ${temperature}`, {
      details: { field: 'temperature', value: temperature },
    });
  }
  const scaled = policy.logits.map((z) => z / temperature);
  const out = new Float64Array(scaled.length);
  for (let c = 0; c < policy.contexts; c++)
    softmaxRow(scaled, c * policy.vocab, policy.vocab, out, c * policy.vocab);
  return out;
}

/** `log softmax(z / T)` of every context (`[contexts, vocab]`). */
export function temperedLogProbabilities(policy: ContextPolicy, temperature: number): Float64Array {
  return temperedProbabilities(policy, temperature).map(Math.log);
}

/**
 * The fixed inputs of one update from a rollout: packed batch, verl's response mask (model tokens),
 * GRPO advantages (verl defaults: unbiased std) and `old_log_prob` from `oldLogTable` (the
 * trainer's recomputation under pi_old, whatever policy sampled the tokens).
 */
export function fixedBatchFrom(
  episodes: readonly TokenEpisode[],
  groupSize: number,
  oldLogTable: Float64Array,
): FixedBatch {
  const { batch, mask, advantages } = groupBatch(
    episodes,
    episodes.map((e) => e.score),
    groupLabels(episodes.length, groupSize),
  );
  return { batch, mask, advantages, oldLogProb: gatherLogProbs(oldLogTable, VOCAB_SIZE, batch) };
}

/** Number of tokens with a non-zero advantage (an all-equal batch gives the loss nothing to do). */
function liveTokens(fixed: FixedBatch): number {
  let n = 0;
  for (let i = 0; i < fixed.mask.length; i++) if (fixed.mask[i] !== 0 && fixed.advantages[i] !== 0) n++;
  return n;
}

/** One training update of the standard learner (clip `train_clip_ratio`, `train_ppo_epochs` full-batch epochs). */
function trainStep(
  model: PolicyModel,
  optimizer: Optimizer,
  fixed: FixedBatch,
  cfg: ClipLabConfig,
  klLoss: KlLossArgs | null,
) {
  const loss = { clipRatio: cfg.train_clip_ratio };
  const { totals, onStep } = recordStepTotals(model, loss);
  ppoUpdate(model, optimizer, fixed, {
    epochs: cfg.train_ppo_epochs,
    miniBatches: 1,
    loss,
    klLoss: klLoss ? { coef: klLoss.coef, type: cfg.kl_loss_type, refLogProb: klLoss.refLogProb } : null,
    onStep,
  });
  return totals;
}

interface KlLossArgs {
  coef: number;
  refLogProb: Float64Array;
}

/** The policy after the warm-up and the logits of the last `stale_lag + 1` versions (oldest first). */
export interface WarmUp {
  policy: ContextPolicy;
  /** `history[k]` = logits `stale_lag − k` updates before the end (the last entry is the current policy). */
  history: Float64Array[];
  /** Training success of the last warm-up batch. */
  lastSuccess: number;
}

/**
 * Trains the tabular policy for `warmup_updates` with the standard learner (Adam `train_lr`), so the
 * sweep starts from a policy in mid-training rather than from the uniform start (where every group
 * fails and every advantage is 0).
 */
export function warmUp(cfg: ClipLabConfig, seed: number): WarmUp {
  const root = new Rng(seed);
  const taskRng = root.fork('clip/warmup-tasks');
  const pick = root.fork('clip/warmup-policy');
  const noise = root.fork('clip/warmup-noise');
  const policy = initialPolicy(cfg);
  const model = tabularModel(policy);
  const optimizer = new Optimizer(policy.logits.length, { kind: 'adam', learningRate: cfg.train_lr });
  const history: Float64Array[] = [Float64Array.from(policy.logits)];
  let lastSuccess = 0;
  for (let u = 0; u < cfg.warmup_updates; u++) {
    const tasks = sampleTaskBatch(taskRng, cfg.tasks_per_update, (r) => sampleTokenTask(r, cfg.max_operand));
    const episodes = tokenEnvRollout(
      policy.probabilities(),
      tasks,
      cfg.group_size,
      pick,
      noise,
      envOptions(cfg),
    );
    lastSuccess = episodes.filter((e) => e.status === 'success').length / episodes.length;
    const fixed = fixedBatchFrom(episodes, cfg.group_size, policy.logProbabilities());
    if (liveTokens(fixed) > 0) trainStep(model, optimizer, fixed, cfg, null);
    history.push(Float64Array.from(policy.logits));
    if (history.length > cfg.stale_lag + 1) history.shift();
  }
  return { policy, history, lastSuccess };
}

/** A fixed batch for the sweep: the rollout, its behaviour policy's log-prob table and pi_old's. */
export interface SweepBatch {
  fixed: FixedBatch;
  /** `[contexts, vocab]` log-probs of pi_old (the policy the update starts from). */
  oldTable: Float64Array;
  /** `[contexts, vocab]` log-probs of the policy that sampled the batch. */
  behaviourTable: Float64Array;
  /** `behaviour_log_prob [B,T]` of the sampled tokens. */
  behaviourLogProb: Float64Array;
  /** Training success of the batch. */
  success: number;
}

/**
 * Samples a fixed batch of `tasks_per_update × group_size` episodes from a behaviour policy with
 * logits `behaviourLogits` at `temperature`, with pi_old = `policy` (temperature 1). On-policy
 * batches have behaviour = old (same logits, T = 1). `label` names the streams.
 */
export function sampleSweepBatch(
  policy: ContextPolicy,
  behaviourLogits: Float64Array,
  temperature: number,
  cfg: ClipLabConfig,
  seed: number,
  label: string,
): SweepBatch {
  const root = new Rng(seed);
  const taskRng = root.fork(`clip/${label}/tasks`);
  const behaviour = new ContextPolicy(policy.contexts, policy.vocab);
  behaviour.logits.set(behaviourLogits);
  const tasks = sampleTaskBatch(taskRng, cfg.tasks_per_update, (r) => sampleTokenTask(r, cfg.max_operand));
  const episodes = tokenEnvRollout(
    temperedProbabilities(behaviour, temperature),
    tasks,
    cfg.group_size,
    root.fork(`clip/${label}/policy`),
    root.fork(`clip/${label}/noise`),
    envOptions(cfg),
  );
  const oldTable = policy.logProbabilities();
  const fixed = fixedBatchFrom(episodes, cfg.group_size, oldTable);
  const behaviourTable = temperedLogProbabilities(behaviour, temperature);
  return {
    fixed,
    oldTable,
    behaviourTable,
    behaviourLogProb: gatherLogProbs(behaviourTable, VOCAB_SIZE, fixed.batch),
    success: episodes.filter((e) => e.status === 'success').length / episodes.length,
  };
}

/** verl's vanilla-loss options of an arm (clip low/high, dual-clip c). */
export function lossOptionsOf(arm: SweepArm, cfg: ClipLabConfig) {
  return {
    clipRatio: arm.clip.low,
    clipRatioLow: arm.clip.low,
    clipRatioHigh: arm.clip.high,
    clipRatioC: arm.dualClip ? cfg.clip_ratio_c : NEVER_BINDS,
  };
}

/** The band ratios are compared with: the arm's own, or verl's default 0.2 for "no clip". */
export function bandOf(clip: ClipSetting, defaultRatio = 0.2): { low: number; high: number } {
  return clip.low >= NEVER_BINDS
    ? { low: defaultRatio, high: defaultRatio }
    : { low: clip.low, high: clip.high };
}

/** One checkpoint of a sweep arm on one batch: the drift measures plus what happened during the steps. */
export interface CheckpointMeasures extends DriftMeasures {
  epochs: number;
  /** Tokens clipped before a step, summed over the steps so far. */
  clipped_token_steps: number;
  /** Of those, the ones whose ratio moved further out of the band in that step. */
  moved_further_token_steps: number;
  /** verl's logged metrics: the mean over the steps so far (each evaluated before its step). */
  pg_clipfrac_logged: number;
  ppo_kl_logged: number;
  /** `[B,T]` log-probs at this checkpoint (for histograms and behaviour measures). */
  logProb: Float64Array;
  /** `[contexts, vocab]` log-prob table at this checkpoint. */
  table: Float64Array;
}

/**
 * Runs `max(checkpoints)` PPO epochs of `arm` on `batch` from pi_old (`oldLogits`, a fresh
 * optimizer: verl's optimizer state carries over between updates; here every arm starts equal) and
 * measures after each checkpoint epoch. Equal to separate runs of each epoch count: the steps are
 * deterministic and identical up to the checkpoint.
 */
export function runSweepArm(
  arm: SweepArm,
  batch: SweepBatch,
  oldLogits: Float64Array,
  checkpoints: readonly number[],
  cfg: ClipLabConfig,
): CheckpointMeasures[] {
  const policy = new ContextPolicy(contextCount(cfg.think_buckets), VOCAB_SIZE);
  policy.logits.set(oldLogits);
  const model = tabularModel(policy);
  const optimizer = new Optimizer(policy.logits.length, {
    kind: arm.optimizer,
    learningRate: arm.lr,
    ...(arm.beta1 === undefined ? {} : { beta1: arm.beta1 }),
  });
  const loss = lossOptionsOf(arm, cfg);
  const band = bandOf(arm.clip);
  const wanted = new Set(checkpoints);
  const out: CheckpointMeasures[] = [];
  const { totals, onStep } = recordStepTotals(model, loss);
  ppoUpdate(model, optimizer, batch.fixed, {
    epochs: Math.max(...checkpoints),
    miniBatches: arm.miniBatches,
    loss,
    onStep,
    onEpoch: (epoch) => {
      if (!wanted.has(epoch)) return;
      const drift = measureDrift(model, batch.fixed, batch.oldTable, oldLogits, band, loss);
      out.push({
        epochs: epoch,
        ...drift,
        clipped_token_steps: totals.clipped,
        moved_further_token_steps: totals.movedFurther,
        pg_clipfrac_logged: totals.pgClipfrac / totals.steps,
        ppo_kl_logged: totals.ppoKl / totals.steps,
        logProb: model.logProbAt(batch.fixed.batch),
        table: policy.logProbabilities(),
      });
    },
  });
  return out;
}

/** Per update of a training run with the KL loss. */
export interface ReferenceStep {
  /** Exact KL(pi_new || pi_ref) at the update's visited positions (what low_var_kl estimates). */
  klToRef: number;
  /** Exact KL(pi_old || pi_new) of the update at its visited positions. */
  klToOld: number;
  /** verl's actor/kl_loss: the mean over the update's steps of the k3 estimate. */
  klLoss: number;
  success: number;
}

export interface ReferenceRun {
  coef: number;
  steps: ReferenceStep[];
  evalSuccess: number;
}

/**
 * A full training run from the initial policy (= the reference policy, as an SFT model is the
 * reference of RL) for `ref_updates` updates of the standard learner plus verl's KL loss with
 * coefficient `coef` (0: no KL loss). Same task and sampling streams for every coefficient.
 */
export function trainWithReferenceKl(cfg: ClipLabConfig, seed: number, coef: number): ReferenceRun {
  const root = new Rng(seed);
  const taskRng = root.fork('clip/ref-tasks');
  const pick = root.fork('clip/ref-policy');
  const noise = root.fork('clip/ref-noise');
  const policy = initialPolicy(cfg);
  const refTable = policy.logProbabilities();
  const model = tabularModel(policy);
  const optimizer = new Optimizer(policy.logits.length, { kind: 'adam', learningRate: cfg.train_lr });
  const steps: ReferenceStep[] = [];
  for (let u = 0; u < cfg.ref_updates; u++) {
    const tasks = sampleTaskBatch(taskRng, cfg.tasks_per_update, (r) => sampleTokenTask(r, cfg.max_operand));
    const episodes = tokenEnvRollout(
      policy.probabilities(),
      tasks,
      cfg.group_size,
      pick,
      noise,
      envOptions(cfg),
    );
    const oldTable = policy.logProbabilities();
    const fixed = fixedBatchFrom(episodes, cfg.group_size, oldTable);
    const { batch, mask } = fixed;
    let klLoss = 0;
    if (liveTokens(fixed) > 0 || coef > 0) {
      const refLogProb = gatherLogProbs(refTable, VOCAB_SIZE, batch);
      const totals = trainStep(model, optimizer, fixed, cfg, coef > 0 ? { coef, refLogProb } : null);
      klLoss = totals.steps > 0 ? totals.klLoss / totals.steps : 0;
    }
    const now = policy.logProbabilities();
    steps.push({
      klToRef: trueKlAtPositions(now, refTable, VOCAB_SIZE, batch.contexts, mask, batch.shape).mean,
      klToOld: trueKlAtPositions(oldTable, now, VOCAB_SIZE, batch.contexts, mask, batch.shape).mean,
      klLoss,
      success: episodes.filter((e) => e.status === 'success').length / episodes.length,
    });
  }
  return { coef, steps, evalSuccess: evaluateSuccess(policy, cfg, seed) };
}

/** Held-out success: `eval_tasks` tasks of the seed, one sample each (same tasks for every arm). */
export function evaluateSuccess(policy: ContextPolicy, cfg: ClipLabConfig, seed: number): number {
  const root = new Rng(seed);
  const taskRng = root.fork('clip/eval-tasks');
  const tasks = sampleTaskBatch(taskRng, cfg.eval_tasks, (r) => sampleTokenTask(r, cfg.max_operand));
  const episodes = tokenEnvRollout(
    policy.probabilities(),
    tasks,
    1,
    root.fork('clip/eval-policy'),
    root.fork('clip/eval-noise'),
    envOptions(cfg),
  );
  return episodes.filter((e) => e.status === 'success').length / episodes.length;
}
