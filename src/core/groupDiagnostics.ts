/**
 * Group diagnostics for outcome rewards: which groups carry a learning signal at all.
 * Under group-centred advantages a group whose (≥ 2) members all got the same reward has advantage 0
 * for every member, so it contributes no policy gradient (the course's "zero-variance groups").
 */

import type { GroupLabel, GroupLabels } from './batch.js';
import { LabError } from './errors.js';
import { factorizeLabels, groupMembers } from './groupwise.js';
import { checkFiniteScores } from './grpo.js';

export type GroupKind = 'all_wrong' | 'all_right' | 'mixed' | 'all_equal_other' | 'singleton';

export interface GroupSummary {
  label: GroupLabel;
  /** Row indices of the members, ascending. */
  rows: number[];
  size: number;
  kind: GroupKind;
  /** Mean reward of the group (float64). */
  mean: number;
}

export interface ClassifyOptions {
  /** An all-equal group at or below this value is `all_wrong` (default 0). */
  failValue?: number;
  /** An all-equal group at or above this value is `all_right` (default 1). */
  passValue?: number;
}

const CLASSIFY_DEFAULTS: Required<ClassifyOptions> = Object.freeze({ failValue: 0, passValue: 1 });

/**
 * Classifies groups of scalar rewards (grouped by exact label equality, in order of first appearance):
 * size 1 → `singleton`; all equal and ≤ failValue → `all_wrong`; all equal and ≥ passValue →
 * `all_right`; other all-equal → `all_equal_other`; else `mixed`.
 * A group is zero-variance when it has ≥ 2 members that are all equal.
 * Errors: NON_FINITE reward, SHAPE_MISMATCH labels length, BAD_VALUE label, BAD_ARGUMENT when
 * failValue ≥ passValue (the two kinds would overlap) or the batch is empty.
 */
export function classifyGroups(
  rewards: ArrayLike<number>,
  index: GroupLabels,
  options?: ClassifyOptions,
): GroupSummary[] {
  const { failValue, passValue } = { ...CLASSIFY_DEFAULTS, ...options };
  if (!Number.isFinite(failValue) || !Number.isFinite(passValue) || !(failValue < passValue)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `failValue/passValue: expected finite failValue < passValue, got ${failValue} and ${passValue}`,
      { details: { field: 'failValue', failValue, passValue } },
    );
  }
  if (rewards.length === 0) {
    throw new LabError('BAD_ARGUMENT', 'rewards: empty batch, there are no groups to classify', {
      details: { field: 'rewards' },
    });
  }
  checkFiniteScores(rewards, 'rewards');
  const groups = factorizeLabels(index, rewards.length);
  return groupMembers(groups).map((rows, g) => {
    const first = rewards[rows[0] as number] as number;
    let sum = 0;
    let allEqual = true;
    for (const r of rows) {
      const v = rewards[r] as number;
      sum += v;
      if (v !== first) allEqual = false;
    }
    const size = rows.length;
    let kind: GroupKind;
    if (size === 1) kind = 'singleton';
    else if (!allEqual) kind = 'mixed';
    else if (first <= failValue) kind = 'all_wrong';
    else if (first >= passValue) kind = 'all_right';
    else kind = 'all_equal_other';
    return { label: groups.labels[g] as GroupLabel, rows, size, kind, mean: allEqual ? first : sum / size };
  });
}

export interface GroupKindCounts {
  groups: number;
  all_wrong: number;
  all_right: number;
  mixed: number;
  all_equal_other: number;
  singleton: number;
  /** Groups with ≥ 2 members all equal (all_wrong + all_right + all_equal_other). */
  zero_variance: number;
  /** zero_variance / groups; 0 for an empty list. */
  zero_variance_group_fraction: number;
}

/** Counts groups per kind and the zero-variance fraction (over all groups, singletons included). */
export function countGroupKinds(groups: GroupSummary[]): GroupKindCounts {
  const c: GroupKindCounts = {
    groups: groups.length,
    all_wrong: 0,
    all_right: 0,
    mixed: 0,
    all_equal_other: 0,
    singleton: 0,
    zero_variance: 0,
    zero_variance_group_fraction: 0,
  };
  for (const g of groups) c[g.kind] += 1;
  c.zero_variance = c.all_wrong + c.all_right + c.all_equal_other;
  c.zero_variance_group_fraction = c.groups === 0 ? 0 : c.zero_variance / c.groups;
  return c;
}
