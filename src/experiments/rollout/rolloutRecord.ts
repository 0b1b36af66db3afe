/**
 * The record shape of the rollout experiment that its summary and the docs renderer read
 * (scripts/docsTables.ts): declared once here, so a renamed column fails the type check instead of
 * printing an empty cell.
 */
import type { JsonValue } from '../types.js';

/** Columns of `tables.ratio_by_lag` after `run`, in the order the summary and the docs show them. */
export const RATIO_BY_LAG_COLUMNS = [
  'lag_bucket',
  'actions',
  'ratio_mean',
  'ratio_p50',
  'ratio_p90',
  'ratio_p99',
  'ratio_max',
  'mean_abs_log_ratio',
] as const;

/** One row of `tables.ratio_by_lag`: the ratio statistics of one run's consumed actions at one version lag. */
export type RatioByLagRow = { run: string } & Record<(typeof RATIO_BY_LAG_COLUMNS)[number], JsonValue>;
