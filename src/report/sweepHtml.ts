/** `labs run --sweep ... --html`: the dose-response plots and tables of a sweep as one HTML page. */
import type { SweepRecord } from '../experiments/sweep.js';
import { formatNumber } from '../experiments/text.js';
import { VERSION } from '../experiments/version.js';
import { htmlTable, type PagePlot } from './page.js';
import { experimentDefaults, sweepRerunCommand } from './rerun.js';
import { writeSimplePage } from './simplePage.js';
import { sweepConstants, sweepPlotSpecs } from './sweepPlots.js';

const ci = (c: readonly [number, number] | undefined) =>
  c ? `[${formatNumber(c[0])}, ${formatNumber(c[1])}]` : undefined;

/**
 * Writes the sweep page to `path`: the command that reruns it (for a registered experiment), the
 * plots of {@link sweepPlotSpecs}, the metrics constant across the sweep as text, then every
 * dose-response row. Returns the drawn plots (for PNGs).
 */
export async function writeSweepHtml(rec: SweepRecord, path: string, source: string): Promise<PagePlot[]> {
  const defaults = await experimentDefaults(rec.experiment);
  const rerun = defaults ? sweepRerunCommand(rec, defaults) : undefined;
  const rows = rec.dose_response.map((r) => [
    r.metric,
    r.arm || '-',
    typeof r.value === 'string' ? r.value : JSON.stringify(r.value),
    r.mean,
    ci(r.ci95),
    r.interval === 't' ? 't' : 'bootstrap',
    r.n,
    r.diff,
    ci(r.diff_ci95),
    r.p_holm === undefined ? undefined : Number(formatNumber(r.p_holm, 3)),
  ]);
  const constants = sweepConstants(rec);
  return writeSimplePage(path, sweepPlotSpecs(rec), {
    title: `${rec.experiment} — sweep of ${rec.sweep.key}`,
    meta: [
      `record: ${source}`,
      ...(rerun ? [`rerun: ${rerun}`] : []),
      `${rec.sweep.key} = ${rec.sweep.values.map((v) => JSON.stringify(v)).join(', ')}; ${rec.seeds.length} seeds per value, the same seeds at every value (common random numbers)`,
      `v${rec.version} · ${formatNumber(rec.timing.wall_ms / 1000, 3)} s`,
      ...(constants.length
        ? [
            `the same at every ${rec.sweep.key} and seed (not plotted): ${constants.map((c) => `${c.metric} = ${formatNumber(c.value)}`).join(', ')}`,
          ]
        : []),
    ],
    sections: [
      {
        heading: 'Dose-response',
        html: `${htmlTable(
          [
            'metric',
            'arm',
            rec.sweep.key,
            'mean',
            '95% CI',
            'interval',
            'n',
            `diff from ${rec.baseline ?? 'baseline'}`,
            '95% CI (paired BCa)',
            'p_holm (within value)',
          ],
          rows,
        )}\n<p class="note">interval: 't' = mean ± t_{0.975,n-1}·std/√n; 'bootstrap' = percentile bootstrap over seeds, used for metrics whose values all lie in [0, 1] (rates).</p>`,
      },
    ],
    version: VERSION,
  });
}
