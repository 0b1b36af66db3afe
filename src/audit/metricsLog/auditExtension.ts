/**
 * What `labs audit` adds to its record from this folder: the length anatomy (always, from the dump)
 * and, with `--metrics PATH`, the logged-vs-recomputed comparison. Runs inside the audit's DuckDB
 * session, after the dump has been loaded and checked.
 */
import type { JsonValue, RunRecord } from '../../experiments/types.js';
import type { DuckSession } from '../duckdb.js';
import type { LoadedDump } from '../reader.js';
import { compareWithLog } from './compare.js';
import type { RunSettings } from './definitions.js';
import { readDumpRows } from './dumpRows.js';
import { lengthAnatomy } from './lengthAnatomy.js';
import { readMetricsLog } from './read.js';

export interface LogAuditOptions {
  /**
   * `--length-anatomy`: add the length anatomy (implied by --metrics). Off by default: it reads every
   * row into JS (streamed, text reduced to features), which the audit's aggregate-only SQL path does
   * not (docs/bench-audit.md).
   */
  lengthAnatomy: boolean;
  /** `--metrics PATH`: the run's scalar log (file or directory); null: no comparison. */
  metricsLog: string | null;
  /** `--max-response-length N` (verl data.max_response_length). */
  maxResponseLength: number | null;
  /** `--max-completion-length N` (TRL max_completion_length). */
  maxCompletionLength: number | null;
  scaleRewards: 'group' | 'batch' | 'none';
  rewardWeights: readonly number[] | null;
  passValue: number;
  failValue: number;
}

export const LOG_AUDIT_DEFAULTS = Object.freeze({
  lengthAnatomy: false,
  metricsLog: null,
  maxResponseLength: null,
  maxCompletionLength: null,
});

/**
 * With `--length-anatomy` or `--metrics`: adds `tables.length_anatomy` (and its plots) and, with a
 * log, `tables.logged_vs_recomputed` to `record`. Without either, does nothing.
 */
export async function addLogAudit(
  record: RunRecord,
  db: DuckSession,
  loaded: LoadedDump,
  o: LogAuditOptions,
): Promise<void> {
  if (!o.lengthAnatomy && o.metricsLog === null) return;
  const dump = await readDumpRows(db, loaded, o.rewardWeights);
  const anatomy = lengthAnatomy(dump.rows, {
    passValue: o.passValue,
    failValue: o.failValue,
    maxLength: o.maxResponseLength ?? o.maxCompletionLength,
  });
  record.tables.length_anatomy = anatomy.table;
  record.metrics.length_anatomy_unit = anatomy.unit;
  record.metrics.token_length_source = dump.tokenSource;
  const steps = anatomy.table.filter((r) => r.task === '(all)');
  const curve = (key: string) =>
    steps.map((r) => (typeof r[key] === 'number' ? (r[key] as number) : Number.NaN));
  // Curve families: `length` (tokens or characters) and `length_shares` (fractions in [0, 1]); the
  // x axis is the audit's `update` curve (the dump's steps, the same rows).
  record.curves['length.correct'] = curve('mean_length_correct');
  record.curves['length.incorrect'] = curve('mean_length_incorrect');
  record.curves['length_shares.repetition rate (rep-4)'] = curve('repetition_rate');
  record.curves['length_shares.slime repetition_frac'] = curve('slime_repetition_frac');
  if (steps.some((r) => r.truncated_zero_reward_share !== null)) {
    record.curves['length_shares.truncated & zero reward'] = curve('truncated_zero_reward_share');
  }
  if (steps.some((r) => r.entropy_correct !== null || r.entropy_incorrect !== null)) {
    record.curves['entropy.correct'] = curve('entropy_correct');
    record.curves['entropy.incorrect'] = curve('entropy_incorrect');
    record.curves['entropy.truncated'] = curve('entropy_truncated');
    record.plots = {
      ...record.plots,
      entropy: { title: 'Mean token entropy per step', y: 'nats', x: 'step' },
    };
  }
  record.plots = {
    ...record.plots,
    length: {
      title: `Length of correct vs incorrect responses per step (${anatomy.unit ?? 'no lengths'})`,
      y: anatomy.unit ?? 'length',
      x: 'step',
    },
    length_shares: {
      title: 'Truncated with zero reward, and repetition, per step',
      y: 'share of samples',
      x: 'step',
    },
  };
  if (o.metricsLog === null) return;
  const log = await readMetricsLog(o.metricsLog);
  const settings: RunSettings = {
    maxResponseLength: o.maxResponseLength,
    maxCompletionLength: o.maxCompletionLength,
    scaleRewards: o.scaleRewards,
  };
  const cmp = compareWithLog(log, dump.rows, settings);
  record.tables.logged_vs_recomputed = cmp.rows.map((r) => ({ ...r }) as Record<string, JsonValue>);
  record.tables.logged_metrics_unmatched = cmp.unmatched.map((u) => ({ ...u }));
  Object.assign(record.metrics, cmp.metrics);
  record.config.metrics_log = o.metricsLog;
  record.config.metrics_log_files = log.files;
  record.config.metrics_log_formats = log.formats;
  record.config.max_response_length = o.maxResponseLength;
  record.config.max_completion_length = o.maxCompletionLength;
  record.notes = [...(record.notes ?? []), ...log.notes.map((n) => `metrics log: ${n}`), ...cmp.notes];
}
