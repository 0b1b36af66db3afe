/**
 * What each zero-variance policy would have done on the audited dump (issue: what to do with
 * groups that carry no signal), computed in SQL over the groups (`audit_groups`, groupStats.ts; with
 * `--zero-std-tol` the reader keeps the rewards as lists, so that `sd` is each group's population std):
 *
 *  - dynamic sampling (DAPO; verl `algorithm.filter_groups`, which keeps a group when the std of its
 *    metric is > 0 or it has one member): the groups it would drop are the zero-variance groups
 *    (>= 2 members, all rewards equal), with their samples; it would then generate more to refill
 *    the batch.
 *  - leaving zero-variance groups out of the token-mean denominator ("dapo_zv"): the token-mean
 *    denominator (Σ action tokens) with them and without them.
 *  - a tolerance X (`--zero-std-tol`): the groups that count as zero-variance when "equal" means
 *    population std <= X (verl's filter_groups uses np.std) or max − min <= X, side by side with
 *    exact equality; the difference is the groups that are zero-variance only up to X.
 *
 * A dump where no group has reward variance gets a statement, never a division by zero: the
 * fractions are null when their denominator is 0.
 */
import { LabError } from '../core/errors.js';
import type { JsonValue } from '../experiments/types.js';
import type { DuckSession } from './duckdb.js';

export interface ZeroVarianceRule {
  rule: string;
  /** Multi-member groups this rule calls zero-variance. */
  groups: number;
  samples: number;
  /** Action tokens of those groups (null without token counts). */
  action_tokens: number | null;
  /** Σ action tokens of the other groups: the token-mean denominator without them. */
  token_mean_denominator_without: number | null;
}

export interface ZeroVariancePolicies {
  groups: number;
  multi_member_groups: number;
  /** Dynamic sampling: zero-variance groups dropped, and their samples. */
  dynamic_sampling_dropped_groups: number;
  dynamic_sampling_dropped_samples: number;
  dynamic_sampling_kept_groups: number;
  /** Kept / all groups; null for an empty dump. */
  dynamic_sampling_kept_fraction: number | null;
  token_mean_denominator_with_zero_variance: number | null;
  token_mean_denominator_without_zero_variance: number | null;
  zero_std_tol: number | null;
  /** Groups zero-variance under std <= X (resp. max − min <= X) but not exactly. */
  zero_variance_only_up_to_tol_std: number | null;
  zero_variance_only_up_to_tol_range: number | null;
  rules: ZeroVarianceRule[];
  /** One sentence when no group has reward variance (or there is no multi-member group). */
  statement: string | null;
}

