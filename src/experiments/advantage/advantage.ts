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
import { LabError } from '../../core/errors.js';
import { classifyGroups, type GroupKind } from '../../core/groupDiagnostics.js';
import { grpoAdvantage } from '../../core/grpo.js';
import { CONVENTION_PRESETS, type ConventionPreset, presetAdvantages } from '../../core/presets.js';
import { policyLossVanillaGrad } from '../../core/vanillaPolicyLoss.js';
import { Rng } from '../../random.js';
import { defineOptions, option } from '../options.js';
import { startRecord } from '../record.js';
import type { Experiment, JsonValue, RunContext, RunRecord } from '../types.js';
import { formatAdvantage } from './advantageSummary.js';

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
// The batch. Each trajectory is a list of turns: model text (mask 1) and tool output (mask 0),
// right-padded to the longest trajectory. The outcome reward sits on the last non-pad token.
// ---------------------------------------------------------------------------------------------------

/** A turn: `m` model tokens or `e` environment (tool output) tokens. */
export type Turn = { m: number } | { e: number };

export interface Trajectory {
  task: string;
  group: string;
  reward: 0 | 1;
  turns: Turn[];
}

const call = (m: number, e: number, answer: number): Turn[] => [{ m }, { e }, { m: answer }];

/** The exercise's batch: every group kind, one task seen in two groups, lengths 4..21. */
export const EXERCISE_BATCH: readonly Trajectory[] = [
  // all wrong: the model never gets 17+25 right, with or without the tool
  { task: 'add 17+25', group: 'u1', reward: 0, turns: call(5, 4, 3) },
  { task: 'add 17+25', group: 'u1', reward: 0, turns: call(6, 4, 2) },
  { task: 'add 17+25', group: 'u1', reward: 0, turns: [{ m: 4 }] },
  { task: 'add 17+25', group: 'u1', reward: 0, turns: [...call(5, 4, 5), { e: 4 }, { m: 2 }] },
  // all right
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: call(5, 3, 2) },
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: call(5, 3, 2) },
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: call(4, 3, 3) },
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: [...call(5, 3, 6), { e: 3 }, { m: 2 }] },
  // mixed, 2 of 4 right
  { task: 'mul 6*7', group: 'u3', reward: 1, turns: call(5, 3, 2) },
  { task: 'mul 6*7', group: 'u3', reward: 0, turns: [{ m: 7 }] },
  { task: 'mul 6*7', group: 'u3', reward: 0, turns: [...call(5, 6, 4), { e: 6 }, { m: 3 }] },
  { task: 'mul 6*7', group: 'u3', reward: 1, turns: call(5, 3, 2) },
  // mixed, 2 of 3 right
  { task: 'add 8+9', group: 'u4', reward: 0, turns: [{ m: 6 }] },
  { task: 'add 8+9', group: 'u4', reward: 1, turns: call(5, 2, 2) },
  { task: 'add 8+9', group: 'u4', reward: 1, turns: call(4, 2, 2) },
  // a group of one (e.g. the others were filtered out)
  { task: 'div 84/4', group: 'u5', reward: 1, turns: call(5, 2, 2) },
  // the hard task again under a second uid: now 1 of 4 right
  { task: 'add 17+25', group: 'u6', reward: 0, turns: call(5, 4, 3) },
  { task: 'add 17+25', group: 'u6', reward: 1, turns: call(5, 4, 2) },
  { task: 'add 17+25', group: 'u6', reward: 0, turns: [{ m: 5 }] },
  { task: 'add 17+25', group: 'u6', reward: 0, turns: call(6, 4, 2) },
];

/** The mistake of the second batch: the easy task's uid overwritten with the hard task's. */
export const MISINDEXED_GROUP = { from: 'u2', to: 'u1' } as const;

