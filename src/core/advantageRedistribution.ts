/**
 * Groupwise advantage redistribution: give the passes of an all-right group advantages from a
 * quality score, so that a group a binary outcome reward leaves at zero advantage still carries a
 * gradient. A teaching construction after the idea the MiMo-V2.6-Flash RL model card calls
 * "Groupwise Advantage Redistribution" (the card publishes no formula; this is not its system).
 *
 * For a group g whose rows all passed (`passed[i] = 1` for every row i of g), with quality q:
 *
 *   a_i = lambda * (q_i − mean_g(q)) / (std_g(q) + eps)
 *
 * `std` unbiased (n−1, as verl's GRPO) or population (n); eps 1e-6 added to the std (verl's
 * `norm_adv_by_std_in_grpo` convention). Every other row gets 0: a mixed group keeps whatever the
 * outcome advantage gives it, and an all-wrong group stays at 0 (there is no pass to rank).
 *
 * Why a pass is never ranked below a fail: only groups without a single fail are redistributed, so
 * no group ever holds both a redistributed pass and a fail. Added to GRPO's outcome advantage
 * (which is exactly 0 on an all-right group), the per-group order "every pass ≥ every fail" of a
 * mixed group is untouched, and the zero mean per group is kept (Σ_g (q_i − mean_g q) = 0).
 * Ties: an all-right group whose quality scores are all equal (or a group of one) gets exactly 0 and
 * is counted in `tiedGroups`; it carries no gradient, as under the binary reward.
 */
import type { GroupLabels } from './batch.js';
import { LabError } from './errors.js';
import { factorizeLabels } from './groupwise.js';

/** Options of {@link redistributeAdvantages}. */
export interface RedistributionOptions {
  /**
   * Scale of the redistributed advantages relative to a unit-variance outcome advantage: 0 turns it
   * off (plain binary GRPO), 1 makes a quality gap as loud as a pass/fail gap. Finite, ≥ 0.
   */
  lambda: number;
  /** Std of q within the group: `unbiased` (n−1, verl's torch.std, default) or `population` (n). */
  std?: 'unbiased' | 'population';
  /** Added to the std (verl's epsilon 1e-6). Finite, ≥ 0. */
  epsilon?: number;
}

/** What {@link redistributeAdvantages} returns. */
export interface RedistributionResult {
  /** Length B: the redistributed advantage of each row, 0 outside all-right groups. */
  advantages: Float64Array;
  /** Groups whose rows all passed. */
  allRightGroups: number;
  /** All-right groups that received a non-zero advantage (their quality scores differ). */
  redistributedGroups: number;
  /** All-right groups whose quality scores all tie (or that have one row): advantage 0. */
  tiedGroups: number;
}

export const REDISTRIBUTION_DEFAULTS = Object.freeze({ std: 'unbiased' as const, epsilon: 1e-6 });

/**
 * Redistributes advantages inside all-right groups from a quality score (formula in the file doc).
 * Shapes: `passed`, `quality`, `index` have length B (rows); `passed` is 0/1 per row, `quality` is
 * read only on rows of all-right groups (so a fail's quality may be anything, NaN included).
 * Errors: SHAPE_MISMATCH for a length that differs from `passed`; BAD_VALUE for a `passed` entry
 * that is not 0 or 1 (naming the row); BAD_ARGUMENT for lambda or epsilon not finite or < 0, or an
 * unknown std kind; NON_FINITE for a non-finite quality in an all-right group (naming the row).
 */
