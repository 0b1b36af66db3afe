/**
 * One arm of the token-level experiments (`mask`, `aggregation`, `truncation`), read top to bottom:
 * setup, then per update the rollout, the truncation policy, the loss mask, GRPO advantages, the PPO
 * update and the update's measurements; then the held-out evaluation. An arm is one (mask rule,
 * loss_agg_mode, truncation policy); the experiments (src/experiments/tokenLab.ts declares their
 * shared options and runs the arms) say which arms to compare and what to report.
 *
 * Plumbing lives beside it: the table and GRU learners (armLearners.ts), what is measured
 * (tokenMeasures.ts), the truncation policies and DAPO's penalty (truncationPolicy.ts), where the
 * loss puts its weight (lossWeights.ts).
 *
 * Common random numbers: every arm of a seed draws its training tasks, its sampling and the tool
 * noise from streams forked from the seed under the same labels, and is evaluated on the same
 * held-out tasks, so arms differ by their setting, not by their luck of the draw.
 */
import { aggLossGrad } from '../core/aggLoss.js';
import { Rng } from '../random.js';
import { type ArmLearner, createLearner, type LearnerConfig } from './armLearners.js';
import { lossTokenCount, packBatch, withGroupAdvantages } from './batching.js';
import { accumulateWeights, groupAccounting, type WeightBucket } from './lossWeights.js';
import {
  type ArmEpisode,
  type ArmResult,
  type ArmSpec,
  type EpisodeMeasures,
  type LevelSuccess,
  measureEpisodes,
  successByLevel,
  type UpdateRecord,
} from './tokenMeasures.js';
import { maskTruncatedRows, shapeBatch } from './truncationPolicy.js';

/**
 * The config keys an arm reads (the token lab's options, src/experiments/tokenLab.ts, which its
 * `TokenLabConfig` satisfies). `overlong_buffer` and `unbounded_budget` only `truncation` sets:
 * without them no soft penalty can be applied and no budget-lifted evaluation is run.
 */
export interface TokenArmConfig extends LearnerConfig {
  updates: number;
  tasks_per_update: number;
  group_size: number;
  ppo_epochs: number;
  clip_ratio: number;
  std: 'unbiased' | 'population' | 'none';
  eval_tasks: number;
  overlong_buffer?: number | undefined;
}

/**
 * Held-out evaluation of the learner's current policy: `eval_tasks` tasks of the seed's evaluation
 * stream (the same for every arm and every option except max_operand), one sample each, at `budget`.
 */
function evaluationEpisodes(
  learner: ArmLearner,
  seed: number,
  cfg: TokenArmConfig,
  budget: number,
): ArmEpisode[] {
  const root = new Rng(seed);
  const tasks = learner.sampleTasks(root.fork('token-lab/eval-tasks'), cfg.eval_tasks);
  const pick = root.fork('token-lab/eval-policy');
  return learner.rollout(tasks, 1, pick, root.fork('token-lab/eval-noise'), budget);
}

function evaluate(learner: ArmLearner, seed: number, cfg: TokenArmConfig, budget: number): EpisodeMeasures {
  return measureEpisodes(evaluationEpisodes(learner, seed, cfg, budget));
}

/**
 * Trains one arm from the initial policy and measures it. `onUpdate(i)` is called after update i
 * (for progress). Deterministic for (seed, cfg, spec).
 */