/** Token layout of a batch: [B,T] masks of model tokens and of tool tokens, rewards at the last token. */
export interface BatchLayout {
  rows: number;
  cols: number;
  /** 1 on model tokens (verl's response_mask). */
  actionMask: Float32Array;
  /** 1 on tool-output tokens. */
  envMask: Float32Array;
  /** Outcome reward on the last non-pad token, 0 elsewhere ([B,T]). */
  tokenRewards: Float32Array;
  actionTokens: number[];
  envTokens: number[];
  lengths: number[];
}

export function layoutBatch(batch: readonly Trajectory[]): BatchLayout {
  const lengths = batch.map((t) => t.turns.reduce((s, turn) => s + ('m' in turn ? turn.m : turn.e), 0));
  const rows = batch.length;
  const cols = Math.max(...lengths);
  const actionMask = new Float32Array(rows * cols);
  const envMask = new Float32Array(rows * cols);
  const tokenRewards = new Float32Array(rows * cols);
  const actionTokens: number[] = [];
  const envTokens: number[] = [];
  batch.forEach((traj, b) => {
    let t = 0;
    let a = 0;
    let e = 0;
    for (const turn of traj.turns) {
      const n = 'm' in turn ? turn.m : turn.e;
      const target = 'm' in turn ? actionMask : envMask;
      for (let k = 0; k < n; k++) target[b * cols + t + k] = 1;
      t += n;
      if ('m' in turn) a += n;
      else e += n;
    }
    tokenRewards[b * cols + t - 1] = traj.reward;
    actionTokens.push(a);
    envTokens.push(e);
  });
  return { rows, cols, actionMask, envMask, tokenRewards, actionTokens, envTokens, lengths };
}

// ---------------------------------------------------------------------------------------------------
// The closed form (the "by hand" prediction), from k ones among n rewards
// ---------------------------------------------------------------------------------------------------

export interface ClosedForm {
  /** Predicted advantage of a reward-1 and a reward-0 member. */
  one: number;
  zero: number;
  formula: string;
}

const fmt = (v: number, digits = 6) => Number(v.toPrecision(digits)).toString();
/** `1e-6` rather than `0.000001` in formulas. */
const epsText = (eps: number) =>
  eps === 0
    ? '0'
    : eps
        .toExponential()
        .replace(/\.?0+e/, 'e')
        .replace('e+', 'e');

/** verl's GRPO (unbiased std) or the teaching convention (population std), closed form. */
export function closedFormAdvantage(
  k: number,
  n: number,
  convention: 'verl' | 'teaching',
  eps: number,
): ClosedForm {
  if (!Number.isInteger(k) || !Number.isInteger(n) || n < 1 || k < 0 || k > n) {
    throw new LabError('BAD_ARGUMENT', `closed form: need integers 0 <= k <= n, n >= 1; got k=${k}, n=${n}`);
  }
  const e = epsText(eps);
  if (n === 1) {
    if (convention === 'teaching') {
      return { one: 0, zero: 0, formula: 'n = 1: r − mean = 0 and population std 0, so A = 0/(0 + eps) = 0' };
    }
    const denom = Math.fround(1 + eps); // verl's std + eps is a float32 tensor sum
    return {
      one: 1 / denom,
      zero: 0,
      formula: `n = 1: verl sets mean 0, std 1: A = (${k} − 0)/(1 + ${e}) = ${fmt(k / denom, 8)}`,
    };
  }
  if (k === 0 || k === n) {
    const r = k === n ? 1 : 0;
    return { one: 0, zero: 0, formula: `all ${n} rewards = ${r}: A = (${r} − ${r})/(0 + ${e}) = 0` };
  }
  const p = k / n;
  const std = convention === 'verl' ? Math.sqrt((k * (n - k)) / (n * (n - 1))) : Math.sqrt(k * (n - k)) / n;
  const stdText =
    convention === 'verl'
      ? `sqrt(${k}·${n - k}/(${n}·${n - 1})) = ${fmt(std)}`
      : `sqrt(${k}·${n - k})/${n} = ${fmt(std)}`;
  const one = (1 - p) / (std + eps);
  const zero = (0 - p) / (std + eps);
  return {
    one,
    zero,
    formula: `mean = ${k}/${n} = ${fmt(p)}, std = ${stdText}; A(1) = (1 − ${fmt(p)})/(${fmt(std)} + ${e}) = ${fmt(one)}, A(0) = (0 − ${fmt(p)})/(${fmt(std)} + ${e}) = ${fmt(zero)}`,
  };
}

