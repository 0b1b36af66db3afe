/**
 * The `filter` experiment's side-by-side of zero-variance rules on noisy partial credit: every rule
 * counts, on the same generated batches, the groups it would drop, and `ruleRows` turns the counts
 * into the `zero_variance_rules` table.
 */
import { grpoScalarAdvantages, type StdKind } from '../../core/grpo.js';
import { type ZeroVarianceRule, type ZeroVarianceScope, zeroVarianceRows } from '../../core/zeroVariance.js';
import { round6 } from '../armReport.js';
import type { JsonValue } from '../types.js';

/** Row r's group in a batch of consecutive groups of `groupSize` rows. */
export function groupIndex(rows: number, groupSize: number): Int32Array {
  return Int32Array.from({ length: rows }, (_, i) => Math.floor(i / groupSize));
}

export interface RuleAccumulator {
  rule: ZeroVarianceRule;
  scope: ZeroVarianceScope;
  groups: number;
  flaggedGroups: number;
  flaggedRows: number;
  signalRowsZeroed: number;
  noiseGroups: number;
  noiseGroupsKept: number;
  maxAbsNoiseAdv: number;
  sumAbsNoiseAdv: number;
  noiseRows: number;
}

export function ruleAccumulators(): RuleAccumulator[] {
  const out: RuleAccumulator[] = [];
  for (const rule of ['exact', 'std', 'range'] as const) {
    for (const scope of ['group', 'leave_one_out'] as const) {
      out.push({
        rule,
        scope,
        groups: 0,
        flaggedGroups: 0,
        flaggedRows: 0,
        signalRowsZeroed: 0,
        noiseGroups: 0,
        noiseGroupsKept: 0,
        maxAbsNoiseAdv: 0,
        sumAbsNoiseAdv: 0,
        noiseRows: 0,
      });
    }
  }
  return out;
}

/** The columns of a `ruleRows` row that the filter record also reports per seed as metrics. */
export const ZERO_VARIANCE_RULE_METRICS = [
  'zero_variance_groups',
  'zeroed_rows',
  'signal_rows_zeroed',
  'noise_only_groups',
  'noise_only_groups_with_advantage',
  'noise_only_max_abs_advantage',
] as const;

/** Adds one generated batch (clean partial credit and its noisy version) to every rule's counts. */
export function accumulateRules(
  acc: RuleAccumulator[],
  clean: Float64Array,
  noisy: Float64Array,
  G: number,
  cfg: { std: StdKind; zero_variance_tol: number },
): void {
  const index = groupIndex(clean.length, G);
  const groups = clean.length / G;
  const cleanFlat = zeroVarianceRows(clean, index, { rule: 'exact' }).groups;
  const adv = grpoScalarAdvantages(noisy, index, { std: cfg.std, epsilon: 1e-6 });
  for (const a of acc) {
    const f = zeroVarianceRows(noisy, index, { rule: a.rule, tol: cfg.zero_variance_tol, scope: a.scope });
    a.groups += groups;
    a.flaggedGroups += f.flaggedGroups;
    a.flaggedRows += f.flaggedRows;
    for (let k = 0; k < groups; k++) {
      const noiseOnly = cleanFlat[k] === 1; // the clean scores are equal: any spread is noise
      let kept = false;
      for (let i = k * G; i < (k + 1) * G; i++) {
        const zeroed = f.rows[i] === 1;
        if (zeroed && !noiseOnly) a.signalRowsZeroed++;
        if (!noiseOnly) continue;
        const value = zeroed ? 0 : Math.abs(adv[i] as number);
        if (!zeroed && value > 0) kept = true;
        a.maxAbsNoiseAdv = Math.max(a.maxAbsNoiseAdv, value);
        a.sumAbsNoiseAdv += value;
        a.noiseRows++;
      }
      if (noiseOnly) {
        a.noiseGroups++;
        if (kept) a.noiseGroupsKept++;
      }
    }
  }
}

export function ruleRows(acc: RuleAccumulator[], tol: number): Record<string, JsonValue>[] {
  return acc.map((a) => ({
    rule: a.rule,
    scope: a.scope,
    tol: a.rule === 'exact' ? 0 : tol,
    groups: a.groups,
    zero_variance_groups: a.flaggedGroups,
    zero_variance_group_fraction: round6(a.flaggedGroups / a.groups),
    zeroed_rows: a.flaggedRows,
    signal_rows_zeroed: a.signalRowsZeroed,
    noise_only_groups: a.noiseGroups,
    noise_only_groups_with_advantage: a.noiseGroupsKept,
    noise_only_max_abs_advantage: round6(a.maxAbsNoiseAdv),
    noise_only_mean_abs_advantage: round6(a.noiseRows ? a.sumAbsNoiseAdv / a.noiseRows : 0),
  }));
}
