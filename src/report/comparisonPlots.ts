/**
 * Plots of paired comparisons: one bar chart per metric, a bar per arm at its mean paired difference
 * from the baseline, whiskers at the 95% paired BCa bootstrap interval, 0 drawn as a rule. Pure data
 * (PlotSpecs); plots.ts draws them like any other bar plot.
 */
import { formatNumber } from '../experiments/text.js';
import type { Comparison } from '../experiments/types.js';
import type { PlotPoint, PlotSpec } from './plotData.js';

/**
 * One PlotSpec per (metric, baseline) of `comparisons`, in first-appearance order. Family
 * `<prefix>comparison.<metric>`; x = arm, y = diff, lo/hi = ci95; notes give p_holm and mde80 per arm.
 */
export function comparisonPlotSpecs(comparisons: readonly Comparison[], prefix = ''): PlotSpec[] {
  const groups = new Map<string, Comparison[]>();
  for (const c of comparisons) {
    const k = `${c.metric}\u0000${c.baseline}`;
    groups.set(k, [...(groups.get(k) ?? []), c]);
  }
  return [...groups.values()].map((group) => {
    const { metric, baseline } = group[0] as Comparison;
    const series = `${metric}: arm − ${baseline}`;
    const points: PlotPoint[] = group.map((c) => ({
      x: c.arm,
      y: c.diff,
      series,
      lo: c.ci95[0],
      hi: c.ci95[1],
    }));
    return {
      family: `${prefix}comparison.${metric}${groups.size > new Set(comparisons.map((c) => c.metric)).size ? `.${baseline}` : ''}`,
      title: `Paired difference from ${baseline}: ${metric}`,
      xLabel: 'arm',
      yLabel: `${metric} difference (arm − ${baseline})`,
      kind: 'bar',
      series: [series],
      points,
      band: true,
      notes: [
        `bar: mean over ${group[0]?.n ?? '?'} seeds of the paired difference; whisker: 95% paired BCa bootstrap interval`,
        group
          .map(
            (c) =>
              `${c.arm}: p ${formatNumber(c.p, 3)}, Holm p ${formatNumber(c.p_holm, 3)}, mde80 ${formatNumber(c.mde80)}`,
          )
          .join('; '),
      ],
    };
  });
}
