/**
 * Terminal summaries, one formatter per experiment (a short table, then the headline line).
 * Experiments without their own formatter get the generic one: config, metrics, notes.
 */
import type { MultiSeedRecord, RunRecord } from '../../experiments/types.js';
import { formatNumber, table } from '../text.js';

export type Formatter = (record: RunRecord) => string;

const formatters: Record<string, () => Promise<Formatter>> = {
  // one line per experiment: name -> lazy import of its formatter
  agent: async () => (await import('./agent.js')).formatAgent,
  rollout: async () => (await import('./rollout.js')).formatRollout,
  audit: async () => (await import('./audit.js')).formatAudit,
  advantage: async () => (await import('./advantage.js')).formatAdvantage,
  mask: async () => (await import('./mask.js')).formatMask,
  aggregation: async () => (await import('./aggregation.js')).formatAggregation,
  truncation: async () => (await import('./truncation.js')).formatTruncation,
};

export function formatGeneric(record: RunRecord): string {
  const lines: string[] = [];
  lines.push(`${record.experiment}  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`);
  const metricRows = Object.entries(record.metrics)
    .filter(([, v]) => typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean')
    .map(([k, v]) => [k, v as number | string | boolean]);
  if (metricRows.length) lines.push('', table(['metric', 'value'], metricRows));
  for (const note of record.notes ?? []) lines.push(`note: ${note}`);
  return lines.join('\n');
}

export async function formatRecord(record: RunRecord): Promise<string> {
  const load = formatters[record.experiment];
  return load ? (await load())(record) : formatGeneric(record);
}

/** `--seeds` summary: every numeric metric with mean, std, min, max and the 95% CI of the mean. */
export function formatMultiSeed(rec: MultiSeedRecord): string {
  const first = rec.seeds[0];
  const last = rec.seeds[rec.seeds.length - 1];
  const rows = Object.entries(rec.summary).map(([k, s]) => [
    k,
    s.mean,
    s.std,
    s.min,
    s.max,
    `[${formatNumber(s.ci95[0])}, ${formatNumber(s.ci95[1])}]`,
  ]);
  return [
    `${rec.experiment}  seeds ${first}..${last} (${rec.seeds.length} runs, ${formatNumber(rec.timing.wall_ms / 1000, 3)} s)`,
    '',
    table(['metric', 'mean', 'std', 'min', 'max', '95% CI of mean'], rows),
  ].join('\n');
}
