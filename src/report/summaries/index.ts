/**
 * Terminal summaries of records. An experiment's own summary is part of the experiment
 * (`Experiment.format`, in its folder beside its record shape: one registry,
 * src/experiments/registry.ts); this file holds the generic one and the multi-seed summary.
 */
import { experimentNames, loadExperiment } from '../../experiments/registry.js';
import { formatNumber, table } from '../../experiments/text.js';
import type { MultiSeedRecord, RunRecord } from '../../experiments/types.js';
import { seedsDirLabel } from '../records.js';
import { formatComparisons } from './comparisons.js';

export type Formatter = (record: RunRecord) => string;

/** The summary of an experiment without its own formatter: title line, a metric/value table of scalar metrics, the notes. */
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

/**
 * The terminal summary of a run: its experiment's `format` (the experiment loaded from the registry
 * on first use), else {@link formatGeneric} (a record of an experiment without one, or of a name the
 * registry does not know, e.g. from another version).
 */
export async function formatRecord(record: RunRecord): Promise<string> {
  if (!experimentNames().includes(record.experiment)) return formatGeneric(record);
  const format = (await loadExperiment(record.experiment)).format;
  return format ? format(record) : formatGeneric(record);
}

/** `1..5` for consecutive ascending seeds, else the list (`1,5,9`): `first..last` would claim seeds never run. */
export const seedsLabel = seedsDirLabel;

/**
 * `--seeds` summary: every numeric metric with mean, std, min, max and the 95% CI of the mean (n/a
 * for a single seed, where the t interval is undefined), then the numeric metrics left out because
 * some seed's value is not finite (e.g. a mean length over zero successes), with those seeds.
 */
export function formatMultiSeed(rec: MultiSeedRecord): string {
  const rows = Object.entries(rec.summary).map(([k, s]) => [
    k,
    s.mean,
    s.std,
    s.min,
    s.max,
    s.n < 2 ? 'n/a (1 seed)' : `[${formatNumber(s.ci95[0])}, ${formatNumber(s.ci95[1])}]`,
    s.n < 2 ? '' : s.interval === 'bootstrap-percentile' ? 'boot' : 't',
  ]);
  const n = rec.seeds.length;
  const lines = [
    `${rec.experiment}  seeds ${seedsLabel(rec.seeds)} (${n} ${n === 1 ? 'run' : 'runs'}, ${formatNumber(rec.timing.wall_ms / 1000, 3)} s${(rec.timing.threads ?? 1) > 1 ? ` on ${rec.timing.threads} threads` : ''})`,
    '',
    table(['metric', 'mean', 'std', 'min', 'max', '95% CI of mean', 'interval'], rows),
    "interval: 't' = mean ± t_{0.975,n-1}·std/√n; 'boot' = percentile bootstrap over seeds (10,000 resamples), used for every metric whose values all lie in [0, 1] (rates), so its interval stays in [0, 1].",
  ];
  // A metric some seeds report as a number but others as NaN or not at all (e.g. steps to 0.9 when
  // never reached) is left out of the table; say so, with those seeds.
  const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  const numericOrNonFinite = (v: unknown) =>
    typeof v === 'number' || (typeof v === 'string' && /^(NaN|-?Infinity)$/.test(v));
  const skipped: string[] = [];
  for (const key of new Set(rec.runs.flatMap((r) => Object.keys(r.metrics)))) {
    if (key in rec.summary) continue;
    if (!rec.runs.some((r) => numericOrNonFinite(r.metrics[key]))) continue; // text or object metrics
    const bad = rec.runs.filter((r) => !finite(r.metrics[key])).map((r) => r.seed);
    if (bad.length) skipped.push(`${key} (seed${bad.length > 1 ? 's' : ''} ${bad.join(',')})`);
  }
  if (skipped.length) {
    lines.push('', `not summarised, not a finite number in every seed: ${skipped.join('; ')}`);
  }
  const comparisons = formatComparisons(rec.comparisons ?? [], 'paired comparisons (arm vs baseline):');
  if (comparisons) lines.push('', comparisons);
  return lines.join('\n');
}
