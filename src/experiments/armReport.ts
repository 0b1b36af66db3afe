/**
 * Turning the arms' results into a record: per-update curves (`curves['<measure>.<arm>']`), the
 * `arms` table and its flat metrics (`metrics['<column>.<arm>']`), paired differences against a
 * baseline arm (`metrics['<measure>.<arm>_minus_<baseline>']`), the trajectory accounting table,
 * and the number formats of the conclusions.
 */
import type { ArmResult, UpdateRecord } from '../train/tokenMeasures.js';
import type { JsonValue } from './types.js';
import { warmStartRow } from './warmStart.js';

/** Per-update series of one measure for every arm, as `curves['<family>.<arm>']`. */
export function armCurves(
  results: readonly ArmResult[],
  families: Record<string, (u: UpdateRecord) => number>,
): Record<string, number[]> {
  const curves: Record<string, number[]> = {};
  const first = results[0];
  if (first) curves.update = first.updates.map((_, i) => i + 1);
  for (const [family, pick] of Object.entries(families)) {
    for (const r of results) curves[`${family}.${r.spec.arm}`] = r.updates.map(pick);
  }
  return curves;
}

/**
 * The `arms` table (one row per arm, from `rowOf`) and its flat metrics: every numeric cell also
 * becomes `metrics['<column>.<arm>']` (the `<metric>.<arm>` order of every experiment's metrics and
 * curves), which is what `--seeds` summarises.
 */
export function armTable(
  results: readonly ArmResult[],
  rowOf: (r: ArmResult) => Record<string, JsonValue>,
): { arms: Record<string, JsonValue>[]; metrics: Record<string, JsonValue> } {
  const metrics: Record<string, JsonValue> = {};
  const arms = results.map((r) => {
    const row = rowOf(r);
    for (const [k, v] of Object.entries(row)) if (typeof v === 'number') metrics[`${k}.${r.spec.arm}`] = v;
    return row;
  });
  return { arms, metrics };
}

/**
 * The `trajectory_accounting` table: every arm's {@link ArmResult.lastGroup} rows in arm order, each
 * with an `arm` column first (a row's own columns follow and win on a clash, as before).
 */
export function trajectoryAccounting(results: readonly ArmResult[]): Record<string, JsonValue>[] {
  return results.flatMap((r) => r.lastGroup.map((row) => ({ arm: r.spec.arm, ...row })));
}

/**
 * Paired differences against a baseline arm, `<measure>.<arm>_minus_<baseline>`, for every
 * other arm. Arms of a seed share tasks and random streams, so across seeds these differences have
 * much narrower confidence intervals than the arms' own means. Non-finite differences are left out.
 */
export function pairedDifferences(
  rows: readonly Record<string, unknown>[],
  baseline: string,
  measures: readonly string[],
): Record<string, number> {
  const base = rows.find((r) => r.arm === baseline);
  const out: Record<string, number> = {};
  if (!base) return out;
  for (const row of rows) {
    if (row.arm === baseline) continue;
    for (const m of measures) {
      const d = (row[m] as number) - (base[m] as number);
      if (Number.isFinite(d)) out[`${m}.${String(row.arm)}_minus_${baseline}`] = round6(d);
    }
  }
  return out;
}

/** `x` with `digits` decimals for the conclusions' prose; 'n/a' where nothing was measured (NaN). */
export function fixed(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

/** A fraction as a percentage with one decimal (`0.1234` → `12.3%`); 'n/a' for NaN. */
export function percent(x: number): string {
  return Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : 'n/a';
}

/** Rounds for records: 6 significant digits, NaN kept. */
export function round6(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}

/** Nested objects as flat `a.b` keys (a table cell holds a scalar). */
/** What {@link levelReport} adds to a token-lab record: metrics, the `levels` table, the warm-start table and note. */
export interface LevelReport {
  metrics: Record<string, JsonValue>;
  tables: Record<string, Record<string, JsonValue>[]>;
  notes: string[];
}

/**
 * Held-out success per task level (neural policy), and the warm start when there was one:
 * - `metrics['eval_success_level_<k>.<arm>']`: each arm's held-out success on level-k tasks after RL;
 * - `metrics['eval_success_level_<k>']`: the same for the reference arm (the first: the one the other
 *   arms are compared against, e.g. mask's `correct`), the run's headline per-level result;
 * - `metrics['pretrain_pass_rate.level_<k>']` (init=sft): the pretrained policy's held-out pass rate
 *   on the same tasks before RL (one pretraining shared by every arm, so one value per level);
 * - `tables.levels`: one row per level (tasks, `pretrained`, one column per arm);
 * - `tables.warm_start` and a note: the checkpoint the arms started from and what produced it.
 * Empty for the tabular policy (its env has no levels), so its records are unchanged.
 */
export function levelReport(results: readonly ArmResult[]): LevelReport {
  const out: LevelReport = { metrics: {}, tables: {}, notes: [] };
  const first = results[0];
  if (!first?.evaluationByLevel) return out;
  const warm = first.warmStart;
  if (warm) {
    for (const l of warm.before) out.metrics[`pretrain_pass_rate.level_${l.level}`] = round6(l.success);
  }
  for (const l of first.evaluationByLevel) out.metrics[`eval_success_level_${l.level}`] = round6(l.success);
  for (const r of results) {
    for (const l of r.evaluationByLevel ?? []) {
      out.metrics[`eval_success_level_${l.level}.${r.spec.arm}`] = round6(l.success);
    }
  }
  out.tables.levels = first.evaluationByLevel.map((l, i) => {
    const row: Record<string, JsonValue> = { level: l.level, tasks: l.tasks };
    if (warm) row.pretrained = round6(warm.before[i]?.success ?? Number.NaN);
    for (const r of results) row[r.spec.arm] = round6(r.evaluationByLevel?.[i]?.success ?? Number.NaN);
    return row;
  });
  if (warm) {
    out.tables.warm_start = [warmStartRow(warm)];
    const rates = (pick: (i: number) => number | undefined) =>
      first.evaluationByLevel
        ?.map((l, i) => `level ${l.level} ${fixed(pick(i) ?? Number.NaN, 3)}`)
        .join(', ');
    const after = results
      .map((r) => `${r.spec.arm}: ${rates((i) => r.evaluationByLevel?.[i]?.success)}`)
      .join('; ');
    const halfWidths = first.evaluationByLevel
      .map((l, i) => {
        const p = warm.before[i]?.success ?? Number.NaN;
        return l.tasks > 0 && Number.isFinite(p)
          ? fixed(1.96 * Math.sqrt((p * (1 - p)) / l.tasks), 3)
          : 'n/a';
      })
      .join(' / ');
    out.notes.push(
      `Warm start (init=sft): every arm started from the pretrained checkpoint ${warm.checkpoint === '' ? '(not cached)' : warm.checkpoint}. Held-out pass rate per level before RL: ${rates((i) => warm.before[i]?.success)}; after RL: ${after} (${first.evaluationByLevel.map((l) => l.tasks).join(' / ')} held-out tasks per level, one sample each; before RL each rate ± ${halfWidths}, the 95% normal half-width 1.96·√(p(1−p)/n)).`,
    );
  }
  return out;
}
