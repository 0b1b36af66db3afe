/**
 * `labs run --experiment advantage`: the course's engineering exercise.
 *
 * 1. One multi-turn batch (model tokens, tool-output tokens, padding; different lengths) with
 *    all-wrong, all-right, mixed and single-element groups. For every group: the rewards, the
 *    advantage predicted by hand (closed form for 0/1 rewards, written out with its numbers), verl's
 *    GRPO kernel (`grpoAdvantage`, the [B,T] port of compute_grpo_outcome_advantage), the teaching
 *    convention (population std) and the other convention presets side by side; each difference
 *    from verl is explained in one line.
 * 2. The same batch with two tasks under one group label by mistake: advantages that were 0 become
 *    large, because an easy task is compared with a hard one.
 * 3. The mask experiment: tool-output tokens' mask set to 1 (deriving the mask from the attention
 *    mask). Policy loss under verl's four aggregation modes with the correct and the flipped mask,
 *    their denominators, and which tokens now receive gradient.
 * 4. Accounting: per task, groups seen and zero-variance groups (all-wrong / all-right apart); per
 *    batch, action, environment and padding tokens, zero-advantage tokens in the denominator, and
 *    each mode's effective denominator; per trajectory, its tokens and its weight in each mode.
 *
 * Closed form for a group of n rewards in {0,1} with k ones (p = k/n), used for the prediction:
 *   unbiased std s = sqrt(k(n−k) / (n(n−1))), population std σ = sqrt(k(n−k)) / n,
 *   A(r) = (r − p)/(s + eps) (verl), (r − p)/(σ + eps) (teaching);
 *   k = 0 or k = n (n ≥ 2): A = 0; n = 1: verl A = r/(1 + eps) with float32(1 + eps), teaching 0.
 * It is computed here from k and n only, never from the kernel's sums.
 *
 * Reads top to bottom: config, the batch, advantages per group, mis-indexed batch, mask flip,
 * accounting, record. Log-probs for the policy loss are the only random draws (seeded).
 */
import { z } from 'zod';
import { aggLossDenominator, LOSS_AGG_MODES, type LossAggMode } from '../../core/aggLoss.js';
import type { GroupKind } from '../../core/groupDiagnostics.js';
import { grpoAdvantage } from '../../core/grpo.js';
import { CONVENTION_PRESETS } from '../../core/presets.js';
import { policyLossVanillaGrad } from '../../core/vanillaPolicyLoss.js';
import { Rng } from '../../random.js';
import { defineOptions, option } from '../options.js';
import { startRecord } from '../record.js';
import type { Experiment, JsonValue, PlotHint, RunContext, RunRecord } from '../types.js';
import { formatAdvantage } from './advantageSummary.js';
import { type BatchLayout, EXERCISE_BATCH, layoutBatch, MISINDEXED_GROUP } from './exerciseBatch.js';
import { compareGroups, type GroupComparison, type GroupRow, maskFlipNote } from './groupComparison.js';

// ---------------------------------------------------------------------------------------------------
// Config
// ---------------------------------------------------------------------------------------------------

export const ADVANTAGE_OPTIONS = defineOptions({
  // Above 1 the epsilon dominates any std of 0/1 rewards and float32 advantages collapse to 0.
  epsilon: option(
    z.number().min(0).max(1),
    1e-6,
    "GRPO epsilon added to the group std, for verl's kernel and the closed form (verl 1e-6)",
    'reward units',
  ),
  clip_ratio: option(
    z.number().positive().max(1),
    0.2,
    'PPO clip ratio of the policy loss in the mask experiment (verl 0.2)',
  ),
  ratio_noise: option(
    z.number().min(0).max(2),
    0.3,
    'log_prob = old_log_prob + U(-x/2, x/2): how far the policy moved since sampling (0 = on-policy, ratio 1)',
    'nats',
  ),
});

/** The parsed config `run` receives (snake_case, every option present). */
export type AdvantageConfig = z.output<typeof ADVANTAGE_OPTIONS>;

// ---------------------------------------------------------------------------------------------------
// Run
// ---------------------------------------------------------------------------------------------------

const round = (v: number) => Number(v.toPrecision(10));

