/**
 * Dose-response plots of a sweep: per headline metric, the mean over seeds against the swept value,
 * one line per arm with its 95% band; and, for an experiment with arms, the paired difference from
 * the baseline against the value, one line per arm with its 95% paired BCa band. Pure data (PlotSpecs).
 */
import type { DoseRow, SweepRecord } from '../experiments/sweep.js';
import type { PlotPoint, PlotSpec } from './plotData.js';

/** A swept value as an x: numbers stay numbers (a numeric axis), anything else becomes its text. */
function xOf(v: unknown): number | string {
  return typeof v === 'number' ? v : typeof v === 'string' ? v : JSON.stringify(v);
}

function rowsByMetric(rec: SweepRecord): Map<string, DoseRow[]> {
  const byMetric = new Map<string, DoseRow[]>();
  for (const r of rec.dose_response) byMetric.set(r.metric, [...(byMetric.get(r.metric) ?? []), r]);
  return byMetric;
}

/** The one value of `rows` when every arm at every value had it in every seed (interval [c, c]), else null. */
function constantOf(rows: readonly DoseRow[]): number | null {
  const c = rows[0]?.mean;
  if (c === undefined || !Number.isFinite(c)) return null;
  const same = rows.every((r) => r.mean === c && (r.n < 2 || (r.ci95[0] === c && r.ci95[1] === c)));
  return same ? c : null;
}

/**
 * Metrics of a sweep that are one constant at every value, arm and seed (config-like counts such as
 * `eval_tasks`), in first-appearance order: not plotted (a flat line says nothing a number does not),
 * listed as text instead.
 */
export function sweepConstants(rec: SweepRecord): { metric: string; value: number }[] {
  const out: { metric: string; value: number }[] = [];
  for (const [metric, rows] of rowsByMetric(rec)) {
    const c = constantOf(rows);
    if (c !== null) out.push({ metric, value: c });
  }
  return out;
}

/**
 * The PlotSpecs of a sweep, in first-appearance order of the metrics: level plot, then difference
 * plot. Metrics constant across the whole sweep ({@link sweepConstants}) get no plot.
 */
export function sweepPlotSpecs(rec: SweepRecord): PlotSpec[] {
  const banded = rec.seeds.length > 1;
  const specs: PlotSpec[] = [];
  for (const [metric, rows] of rowsByMetric(rec)) {
    if (constantOf(rows) !== null) continue;
    const series = [...new Set(rows.map((r) => r.arm || metric))];
    const points: PlotPoint[] = rows.map((r) => ({
      x: xOf(r.value),
      y: r.mean,
      series: r.arm || metric,
      ...(banded ? { lo: r.ci95[0], hi: r.ci95[1] } : {}),
    }));
    const intervals = new Set(rows.map((r) => r.interval));
    specs.push({
      family: `sweep.${metric}`,
      title: `${metric} vs ${rec.sweep.key}`,
      xLabel: rec.sweep.key,
      yLabel: metric,
      kind: 'line',
      series,
      points,
      band: banded,
      notes: [
        `mean over ${rec.seeds.length} seeds (the same seeds at every ${rec.sweep.key})${
          banded
            ? `; band: 95% ${[...intervals].map((i) => (i === 't' ? 't interval' : 'percentile bootstrap over seeds')).join(' / ')}`
            : ''
        }`,
      ],
    });
    const diffs = rows.filter((r) => r.diff !== undefined && r.diff_ci95);
    if (diffs.length && rec.baseline) {
      const diffSeries = [...new Set(diffs.map((r) => `${r.arm} − ${rec.baseline}`))];
      specs.push({
        family: `sweep_diff.${metric}`,
        title: `${metric}: paired difference from ${rec.baseline} vs ${rec.sweep.key}`,
        xLabel: rec.sweep.key,
        yLabel: `${metric} difference`,
        kind: 'line',
        series: diffSeries,
        points: diffs.map((r) => ({
          x: xOf(r.value),
          y: r.diff as number,
          series: `${r.arm} − ${rec.baseline}`,
          lo: (r.diff_ci95 as [number, number])[0],
          hi: (r.diff_ci95 as [number, number])[1],
        })),
        band: true,
        notes: ['band: 95% paired BCa bootstrap interval of the mean difference over seeds'],
      });
    }
  }
  return specs;
}
