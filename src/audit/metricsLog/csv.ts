/**
 * W&B CSV exports → scalar rows. Two shapes:
 *  - a run's history as a table (`run.history()` → `DataFrame.to_csv`, or "Export → CSV" of the
 *    runs table): a `_step` column and one column per metric, empty where not logged at that step;
 *  - a panel's "Export panel data → CSV": a `Step` column and columns `<run name> - <metric>`,
 *    with `<run name> - <metric>__MIN` / `__MAX` companions (the smoothing band), skipped here.
 * The step column is the first of `_step`, `Step`, `step`, `global_step`, `trainer/global_step`.
 * Read through DuckDB (`read_csv`, all columns as text, so no value is coerced), as the audit reads
 * dumps. Cells that are empty or not numbers are not scalars and are skipped (counted in a note).
 */
import { LabError } from '../../core/errors.js';
import type { DuckSession } from '../duckdb.js';
import { duckError, sqlString } from '../duckdb.js';
import type { ScalarRow } from './types.js';

const STEP_COLUMNS = ['_step', 'Step', 'step', 'global_step', 'trainer/global_step'];
const WANDB_INTERNAL = new Set(['_runtime', '_timestamp', '_wandb']);

/** The metric a column holds: `run - metric` → `metric` (W&B panel exports); null for a band column. */
export function csvMetricName(column: string): string | null {
  if (/__(MIN|MAX)$/.test(column)) return null;
  const at = column.indexOf(' - ');
  return at >= 0 ? column.slice(at + 3) : column;
}

export async function readWandbCsv(
  db: DuckSession,
  file: string,
): Promise<{ rows: ScalarRow[]; notes: string[] }> {
  let table: Record<string, unknown>[];
  let columns: string[];
  try {
    const desc = await db.all(
      `DESCRIBE SELECT * FROM read_csv(${sqlString(file)}, header=true, all_varchar=true)`,
    );
    columns = desc.map((r) => String(r.column_name));
    table = await db.all(`SELECT * FROM read_csv(${sqlString(file)}, header=true, all_varchar=true)`);
  } catch (e) {
    throw duckError(e, `reading ${file}`, 'PARSE_ERROR');
  }
  const stepColumn = STEP_COLUMNS.find((c) => columns.includes(c));
  if (stepColumn === undefined) {
    throw new LabError(
      'MISSING_COLUMN',
      `${file}: no step column (expected one of ${STEP_COLUMNS.join(', ')})`,
      {
        details: { file },
      },
    );
  }
  const rows: ScalarRow[] = [];
  let skipped = 0;
  for (const [i, r] of table.entries()) {
    const stepText = r[stepColumn];
    const step = stepText === null || stepText === undefined ? Number.NaN : Number(stepText);
    if (!Number.isInteger(step)) {
      throw new LabError(
        'PARSE_ERROR',
        `${file}: row ${i + 1}: ${stepColumn} is not an integer: '${String(stepText)}'`,
        {
          details: { file, row: i + 1, field: stepColumn },
        },
      );
    }
    const ts = r._timestamp === null || r._timestamp === undefined ? Number.NaN : Number(r._timestamp);
    for (const column of columns) {
      if (column === stepColumn || WANDB_INTERNAL.has(column)) continue;
      const metric = csvMetricName(column);
      if (metric === null) continue;
      const cell = r[column];
      if (cell === null || cell === undefined || String(cell).trim() === '') continue;
      const value = Number(cell);
      if (!Number.isFinite(value)) {
        skipped++;
        continue;
      }
      rows.push({ step, metric, value, ...(Number.isFinite(ts) ? { wallTime: ts } : {}) });
    }
  }
  return {
    rows,
    notes: skipped > 0 ? [`${file}: ${skipped} cell(s) that are not finite numbers skipped`] : [],
  };
}
