/**
 * The `advantage` exercise's per-group comparison: the advantage predicted by hand (closed form for
 * 0/1 rewards) vs verl's GRPO kernel vs the other convention presets, each difference explained,
 * and the note on the mask flip drawn from its measured numbers.
 */
import { LabError } from '../../core/errors.js';
import { classifyGroups, type GroupKind } from '../../core/groupDiagnostics.js';
import { grpoAdvantage } from '../../core/grpo.js';
import { CONVENTION_PRESETS, type ConventionPreset, presetAdvantages } from '../../core/presets.js';
import type { JsonValue } from '../types.js';
import type { BatchLayout, Trajectory } from './exerciseBatch.js';

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

export interface GroupRow {
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
/** The groups of one labelling of a batch, and verl's advantage per row. */
export interface GroupComparison {
  groups: GroupRow[];
  verlPerRow: Float64Array;
}

export function compareGroups(
  batchName: string,
  batch: readonly Trajectory[],
  labels: readonly string[],
  layout: BatchLayout,
  eps: number,
): GroupComparison {
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
export function maskFlipNote(
  maskFlip: Record<string, JsonValue>[],
  envTokens: number,
  newTokens: number,
): string {
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
