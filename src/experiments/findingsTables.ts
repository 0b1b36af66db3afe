/**
 * The descriptive tables of a findings manifest (`tables`, format 2): the mean over seeds of one
 * metric per cell, on the discovery and on the confirmation seeds, with no test (the claims are
 * where a difference is tested). A cell's key is the column's `key` with `{row}` replaced by the
 * row's value (`eval_success.{row}` over the arms), read from the column's `run` if it names one, else
 * the table's; `{row}` in a column's run makes the rows runs (one row per run: a knobs table).
 * Seeds whose value is not finite are left out.
 */
import { LabError } from '../core/errors.js';
import { cellRun, type FindingsManifestV2 } from './findings.js';
import type { Phase, PhaseRuns } from './findingsClaims.js';
import type { RunRecord } from './types.js';

export interface DescriptiveCell {
  /** Mean over the seeds of the set (null: the set has not run, or no seed has a finite value). */
  discovery: number | null;
  confirmation: number | null;
}

export interface DescriptiveTableResult {
  id: string;
  run: string;
  row_label: string;
  columns: string[];
  rows: { row: string; cells: DescriptiveCell[] }[];
}

/** The finite values of metric `key` over `records` (seeds without one left out). */
export function finiteValues(records: readonly RunRecord[], key: string): number[] {
  return records.flatMap((r) => {
    const v = r.metrics[key];
    return typeof v === 'number' && Number.isFinite(v) ? [v] : [];
  });
}

function meanOf(records: readonly RunRecord[], key: string): number | null {
  const xs = finiteValues(records, key);
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
}

/**
 * Every table's cells on both seed sets. Error: BAD_CLI when a cell's key is in no record of a set
 * that ran (a typo in the manifest would otherwise print an empty cell).
 */
export function evaluateTables(
  tables: FindingsManifestV2['tables'],
  runs: PhaseRuns,
): DescriptiveTableResult[] {
  return tables.map((t) => ({
    id: t.id,
    run: t.run,
    row_label: t.row_label,
    columns: t.columns.map((c) => c.label),
    rows: t.rows.map((row) => ({
      row,
      cells: t.columns.map((c) => {
        const key = c.key.replaceAll('{row}', row);
        const run = cellRun(t, c, row);
        const cell = (phase: Phase): number | null => {
          const records = runs[phase]?.get(run);
          if (!records) return null;
          if (!records.some((r) => key in r.metrics)) {
            throw new LabError('BAD_CLI', `table ${t.id}: ${key} is not a metric of run ${run}`, {
              details: { field: `tables.${t.id}`, key },
            });
          }
          return meanOf(records, key);
        };
        return { discovery: cell('discovery'), confirmation: cell('confirmation') };
      }),
    })),
  }));
}