export function runTokenArm(
  spec: ArmSpec,
  cfg: TokenArmConfig,
  seed: number,
  onUpdate?: (done: number) => void,
  initialParams?: Float64Array,
): ArmResult {
  // --- setup: seeded streams shared by every arm, the prior policy, the optimizer
  const root = new Rng(seed);
  const taskRng = root.fork('token-lab/train-tasks');
  const pick = root.fork('token-lab/train-policy');
  const noise = root.fork('token-lab/train-noise');
  // table or neural (armLearners.ts); a warm-started neural arm starts from the pretrained parameters
  const learner = createLearner(cfg, root.fork('token-lab/policy-init'), initialParams);
  const buckets: WeightBucket[] = [];
  const updates: UpdateRecord[] = [];
  let lastGroup: ArmResult['lastGroup'] = [];
  let skipped = 0;

  for (let u = 0; u < cfg.updates; u++) {
    // --- rollout: K tasks x G samples with the current policy; old log-probs recorded now
    const tasks = learner.sampleTasks(taskRng, cfg.tasks_per_update);
    const all = learner.rollout(tasks, cfg.group_size, pick, noise, cfg.budget);

    // --- the truncation policy: which rows are trained on, in which group, with which score
    const { rows, group, scores, dropped } = shapeBatch(
      all,
      spec.truncation,
      cfg.group_size,
      cfg.budget,
      cfg.overlong_buffer,
    );
    const record: UpdateRecord = {
      ...measureEpisodes(all),
      lossDenominator: 0,
      lossTokensPerTrajectory: 0,
      excludedTrajectories: dropped,
      loss: Number.NaN,
      clipfrac: Number.NaN,
      failedLongShortWeightRatio: Number.NaN,
    };
    updates.push(record);
    if (rows.length === 0) {
      skipped++; // every row was dropped: nothing to train on
      onUpdate?.(u + 1);
      continue;
    }

    // --- loss mask: the arm's mask rule; the `mask` policy zeroes truncated rows
    const masked = packBatch(rows, {
      maskRule: spec.maskRule,
      ...(spec.truncation === 'mask'
        ? {
            editMask: (m: Float32Array, b: { shape: { cols: number } }) => {
              record.excludedTrajectories += maskTruncatedRows(rows, m, b.shape.cols);
            },
          }
        : {}),
    });
    const { batch, mask } = masked;
    const { cols } = batch.shape;
    const lossTokens = lossTokenCount(mask);
    record.lossTokensPerTrajectory = lossTokens / all.length;
    if (lossTokens === 0) {
      skipped++; // every row was masked
      onUpdate?.(u + 1);
      continue;
    }

    // --- GRPO advantages per group, then PPO epochs on the clipped loss aggregated by loss_agg_mode
    const adv = withGroupAdvantages(masked, scores, group, { std: cfg.std }).advantages;
    const weights = aggLossGrad(mask, batch.shape, spec.lossAggMode);
    const loss = { lossAggMode: spec.lossAggMode, clipRatio: cfg.clip_ratio };
    const stats = learner.update(rows, batch, adv, mask, loss, cfg.ppo_epochs);

    // --- measurements of this update
    record.failedLongShortWeightRatio = accumulateWeights(buckets, rows, weights, mask, cols, lossTokens);
    record.lossDenominator = stats.denominator.denominator;
    record.loss = stats.steps[0]?.loss ?? Number.NaN;
    record.clipfrac = stats.steps[stats.steps.length - 1]?.metrics?.pg_clipfrac ?? Number.NaN;
    if (u === cfg.updates - 1) lastGroup = groupAccounting(rows, group, scores, adv, mask, weights, cols);
    onUpdate?.(u + 1);
  }

  // --- held-out evaluation (and, for truncation, with the budget lifted)
  const held = evaluationEpisodes(learner, seed, cfg, cfg.budget);
  const byLevel = successByLevel(held);
  return {
    spec,
    updates,
    evaluation: measureEpisodes(held),
    ...(byLevel.length ? { evaluationByLevel: byLevel } : {}),
    evaluationUnbounded:
      cfg.unbounded_budget === undefined ? null : evaluate(learner, seed, cfg, cfg.unbounded_budget),
    weightByLength: buckets,
    lastGroup,
    skippedUpdates: skipped,
    policy: learner.description,
  };
}

/**
 * The held-out success per level of the policy `params` before any RL (the same evaluation tasks
 * and streams as after training, so before and after are paired task by task).
 */
export function passRateBefore(cfg: TokenArmConfig, seed: number, params: Float64Array): LevelSuccess[] {
  const learner = createLearner(cfg, new Rng(seed).fork('token-lab/policy-init'), params);
  return successByLevel(evaluationEpisodes(learner, seed, cfg, cfg.budget));
}
