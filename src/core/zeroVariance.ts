/**
 * Which groups (or rows) carry no learning signal: the zero-variance classification that dynamic
 * sampling (verl `algorithm.filter_groups`, DAPO), `dapo_zv`-style denominators and KL masking act on.
 *
 * verl's filter keeps a prompt when `np.std(metric_vals) > 0` or the group has one member, i.e. it
 * tests exact equality of the rewards. With continuous rewards (a partial-credit score computed in
 * float32, a reward model's float output) a group whose rewards differ only by float noise passes
 * that test, and GRPO's standardisation then turns the noise into advantages of order 1. The rules
 * here make the test explicit:
 *
 * | rule | spread of a set of rewards v | zero-variance when |
 * |---|---|---|
 * | `exact` | max(v) − min(v) | spread = 0 (`tol` is not used) |
 * | `std` | population std sqrt(mean((v − mean v)²)) (numpy's default, as verl's filter) | spread <= tol |
 * | `range` | max(v) − min(v) | spread <= tol |
 *
 * and on what set:
 * - `group`: the whole group; every row of a zero-variance group is flagged (verl, DAPO).
 * - `leave_one_out`: row i is flagged when its peers (the group without i) are zero-variance, as a
 *   per-row std computed from leave-one-out peers (RLOO-style baselines) does. A group of
 *   [1, 0, 0, 0] flags its one informative row: its peers [0, 0, 0] are constant.
 * Singletons (groups of one) are never flagged (verl keeps them); a row with one peer has a spread
 * of 0 under `leave_one_out` (a single value is constant).
 */

import type { GroupLabels } from './batch.js';
import { LabError } from './errors.js';
import { factorizeLabels, groupMembers } from './groupwise.js';
import { checkFiniteScores } from './grpo.js';

export type ZeroVarianceRule = 'exact' | 'std' | 'range';
export const ZERO_VARIANCE_RULES: readonly ZeroVarianceRule[] = ['exact', 'std', 'range'];
export type ZeroVarianceScope = 'group' | 'leave_one_out';
export const ZERO_VARIANCE_SCOPES: readonly ZeroVarianceScope[] = ['group', 'leave_one_out'];

export interface ZeroVarianceOptions {
  /** Which spread is compared (table in the file header). Default `exact` (verl). */
  rule?: ZeroVarianceRule;
  /** Tolerance of `std` and `range`, in reward units, >= 0. Default 0. Ignored by `exact`. */
  tol?: number;
  /** Whole group or leave-one-out peers. Default `group`. */
  scope?: ZeroVarianceScope;
}

/** Throws BAD_ARGUMENT for an unknown rule/scope or a tolerance that is negative or not finite. */
export function checkZeroVarianceOptions(o: ZeroVarianceOptions): Required<ZeroVarianceOptions> {
  const rule = o.rule ?? 'exact';
  const scope = o.scope ?? 'group';
  const tol = o.tol ?? 0;
  if (!ZERO_VARIANCE_RULES.includes(rule)) {
    throw new LabError('UNKNOWN_MODE', `rule: '${rule}' is not one of ${ZERO_VARIANCE_RULES.join(', ')}`, {
      details: { field: 'rule', value: rule },
    });
  }
  if (!ZERO_VARIANCE_SCOPES.includes(scope)) {
    throw new LabError('UNKNOWN_MODE', `scope: '${scope}' is not one of ${ZERO_VARIANCE_SCOPES.join(', ')}`, {
      details: { field: 'scope', value: scope },
    });
  }
  if (!Number.isFinite(tol) || tol < 0) {
    throw new LabError('BAD_ARGUMENT', `tol: expected a finite tolerance >= 0, got ${tol}`, {
      details: { field: 'tol', value: tol },
    });
  }
  return { rule, scope, tol };
}

/**
 * The spread of `values[rows[k]]` (k != skip) under `rule`: max − min for `exact` and `range`, the
 * population std for `std` (two-pass, float64). 0 for fewer than two values.
 */
export function spreadOf(
  values: ArrayLike<number>,
  rows: readonly number[],
  rule: ZeroVarianceRule,
  skip = -1,
): number {
  let n = 0;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  let sum = 0;
  for (const r of rows) {
    if (r === skip) continue;
    const v = values[r] as number;
    n++;
    sum += v;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (n < 2) return 0;
  if (rule !== 'std') return hi - lo;
  const mean = sum / n;
  let sq = 0;
  for (const r of rows) {
    if (r === skip) continue;
    const d = (values[r] as number) - mean;
    sq += d * d;
  }
  return Math.sqrt(sq / n);
}

/** Whether a spread counts as zero under `rule` and `tol` (`exact`: spread === 0). */
export function isZeroSpread(spread: number, rule: ZeroVarianceRule, tol: number): boolean {
  return rule === 'exact' ? spread === 0 : spread <= tol;
}

/** Per-row and per-group result of {@link zeroVarianceRows}. */
export interface ZeroVarianceFlags {
  /** 1 where the row's advantage is treated as zero-signal, length B. */
  rows: Uint8Array;
  /** Per group (order of first appearance): 1 when every row of the group is flagged. */
  groups: Uint8Array;
  /** Group id of each row (0..groups-1, order of first appearance). */
  groupOf: Int32Array;
  /** Number of flagged groups. */
  flaggedGroups: number;
  /** Number of flagged rows. */
  flaggedRows: number;
}

/**
 * Flags the rows (and groups) that carry no signal by `rule`, `tol` and `scope` (file header).
 * Shapes: `rewards` [B] finite, `index` [B] group labels. Defaults: exact, tol 0, group scope.
 * Errors: NON_FINITE reward, SHAPE_MISMATCH / BAD_VALUE labels, BAD_ARGUMENT tolerance (negative or
 * not finite), UNKNOWN_MODE rule or scope.
 */
export function zeroVarianceRows(
  rewards: ArrayLike<number>,
  index: GroupLabels,
  options: ZeroVarianceOptions = {},
): ZeroVarianceFlags {
  const { rule, tol, scope } = checkZeroVarianceOptions(options);
  checkFiniteScores(rewards, 'rewards');
  const groups = factorizeLabels(index, rewards.length);
  const members = groupMembers(groups);
  const rows = new Uint8Array(rewards.length);
  const groupFlags = new Uint8Array(members.length);
  let flaggedGroups = 0;
  let flaggedRows = 0;
  members.forEach((m, g) => {
    if (m.length < 2) return; // singletons are kept (verl: len(metric_vals) == 1)
    let all = true;
    if (scope === 'group') {
      const flat = isZeroSpread(spreadOf(rewards, m, rule), rule, tol);
      for (const r of m) rows[r] = flat ? 1 : 0;
      all = flat;
    } else {
      for (const r of m) {
        const flat = isZeroSpread(spreadOf(rewards, m, rule, r), rule, tol);
        rows[r] = flat ? 1 : 0;
        if (!flat) all = false;
      }
    }
    for (const r of m) flaggedRows += rows[r] as number;
    if (all) {
      groupFlags[g] = 1;
      flaggedGroups++;
    }
  });
  return { rows, groups: groupFlags, groupOf: groups.ids, flaggedGroups, flaggedRows };
}