/** One line per convention that differs from verl on this group kind (why it differs). */
function explainDifference(preset: ConventionPreset, kind: GroupKind, n: number): string {
  if (kind === 'singleton') {
    switch (preset) {
      case 'teaching':
        return 'teaching: 0 — population std of one value is 0 and r − mean is 0; verl instead fixes mean 0, std 1 and gives r/(1+eps)';
      case 'trl':
        return 'trl: refuses a group of one (num_generations must be >= 2)';
      case 'openrlhf':
        return 'openrlhf: refuses a group of one (n_samples_per_prompt must be > 1 for group_norm)';
      case 'nemo-rl':
        return 'nemo-rl: 0 — the leave-one-out baseline of a group of one is its own reward';
      default:
        return `${preset}: differs on a group of one`;
    }
  }
  switch (preset) {
    case 'teaching':
      return `teaching: larger by sqrt(n/(n−1)) = ${fmt(Math.sqrt(n / (n - 1)), 4)} — the population std divides by n, torch.std by n−1`;
    case 'trl':
    case 'openrlhf':
      return `${preset}: eps ${epsText(CONVENTION_PRESETS[preset].epsilon)} instead of verl's 1e-6 added to the std (a difference of relative size ~|Δeps|/std)`;
    case 'nemo-rl':
      return n === 2
        ? 'nemo-rl: leave-one-out baseline, and a group of 2 is never std-scaled (the std of one other member is 0)'
        : "nemo-rl: leave-one-out baseline (mean of the other members), divided by the others' unbiased std only where it is > 0 (a member whose others all agree gets r − baseline)";
    default:
      return `${preset}: differs`;
  }
}

const OTHER_PRESETS: ConventionPreset[] = ['teaching', 'trl', 'openrlhf', 'nemo-rl'];

/** Preset advantages of one group's rewards; null where the preset refuses the group (TRL, OpenRLHF singletons). */
function presetOnGroup(preset: ConventionPreset, rewards: number[]): number[] | null {
  try {
    return [
      ...presetAdvantages(
        preset,
        rewards,
        rewards.map(() => 'g'),
      ),
    ];
  } catch (e) {
    if (e instanceof LabError && e.code === 'SINGLETON_GROUP') return null;
    throw e;
  }
}

interface GroupRow {
  batch: string;
  group: string;
  tasks: string[];
  kind: GroupKind;
  rows: number[];
  rewards: number[];
  predicted: number[];
  verl: number[];
  teaching_predicted: number[];
  presets: Record<string, number[] | null>;
  formula: string;
  teaching_formula: string;
  differences: string[];
}

