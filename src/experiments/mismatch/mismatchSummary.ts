/**
 * Terminal summary of a `mismatch` run: the arms table, the dose table (one source at a time), then
 * the record's notes — the one-line conclusion per source first (each states only measured numbers).
 */
import { formatNumber, table } from '../text.js';
import type { JsonValue, RunRecord } from '../types.js';

const ARM_COLUMNS = [
  'arm',
  'final_eval_success',
  'best_eval_success',
  'collapsed',
  'collapse_update',
  'k3_end',
  'max_ratio',
  'ess_mean',
  'masked_fraction_mean',
] as const;

const DOSE_COLUMNS = [
  'source',
  'dose',
  'arm',
  'k3_mean',
  'max_ratio',
  'abs_delta_lowest_bin',
  'abs_delta_highest_bin',
  'ess_mean',
  'masked_fraction_mean',
  'final_eval_success',
] as const;

const rowsOf = (rows: Record<string, JsonValue>[] | undefined, columns: readonly string[]) =>
  (rows ?? []).map((r) => columns.map((c) => (r[c] ?? null) as string | number | null));

export function formatMismatch(record: RunRecord): string {
  const c = record.config;
  const lines = [
    `mismatch  seed ${record.seed}  (${formatNumber(record.timing.wall_ms / 1000, 3)} s)`,
    `engine: precision ${c.engine_precision}, top_p ${c.top_p}, top_k ${c.top_k}, engine_lag ${c.engine_lag}; trainer: float64, full softmax; ${c.updates} updates`,
    '',
    table([...ARM_COLUMNS], rowsOf(record.tables.arms, ARM_COLUMNS)),
    '',
    `dose: one source at a time from the exact engine; none vs the best correction (${record.metrics.best_correction ?? 'none run'})`,
    table([...DOSE_COLUMNS], rowsOf(record.tables.dose, DOSE_COLUMNS)),
    '',
    ...(record.notes ?? []),
  ];
  return lines.join('\n');
}