function runAdvantage(cfg: AdvantageConfig, ctx: RunContext): RunRecord {
  const record = startRecord('advantage', cfg, ctx.seed);
  const eps = cfg.epsilon;
  const batch = EXERCISE_BATCH;
  const layout = layoutBatch(batch);
  const { rows: B, cols: T } = layout;
  const labels = batch.map((t) => t.group);

  // 1. Advantages per group: hand prediction vs verl's kernel vs the other conventions.
  const main = compareGroups('exercise', batch, labels, layout, eps);
  ctx.onProgress?.(1, 4);

  // 2. The same batch with the easy task's uid overwritten by the hard task's.
  const misLabels = labels.map((l) => (l === MISINDEXED_GROUP.from ? MISINDEXED_GROUP.to : l));
  const mis = compareGroups('mis_indexed', batch, misLabels, layout, eps);
  const misRows = batch
    .map((t, b) => ({
      row: b,
      task: t.task,
      label_correct: labels[b] as string,
      label_used: misLabels[b] as string,
      reward: t.reward,
      advantage_correct: round(main.verlPerRow[b] as number),
      advantage_misindexed: round(mis.verlPerRow[b] as number),
    }))
    .filter((r) => r.label_correct === MISINDEXED_GROUP.from || r.label_correct === MISINDEXED_GROUP.to);
  ctx.onProgress?.(2, 4);

  // 3. Mask flip: tool-output tokens masked 1 (as a mask taken from the attention mask would be).
  const { maskFlip, gradientRows, newlyGradientTokens, toolTokensWithGradient } = maskFlipPhase(
    cfg,
    ctx.seed,
    layout,
    labels,
    main,
  );
  ctx.onProgress?.(3, 4);

  // 4. Accounting: per task and per batch.
  const { perTask, actionTokens, envTokens, paddingTokens, zeroAdvantageTokens, denominators, trajectories } =
    accountingPhase(layout, main, mis);

  // Measurements.
  const maxDiff = (get: (g: GroupRow) => [number[], number[]]) =>
    Math.max(
      ...main.groups.map((g) => {
        const [x, y] = get(g);
        return Math.max(...x.map((v, j) => Math.abs(v - (y[j] as number))));
      }),
    );
  const kindCount = (k: GroupKind) => main.groups.filter((g) => g.kind === k).length;
  const zeroBecameNonzero = misRows.filter(
    (r) => r.advantage_correct === 0 && r.advantage_misindexed !== 0,
  ).length;
  const groups = groupsTable(main, mis);

  return record.finish({
    metrics: {
      rows: B,
      padded_length: T,
      groups: main.groups.length,
      all_wrong_groups: kindCount('all_wrong'),
      all_right_groups: kindCount('all_right'),
      mixed_groups: kindCount('mixed'),
      singleton_groups: kindCount('singleton'),
      zero_variance_group_fraction: (kindCount('all_wrong') + kindCount('all_right')) / main.groups.length,
      max_abs_verl_minus_predicted: maxDiff((g) => [g.verl, g.predicted]),
      max_abs_teaching_minus_predicted: maxDiff((g) => [
        g.presets.teaching as number[],
        g.teaching_predicted,
      ]),
      misindexed_rows_zero_to_nonzero: zeroBecameNonzero,
      action_tokens: actionTokens,
      env_tokens: envTokens,
      padding_tokens: paddingTokens,
      zero_advantage_tokens_in_denominator: zeroAdvantageTokens,
      zero_advantage_token_fraction: zeroAdvantageTokens / actionTokens,
      denominators,
      denominators_flipped: Object.fromEntries(
        maskFlip.map((r) => [r.mode as string, r.denominator_flipped_mask as number]),
      ),
      ...Object.fromEntries(
        maskFlip.map((r) => [`loss_change.${r.mode as string}`, r.loss_change as number]),
      ),
      tool_tokens_with_gradient_correct_mask: toolTokensWithGradient,
      tool_tokens_newly_with_gradient: newlyGradientTokens,
    },
    curves: {},
    tables: {
      groups,
      misindexed: misRows,
      mask_flip: maskFlip,
      gradient_tokens: gradientRows,
      per_task: perTask,
      trajectories,
    },
    notes: [
      `presets: ${Object.values(CONVENTION_PRESETS)
        .map((p) => `${p.name} (std ${p.std}, eps ${p.epsilon}, singleton ${p.singleton})`)
        .join('; ')}`,
      maskFlipNote(maskFlip, envTokens, newlyGradientTokens),
      'mis-indexed: one uid shared by an easy and a hard task makes a mixed group out of two zero-variance groups; the easy task is pushed up and the hard one down for being easy or hard, not for anything the samples did.',
    ],
    plots: ADVANTAGE_PLOTS,
  });
}

/**
 * Phase 3, the mask flip: the policy loss under verl's four aggregation modes with the correct mask
 * and with tool-output tokens masked 1, their denominators, and which tokens receive gradient.
 * Log-probs are drawn from the seed's 'log-probs' stream (the run's only random draws).
 */