/** `--zero-std-tol`: a finite number >= 0, else BAD_ARGUMENT naming the option. */
export function checkZeroStdTol(tol: number | null): void {
  if (tol !== null && !(Number.isFinite(tol) && tol >= 0)) {
    throw new LabError('BAD_ARGUMENT', `--zero-std-tol: expected a finite number >= 0, got ${tol}`, {
      details: { field: '--zero-std-tol', value: tol },
    });
  }
}

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export async function zeroVariancePolicies(
  db: DuckSession,
  tol: number | null,
  tokensKnown: boolean,
): Promise<ZeroVariancePolicies> {
  checkZeroStdTol(tol);
  const multi = 'n >= 2';
  const exact = `${multi} AND lo = hi`;
  const byStd = tol === null ? 'false' : `${multi} AND sd <= ${tol}`;
  const byRange = tol === null ? 'false' : `${multi} AND hi - lo <= ${tol}`;
  const counts = (name: string, cond: string) =>
    `count(*) FILTER (WHERE ${cond}) AS ${name}_groups, coalesce(sum(n) FILTER (WHERE ${cond}), 0) AS ${name}_samples,
     coalesce(sum(action) FILTER (WHERE ${cond}), 0) AS ${name}_action`;
  const r =
    (
      await db.all(`
    WITH g AS (SELECT n, lo, hi, action, sd FROM audit_groups)
    SELECT count(*) AS groups, count(*) FILTER (WHERE ${multi}) AS multi, coalesce(sum(action), 0) AS action,
      ${counts('exact', exact)}, ${counts('std', byStd)}, ${counts('range', byRange)},
      count(*) FILTER (WHERE (${byStd}) AND NOT (${exact})) AS std_only,
      count(*) FILTER (WHERE (${byRange}) AND NOT (${exact})) AS range_only
    FROM g`)
    )[0] ?? {};
  const groups = num(r.groups);
  const multiGroups = num(r.multi);
  const action = num(r.action);
  const rule = (label: string, name: string): ZeroVarianceRule => ({
    rule: label,
    groups: num(r[`${name}_groups`]),
    samples: num(r[`${name}_samples`]),
    action_tokens: tokensKnown ? num(r[`${name}_action`]) : null,
    token_mean_denominator_without: tokensKnown ? action - num(r[`${name}_action`]) : null,
  });
  const rules = [rule('exact: all rewards equal (max = min)', 'exact')];
  if (tol !== null) {
    rules.push(rule(`population std <= ${tol}`, 'std'), rule(`max - min <= ${tol}`, 'range'));
  }
  const dropped = num(r.exact_groups);
  let statement: string | null = null;
  if (multiGroups === 0) {
    statement = 'no group has two or more members: there is no group variance to measure';
  } else if (dropped === multiGroups) {
    statement = `no group has reward variance: all ${multiGroups} multi-member groups are zero-variance, so every advantage is 0; dynamic sampling would drop them all and keep generating, and the token-mean denominator without them is ${tokensKnown ? '0' : 'empty'}`;
  }
  return {
    groups,
    multi_member_groups: multiGroups,
    dynamic_sampling_dropped_groups: dropped,
    dynamic_sampling_dropped_samples: num(r.exact_samples),
    dynamic_sampling_kept_groups: groups - dropped,
    dynamic_sampling_kept_fraction: groups === 0 ? null : (groups - dropped) / groups,
    token_mean_denominator_with_zero_variance: tokensKnown ? action : null,
    token_mean_denominator_without_zero_variance: tokensKnown ? action - num(r.exact_action) : null,
    zero_std_tol: tol,
    zero_variance_only_up_to_tol_std: tol === null ? null : num(r.std_only),
    zero_variance_only_up_to_tol_range: tol === null ? null : num(r.range_only),
    rules,
    statement,
  };
}

/** One line for the text summary: what each policy would have done. */
export function policiesLine(p: ZeroVariancePolicies): string {
  const parts = [
    `zero-variance policies: dynamic sampling would drop ${p.dynamic_sampling_dropped_groups} of ${p.groups} groups (${p.dynamic_sampling_dropped_samples} samples)`,
  ];
  if (p.token_mean_denominator_with_zero_variance !== null) {
    parts.push(
      `token-mean denominator ${p.token_mean_denominator_with_zero_variance} with zero-variance groups, ${p.token_mean_denominator_without_zero_variance} without`,
    );
  }
  if (p.zero_std_tol !== null) {
    parts.push(
      `zero-variance only up to ${p.zero_std_tol}: ${p.zero_variance_only_up_to_tol_std} more group(s) by std, ${p.zero_variance_only_up_to_tol_range} by max - min`,
    );
  }
  return parts.join('; ');
}

/** The policies as record metrics (flat) and a table (`zero_variance_rules`). */
export function policiesRecord(p: ZeroVariancePolicies): {
  metrics: Record<string, JsonValue>;
  table: Record<string, JsonValue>[];
} {
  const { rules, statement: _statement, groups: _g, multi_member_groups: _m, ...flat } = p;
  return {
    metrics: flat as Record<string, JsonValue>,
    table: rules as unknown as Record<string, JsonValue>[],
  };
}