/** Per group: closed form, verl's kernel on [B,T], the presets, and the explained differences. */
function compareGroups(
  batchName: string,
  batch: readonly Trajectory[],
  labels: readonly string[],
  layout: BatchLayout,
  eps: number,
): { groups: GroupRow[]; verlPerRow: Float64Array } {
  const shape = { rows: layout.rows, cols: layout.cols };
  const kernel = grpoAdvantage(
    { tokenLevelRewards: layout.tokenRewards, responseMask: layout.actionMask, index: labels },
    shape,
    { epsilon: eps },
  );
  // the row's scalar advantage, read at its first model token (advantages = a_b · mask)
  const verlPerRow = new Float64Array(layout.rows);
  for (let b = 0; b < layout.rows; b++) {
    const t = layout.actionMask.subarray(b * layout.cols, (b + 1) * layout.cols).indexOf(1);
    verlPerRow[b] = kernel.advantages[b * layout.cols + t] as number;
  }
  const rewards = batch.map((t) => t.reward);
  const kinds = classifyGroups(rewards, labels);
  const groups = kinds.map((g) => {
    const rs = g.rows.map((i) => rewards[i] as number);
    const n = rs.length;
    const k = rs.filter((r) => r === 1).length;
    const verlCf = closedFormAdvantage(k, n, 'verl', eps);
    const teachCf = closedFormAdvantage(k, n, 'teaching', eps);
    const verl = g.rows.map((i) => verlPerRow[i] as number);
    const presets: Record<string, number[] | null> = {};
    const differences: string[] = [];
    for (const p of OTHER_PRESETS) {
      const values = presetOnGroup(p, rs);
      presets[p] = values;
      const differs = values === null || values.some((v, j) => Math.abs(v - (verl[j] as number)) > 1e-7);
      if (differs) differences.push(explainDifference(p, g.kind, n));
    }
    if (differences.length === 0) differences.push('all conventions agree: r − mean(r) = 0 for every member');
    return {
      batch: batchName,
      group: String(g.label),
      tasks: [...new Set(g.rows.map((i) => (batch[i] as Trajectory).task))],
      kind: g.kind,
      rows: g.rows,
      rewards: rs,
      predicted: rs.map((r) => (r === 1 ? verlCf.one : verlCf.zero)),
      verl,
      teaching_predicted: rs.map((r) => (r === 1 ? teachCf.one : teachCf.zero)),
      presets,
      formula: verlCf.formula,
      teaching_formula: teachCf.formula,
      differences,
    };
  });
  return { groups, verlPerRow };
}

/** What the flip did, in measured numbers, and why it is wrong. */
function maskFlipNote(maskFlip: Record<string, JsonValue>[], envTokens: number, newTokens: number): string {
  const by = new Map(maskFlip.map((r) => [r.mode as string, r]));
  const tm = by.get('token-mean');
  const sts = by.get('seq-mean-token-sum');
  const norm = by.get('seq-mean-token-sum-norm');
  return (
    `mask flip: the ${envTokens} tool-output tokens were written by the environment; their log-probs measure how well the policy predicts that text, not which action it chose, yet with mask 1 ${newTokens} of them receive gradient (pushed up in positive-advantage rows, down in negative ones). ` +
    `token-mean's denominator grows ${tm?.denominator_correct_mask} -> ${tm?.denominator_flipped_mask}, diluting every real action token; ` +
    `seq-mean-token-sum (${sts?.denominator_correct_mask}) and seq-mean-token-sum-norm (${norm?.denominator_correct_mask}) keep their denominators but add the tool tokens' loss to the numerator; ` +
    "seq-mean-token-mean averages each row over its tool tokens too, so it moves only as far as their ratios differ from the row's model tokens."
  );
}

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
  const shape = { rows: B, cols: T };
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
  const flippedMask = new Float32Array(B * T);
  for (let i = 0; i < B * T; i++)
    flippedMask[i] = (layout.actionMask[i] as number) || (layout.envMask[i] as number);
  const rng = new Rng(ctx.seed).fork('log-probs');
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
  ctx.onProgress?.(3, 4);

  // 4. Accounting: per task and per batch.
  const perTask = (name: string, groups: GroupRow[]) => {
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
  const groupsTable = [...main.groups, ...mis.groups.filter((g) => g.group === MISINDEXED_GROUP.to)].map(
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
      groups: groupsTable,
      misindexed: misRows,
      mask_flip: maskFlip,
      gradient_tokens: gradientRows,
      per_task: [...perTask('exercise', main.groups), ...perTask('mis_indexed', mis.groups)],
      trajectories,
    },
    notes: [
      `presets: ${Object.values(CONVENTION_PRESETS)
        .map((p) => `${p.name} (std ${p.std}, eps ${p.epsilon}, singleton ${p.singleton})`)
        .join('; ')}`,
      maskFlipNote(maskFlip, envTokens, newlyGradientTokens),
      'mis-indexed: one uid shared by an easy and a hard task makes a mixed group out of two zero-variance groups; the easy task is pushed up and the hard one down for being easy or hard, not for anything the samples did.',
    ],
    plots: {
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
    },
  });
}

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