export function redistributeAdvantages(
  passed: ArrayLike<number>,
  quality: ArrayLike<number>,
  index: GroupLabels,
  options: RedistributionOptions,
): RedistributionResult {
  const rows = passed.length;
  const o = { ...REDISTRIBUTION_DEFAULTS, ...options };
  if (typeof o.lambda !== 'number' || !Number.isFinite(o.lambda) || o.lambda < 0) {
    throw new LabError('BAD_ARGUMENT', `lambda: expected a finite number >= 0, got ${o.lambda}`, {
      details: { field: 'lambda', value: o.lambda },
    });
  }
  if (typeof o.epsilon !== 'number' || !Number.isFinite(o.epsilon) || o.epsilon < 0) {
    throw new LabError('BAD_ARGUMENT', `epsilon: expected a finite number >= 0, got ${o.epsilon}`, {
      details: { field: 'epsilon', value: o.epsilon },
    });
  }
  if (o.std !== 'unbiased' && o.std !== 'population') {
    throw new LabError('BAD_ARGUMENT', `std: expected 'unbiased' or 'population', got '${o.std}'`, {
      details: { field: 'std', value: o.std },
    });
  }
  if (quality.length !== rows) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `quality: expected ${rows} values (one per row of passed), got ${quality.length}`,
      { details: { field: 'quality', expected: rows, actual: quality.length } },
    );
  }
  const groups = factorizeLabels(index, rows);
  const G = groups.groups;
  const ids = groups.ids;
  // pass 1: which groups are all right
  const anyFail = new Uint8Array(G);
  for (let i = 0; i < rows; i++) {
    const p = passed[i] as number;
    if (p !== 0 && p !== 1) {
      throw new LabError('BAD_VALUE', `passed: value ${p} at row ${i} is not 0 or 1`, {
        details: { field: 'passed', row: i, value: p },
      });
    }
    if (p === 0) anyFail[ids[i] as number] = 1;
  }
  // pass 2: quality moments of the all-right groups (exact min/max so ties give exactly 0)
  const count = new Int32Array(G);
  const sum = new Float64Array(G);
  const min = new Float64Array(G).fill(Number.POSITIVE_INFINITY);
  const max = new Float64Array(G).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < rows; i++) {
    const g = ids[i] as number;
    if (anyFail[g]) continue;
    const q = quality[i] as number;
    if (typeof q !== 'number' || !Number.isFinite(q)) {
      throw new LabError('NON_FINITE', `quality: value ${q} at row ${i} (an all-right group) is not finite`, {
        details: { field: 'quality', row: i, value: q },
      });
    }
    count[g] = (count[g] as number) + 1;
    sum[g] = (sum[g] as number) + q;
    if (q < (min[g] as number)) min[g] = q;
    if (q > (max[g] as number)) max[g] = q;
  }
  const mean = new Float64Array(G);
  const sumSq = new Float64Array(G);
  for (let g = 0; g < G; g++) mean[g] = (sum[g] as number) / Math.max(1, count[g] as number);
  for (let i = 0; i < rows; i++) {
    const g = ids[i] as number;
    if (anyFail[g] || min[g] === max[g]) continue;
    const d = (quality[i] as number) - (mean[g] as number);
    sumSq[g] = (sumSq[g] as number) + d * d;
  }
  let allRightGroups = 0;
  let redistributedGroups = 0;
  let tiedGroups = 0;
  const scale = new Float64Array(G);
  for (let g = 0; g < G; g++) {
    if (anyFail[g]) continue;
    allRightGroups++;
    const n = count[g] as number;
    if (n < 2 || min[g] === max[g]) {
      tiedGroups++;
      continue;
    }
    const std = Math.sqrt((sumSq[g] as number) / (o.std === 'unbiased' ? n - 1 : n));
    const denominator = std + o.epsilon;
    if (!(denominator > 0) || !Number.isFinite(denominator)) {
      throw new LabError(
        'NON_FINITE',
        `quality: group ${JSON.stringify(groups.labels[g])} has std ${std} and epsilon ${o.epsilon}: the redistributed advantage would not be finite`,
        { details: { field: 'quality', label: groups.labels[g] } },
      );
    }
    scale[g] = o.lambda / denominator;
    if (o.lambda > 0) redistributedGroups++;
  }
  const advantages = new Float64Array(rows);
  for (let i = 0; i < rows; i++) {
    const g = ids[i] as number;
    const s = scale[g] as number;
    if (s === 0) continue;
    advantages[i] = s * ((quality[i] as number) - (mean[g] as number));
  }
  return { advantages, allRightGroups, redistributedGroups, tiedGroups };
}