function maskFlipPhase(
  cfg: AdvantageConfig,
  seed: number,
  layout: BatchLayout,
  labels: readonly string[],
  main: GroupComparison,
) {
  const batch = EXERCISE_BATCH;
  const eps = cfg.epsilon;
  const { rows: B, cols: T } = layout;
  const shape = { rows: B, cols: T };
  const flippedMask = new Float32Array(B * T);
  for (let i = 0; i < B * T; i++)
    flippedMask[i] = (layout.actionMask[i] as number) || (layout.envMask[i] as number);
  const rng = new Rng(seed).fork('log-probs');
  const oldLogProb = new Float32Array(B * T);
  const logProb = new Float32Array(B * T);
  for (let i = 0; i < B * T; i++) {
    if (layout.actionMask[i])
      oldLogProb[i] = Math.log(0.2 + 0.75 * rng.next()); // the policy's own choices
    else if (layout.envMask[i]) oldLogProb[i] = Math.log(0.005 + 0.2 * rng.next()); // text it did not choose
    logProb[i] = (oldLogProb[i] as number) + cfg.ratio_noise * (rng.next() - 0.5);
  }
  const advCorrect = grpoAdvantage(
    { tokenLevelRewards: layout.tokenRewards, responseMask: layout.actionMask, index: labels },
    shape,
    { epsilon: eps },
  );
  const advFlipped = grpoAdvantage(
    { tokenLevelRewards: layout.tokenRewards, responseMask: flippedMask, index: labels },
    shape,
    { epsilon: eps },
  );
  const lossOptions = (mode: LossAggMode) => ({ lossAggMode: mode, clipRatio: cfg.clip_ratio });
  const maskFlip: Record<string, JsonValue>[] = [];
  const gradTokens = {
    correct: new Map<LossAggMode, Float64Array>(),
    flipped: new Map<LossAggMode, Float64Array>(),
  };
  for (const mode of LOSS_AGG_MODES) {
    const c = policyLossVanillaGrad(
      { oldLogProb, logProb, advantages: advCorrect.advantages, responseMask: layout.actionMask },
      shape,
      lossOptions(mode),
    );
    const f = policyLossVanillaGrad(
      { oldLogProb, logProb, advantages: advFlipped.advantages, responseMask: flippedMask },
      shape,
      lossOptions(mode),
    );
    const dc = aggLossDenominator(layout.actionMask, shape, mode);
    const df = aggLossDenominator(flippedMask, shape, mode);
    gradTokens.correct.set(mode, c.grad);
    gradTokens.flipped.set(mode, f.grad);
    maskFlip.push({
      mode,
      loss_correct_mask: round(c.loss),
      loss_flipped_mask: round(f.loss),
      loss_change: round(f.loss - c.loss),
      denominator_correct_mask: dc.denominator,
      denominator_flipped_mask: df.denominator,
      denominator_formula: dc.formula,
    });
  }
  // which tokens receive gradient (∂loss/∂log_prob ≠ 0), per trajectory, token-mean
  const gc = gradTokens.correct.get('token-mean') as Float64Array;
  const gf = gradTokens.flipped.get('token-mean') as Float64Array;
  let newlyGradientTokens = 0;
  let toolTokensWithGradient = 0;
  const gradientRows = batch.map((t, b) => {
    let withC = 0;
    let withF = 0;
    let newTool = 0;
    for (let k = b * T; k < (b + 1) * T; k++) {
      if (gc[k] !== 0) withC += 1;
      if (gf[k] !== 0) withF += 1;
      if (gf[k] !== 0 && gc[k] === 0 && layout.envMask[k]) newTool += 1;
      if (gc[k] !== 0 && layout.envMask[k]) toolTokensWithGradient += 1;
    }
    newlyGradientTokens += newTool;
    return {
      row: b,
      task: t.task,
      reward: t.reward,
      advantage: round(main.verlPerRow[b] as number),
      model_tokens: layout.actionTokens[b] as number,
      tool_tokens: layout.envTokens[b] as number,
      tokens_with_gradient_correct: withC,
      tokens_with_gradient_flipped: withF,
      tool_tokens_newly_with_gradient: newTool,
    };
  });
  return { maskFlip, gradientRows, newlyGradientTokens, toolTokensWithGradient };
}

/**
 * Phase 4, the accounting: per task, groups seen and zero-variance groups; per batch, action,
 * environment and padding tokens, zero-advantage tokens in the denominator and each mode's
 * denominator; per trajectory, its tokens and its weight in each mode.
 */
