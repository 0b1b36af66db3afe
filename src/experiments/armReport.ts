/**
 * Turning the arms' results into a record: per-update curves (`curves['<measure>.<arm>']`), the
 * `arms` table and its flat metrics (`metrics['<column>.<arm>']`), paired differences against a
 * baseline arm (`metrics['<measure>.<arm>_minus_<baseline>']`), the trajectory accounting table,
 * and the number formats of the conclusions.
 */
import type { ArmResult, UpdateRecord } from './tokenMeasures.js';
import type { JsonValue } from './types.js';

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
