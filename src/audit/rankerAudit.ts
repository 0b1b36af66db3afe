/**
 * The ranker audit (`--quality COL --independent COL`): within the all-right groups of a dump
 * (>= 2 members, every reward >= passValue: a binary reward gives them advantage 0), how a quality
 * score that a groupwise advantage redistribution would use correlates with an independent measure
 * of quality. A redistribution gives `lambda · (q_i − mean q) / (std q + eps)` inside such a group:
 * it turns the group into gradient unless every q ties (then it gives 0).
 *
 * Correlations (src/audit/rankCorrelation.ts) are stratified by group: only pairs of samples of the
 * same group are compared, as the redistribution only compares those. They are computed over the
 * all-right groups in which both q and the independent measure vary (a group where either ties
 * everywhere carries no ranking to compare), overall, per step and per task; the tied groups are
 * counted. A negative coefficient is flagged: such a ranker would push the policy against the
 * independent measure.
 */

import { type Paired, stratifiedKendallTauB, stratifiedSpearman } from '../core/rankCorrelation.js';
import type { JsonValue } from '../experiments/types.js';
import type { DuckSession } from './duckdb.js';

interface Group extends Paired {
  x: readonly number[];
  y: readonly number[];
  step: number;
  task: string;
}

export interface RankerAudit {
  metrics: Record<string, JsonValue>;
  perStep: Record<string, JsonValue>[];
  perTask: Record<string, JsonValue>[];
  notes: string[];
}

const fmt = (v: JsonValue | undefined) => (typeof v === 'number' ? v.toFixed(3) : 'undefined');

const allTied = (v: readonly number[]) => v.every((e) => e === v[0]);

function summary(groups: readonly Group[]): Record<string, JsonValue> {
  const compared = groups.filter((g) => !allTied(g.x) && !allTied(g.y));
  return {
    all_right_groups: groups.length,
    groups_turned_into_gradient: groups.filter((g) => !allTied(g.x)).length,
    groups_quality_tied: groups.filter((g) => allTied(g.x)).length,
    groups_correlated: compared.length,
    spearman: stratifiedSpearman(compared),
    kendall_tau_b: stratifiedKendallTauB(compared),
  };
}

function by<K extends string | number>(groups: readonly Group[], key: (g: Group) => K): Map<K, Group[]> {
  const m = new Map<K, Group[]>();
  for (const g of groups) m.set(key(g), [...(m.get(key(g)) ?? []), g]);
  return m;
}

/** Reads the all-right groups' (quality, independent) pairs from `audit_good` / `audit_groups`. */
export async function rankerAudit(db: DuckSession, columns: { quality: string; independent: string }) {
  const rows = await db.all(`
    SELECT any_value(g.step) AS step, min(p.task) AS task, flatten(list(p.qs)) AS q, flatten(list(p.inds)) AS r
    FROM audit_good p JOIN audit_groups g USING (k0, k1)
    WHERE g.kind = 'all_right' GROUP BY p.k0, p.k1 ORDER BY step, task`);
  const groups: Group[] = rows.map((r) => ({
    step: Number(r.step),
    task: String(r.task),
    x: (r.q as unknown[]).map(Number),
    y: (r.r as unknown[]).map(Number),
  }));
  const overall = summary(groups);
  const negative =
    (typeof overall.spearman === 'number' && overall.spearman < 0) ||
    (typeof overall.kendall_tau_b === 'number' && overall.kendall_tau_b < 0);
  const notes: string[] = [];
  if (negative) {
    notes.push(
      `ranker: within all-right groups, '${columns.quality}' has a negative rank correlation with '${columns.independent}' (Spearman ${fmt(overall.spearman)}, Kendall tau-b ${fmt(overall.kendall_tau_b)}): a redistribution by it would push the policy against the independent measure`,
    );
  }
  if (groups.length === 0) notes.push('ranker: the dump has no all-right group; nothing to redistribute');
  else {
    notes.unshift(
      `ranker: ${groups.length} all-right group(s); a redistribution would turn ${String(overall.groups_turned_into_gradient)} into gradient (${String(overall.groups_quality_tied)} with all quality scores tied stay at 0); within-group Spearman ${fmt(overall.spearman)}, Kendall tau-b ${fmt(overall.kendall_tau_b)} over ${String(overall.groups_correlated)} group(s)`,
    );
  }
  const metrics: Record<string, JsonValue> = {
    ranker_quality_column: columns.quality,
    ranker_independent_column: columns.independent,
    ranker_all_right_groups: overall.all_right_groups as number,
    ranker_groups_turned_into_gradient: overall.groups_turned_into_gradient as number,
    ranker_groups_quality_tied: overall.groups_quality_tied as number,
    ranker_groups_correlated: overall.groups_correlated as number,
    ranker_spearman: overall.spearman as number | null,
    ranker_kendall_tau_b: overall.kendall_tau_b as number | null,
    ranker_negative_correlation: negative,
  };
  const perStep = [...by(groups, (g) => g.step).entries()].map(([step, gs]) => ({ step, ...summary(gs) }));
  const perTask = [...by(groups, (g) => g.task).entries()].map(([task, gs]) => ({ task, ...summary(gs) }));
  return { metrics, perStep, perTask, notes } satisfies RankerAudit;
}