function accountingPhase(layout: BatchLayout, main: GroupComparison, mis: GroupComparison) {
  const batch = EXERCISE_BATCH;
  const { rows: B, cols: T } = layout;
  const shape = { rows: B, cols: T };
  const perTaskOf = (name: string, groups: GroupRow[]) => {
    const tasks = [...new Set(batch.map((t) => t.task))];
    return tasks.map((task) => {
      const mine = groups.filter((g) => g.tasks.includes(task));
      const count = (k: GroupKind) => mine.filter((g) => g.kind === k).length;
      const zv = count('all_wrong') + count('all_right') + count('all_equal_other');
      return {
        batch: name,
        task,
        groups: mine.length,
        samples: batch.filter((t) => t.task === task).length,
        all_wrong_groups: count('all_wrong'),
        all_right_groups: count('all_right'),
        mixed_groups: count('mixed'),
        singleton_groups: count('singleton'),
        zero_variance_groups: zv,
        zero_variance_fraction: mine.length === 0 ? 0 : zv / mine.length,
      };
    });
  };
  const actionTokens = layout.actionTokens.reduce((s, v) => s + v, 0);
  const envTokens = layout.envTokens.reduce((s, v) => s + v, 0);
  const paddingTokens = B * T - actionTokens - envTokens;
  let zeroAdvantageTokens = 0;
  for (let b = 0; b < B; b++)
    if (main.verlPerRow[b] === 0) zeroAdvantageTokens += layout.actionTokens[b] as number;
  const denominators = Object.fromEntries(
    LOSS_AGG_MODES.map((mode) => [mode, aggLossDenominator(layout.actionMask, shape, mode).denominator]),
  ) as Record<LossAggMode, number>;
  const validRows = layout.actionTokens.filter((a) => a > 0).length;
  const trajectories = batch.map((t, b) => {
    const a = layout.actionTokens[b] as number;
    return {
      row: b,
      task: t.task,
      group: t.group,
      reward: t.reward,
      model_tokens: a,
      tool_tokens: layout.envTokens[b] as number,
      padding: T - (layout.lengths[b] as number),
      advantage: round(main.verlPerRow[b] as number),
      // share of the loss each trajectory gets under each mode (its tokens' summed weights)
      'weight token-mean': round(a / denominators['token-mean']),
      'weight seq-mean-token-sum': round(a / validRows),
      'weight seq-mean-token-mean': round(a > 0 ? 1 / validRows : 0),
      'weight seq-mean-token-sum-norm': round(a / T),
    };
  });

  const perTask = [...perTaskOf('exercise', main.groups), ...perTaskOf('mis_indexed', mis.groups)];
  return { perTask, actionTokens, envTokens, paddingTokens, zeroAdvantageTokens, denominators, trajectories };
}

/** The `groups` table: every group of the exercise batch, then the mis-indexed batch's merged group. */
function groupsTable(main: GroupComparison, mis: GroupComparison): Record<string, JsonValue>[] {
  return [...main.groups, ...mis.groups.filter((g) => g.group === MISINDEXED_GROUP.to)].map(
    (g) =>
      ({
        batch: g.batch,
        group: g.group,
        tasks: g.tasks,
        kind: g.kind,
        size: g.rewards.length,
        rewards: g.rewards,
        predicted: g.predicted.map(round),
        verl: g.verl.map(round),
        teaching: (g.presets.teaching as number[]).map(round),
        teaching_predicted: g.teaching_predicted.map(round),
        trl: g.presets.trl?.map(round) ?? null,
        openrlhf: g.presets.openrlhf?.map(round) ?? null,
        'nemo-rl': g.presets['nemo-rl']?.map(round) ?? null,
        formula: g.formula,
        teaching_formula: g.teaching_formula,
        differences: g.differences,
      }) as Record<string, JsonValue>,
  );
}

const ADVANTAGE_PLOTS: Record<string, PlotHint> = {
  mask_flip_loss: {
    title: 'Policy loss: correct mask vs tool-output tokens masked 1',
    y: 'pg_loss',
    x: 'aggregation mode',
    kind: 'bar',
    table: 'mask_flip',
    xField: 'mode',
    yFields: ['loss_correct_mask', 'loss_flipped_mask'],
  },
  mask_flip_denominator: {
    title: 'Loss denominator: correct vs flipped mask',
    y: 'denominator (tokens, rows or T)',
    x: 'aggregation mode',
    kind: 'bar',
    table: 'mask_flip',
    xField: 'mode',
    yFields: ['denominator_correct_mask', 'denominator_flipped_mask'],
  },
};

export const advantage: Experiment<typeof ADVANTAGE_OPTIONS> = {
  name: 'advantage',
  summary:
    "the course's exercise: hand-predicted vs verl vs teaching advantages on every group kind, a mis-indexed batch, a tool-output mask set to 1, zero-variance and denominator accounting",
  options: ADVANTAGE_OPTIONS,
  run: (config, ctx) => {
    const result = runAdvantage(config, ctx);
    ctx.onProgress?.(4, 4);
    return result;
  },
  format: formatAdvantage,
};
