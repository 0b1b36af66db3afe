/**
 * Scalar metrics logged as JSON lines, one object per logged step. Three writers, told apart by the
 * keys of the first complete line:
 *  - verl's file logger (`trainer.logger=['file']`; verl/utils/tracking.py `FileLogger.log` writes
 *    `orjson.dumps({"step": step, "data": data})` per line to `$VERL_FILE_LOGGER_PATH` or
 *    `$VERL_FILE_LOGGER_ROOT/<project>/<experiment>.jsonl`): `{"step": N, "data": {name: value}}`;
 *  - W&B run history (`wandb-history.jsonl` of a run directory, or `run.scan_history()` written as
 *    JSON lines): `{"_step": N, "_runtime": s, "_timestamp": t, name: value, ...}`;
 *  - prime-rl's `FileMonitor` (src/prime_rl/monitors/file.py `log_metrics`: `{"step": step,
 *    "time": time.time(), **metrics}` per line to `<output_dir>/metrics.jsonl`).
 * Values that are not finite numbers (W&B tables, histograms, strings) are not scalars and are skipped.
 * A last line without its newline that does not parse is a line still being written: a note. Any
 * other line that does not parse is a PARSE_ERROR naming file and line.
 */
import { LabError } from '../../core/errors.js';
import type { MetricsLogFormat, ScalarRow } from './types.js';

export interface JsonlLogResult {
  format: MetricsLogFormat;
  rows: ScalarRow[];
  notes: string[];
}

const WANDB_INTERNAL = new Set(['_step', '_runtime', '_timestamp', '_wandb']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function detect(row: Record<string, unknown>): MetricsLogFormat | null {
  if ('_step' in row) return 'wandb-history-jsonl';
  if ('step' in row && isObject(row.data) && Object.keys(row).length === 2) return 'verl-file-jsonl';
  if ('step' in row) return 'prime-rl-jsonl';
  return null;
}

/** Reads one JSONL metrics file's text; `file` names it in notes and errors. */
export function readJsonlLog(text: string, file: string): JsonlLogResult {
  const lines = text.split('\n');
  const notes: string[] = [];
  const rows: ScalarRow[] = [];
  let format: MetricsLogFormat | null = null;
  let skippedValues = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '') continue;
    const last = i === lines.length - 1; // no newline after it
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch (e) {
      if (last) {
        notes.push(
          `${file}:${i + 1}: incomplete last line (no newline; the writer may still be writing): not read`,
        );
        break;
      }
      throw new LabError('PARSE_ERROR', `${file}:${i + 1}: not a JSON object (${(e as Error).message})`, {
        cause: e,
        details: { file, line: i + 1 },
      });
    }
    if (!isObject(row)) {
      throw new LabError('PARSE_ERROR', `${file}:${i + 1}: expected a JSON object per line`, {
        details: { file, line: i + 1 },
      });
    }
    format ??= detect(row);
    if (format === null) {
      throw new LabError(
        'PARSE_ERROR',
        `${file}:${i + 1}: not a metrics log: no 'step' (verl file logger, prime-rl) or '_step' (W&B history) key`,
        { details: { file, line: i + 1 } },
      );
    }
    const stepKey = format === 'wandb-history-jsonl' ? '_step' : 'step';
    const step = row[stepKey];
    if (typeof step !== 'number' || !Number.isInteger(step)) {
      if (format === 'wandb-history-jsonl' && step === undefined) continue; // a summary-only row
      throw new LabError(
        'PARSE_ERROR',
        `${file}:${i + 1}: '${stepKey}' is not an integer: ${JSON.stringify(step)}`,
        {
          details: { file, line: i + 1, field: stepKey },
        },
      );
    }
    const values = format === 'verl-file-jsonl' ? (row.data as Record<string, unknown>) : row;
    const wall =
      format === 'prime-rl-jsonl' ? row.time : format === 'wandb-history-jsonl' ? row._timestamp : undefined;
    for (const [metric, value] of Object.entries(values)) {
      if (format === 'prime-rl-jsonl' && (metric === 'step' || metric === 'time')) continue;
      if (format === 'wandb-history-jsonl' && WANDB_INTERNAL.has(metric)) continue;
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        skippedValues++;
        continue;
      }
      rows.push({ step, metric, value, ...(typeof wall === 'number' ? { wallTime: wall } : {}) });
    }
  }
  if (skippedValues > 0)
    notes.push(`${file}: ${skippedValues} non-scalar value(s) (not finite numbers) skipped`);
  return { format: format ?? 'prime-rl-jsonl', rows, notes };
}
