/**
 * Terminal summary of a sweep: per headline metric, a dose-response table (one row per value, one
 * column per arm: mean and 95% interval over seeds), then the paired differences from the baseline
 * at each value (diff, BCa CI, Holm p within that value).
 */
import type { DoseRow, SweepRecord } from '../../experiments/sweep.js';
import { type Cell, formatNumber, table } from '../../experiments/text.js';
import type { JsonValue } from '../../experiments/types.js';
import { seedsDirLabel } from '../records.js';
import { intervalText } from './comparisons.js';

const valueText = (v: JsonValue): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** Metrics in first-appearance order, with the arms of each. */
function metricsOf(rows: readonly DoseRow[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const arms = out.get(r.metric) ?? [];
    if (!arms.includes(r.arm)) arms.push(r.arm);
    out.set(r.metric, arms);
  }
  return out;
}

/** The whole sweep summary (see the file comment). */
export function formatSweep(rec: SweepRecord): string {
  const n = rec.seeds.length;
  const lines = [
    `${rec.experiment}  sweep ${rec.sweep.key} = ${rec.sweep.values.map(valueText).join(', ')}  seeds ${seedsDirLabel(rec.seeds)} (${n} ${n === 1 ? 'run' : 'runs'} per value, ${formatNumber(rec.timing.wall_ms / 1000, 3)} s)`,
    `common random numbers: the same ${n === 1 ? 'seed' : 'seeds'} at every value (every stream of a run derives from its seed).`,
  ];
  const values = rec.sweep.values;
  for (const [metric, arms] of metricsOf(rec.dose_response)) {
    const at = (arm: string, value: JsonValue) =>
      rec.dose_response.find(
        (r) => r.metric === metric && r.arm === arm && JSON.stringify(r.value) === JSON.stringify(value),
      );
    const intervals = new Set(rec.dose_response.filter((r) => r.metric === metric).map((r) => r.interval));
    const how = [...intervals]
      .map((i) => (i === 't' ? 't interval' : 'percentile bootstrap over seeds (a rate: stays in [0, 1])'))
      .join(' / ');
    const rows: Cell[][] = values.map((v) => [
      valueText(v),
      ...arms.map((arm) => {
        const r = at(arm, v);
        if (!r) return '-';
        return n < 2 ? formatNumber(r.mean) : `${formatNumber(r.mean)} ${intervalText(r.ci95)}`;
      }),
    ]);
    lines.push(
      '',
      `${metric}: mean over seeds${n < 2 ? '' : ` [95% CI: ${how}]`}`,
      table([rec.sweep.key, ...arms.map((a) => a || metric)], rows),
    );
    const compared = arms.filter((a) => values.some((v) => at(a, v)?.diff !== undefined));
    if (compared.length && rec.baseline) {
      const diffRows: Cell[][] = values.map((v) => [
        valueText(v),
        ...compared.map((arm) => {
          const r = at(arm, v);
          if (!r || r.diff === undefined || !r.diff_ci95) return '-';
          return `${formatNumber(r.diff)} ${intervalText(r.diff_ci95)} p_holm ${formatNumber(r.p_holm ?? Number.NaN, 3)}`;
        }),
      ]);
      lines.push(
        `${metric}: paired difference from ${rec.baseline} [95% paired BCa CI], Holm p within each value`,
        table([rec.sweep.key, ...compared.map((a) => `${a} − ${rec.baseline}`)], diffRows),
      );
    }
  }
  return lines.join('\n');
}
