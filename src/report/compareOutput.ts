/**
 * Output of `labs compare`: the terminal text and the HTML page (a bar per arm of each headline
 * measure at its paired difference B − A, whiskers at the 95% BCa interval, then the table).
 */
import type { CompareResult } from '../experiments/compareRecords.js';
import { formatNumber } from '../experiments/text.js';
import type { Comparison, ComparisonPlan, JsonValue } from '../experiments/types.js';
import { VERSION } from '../experiments/version.js';
import { comparisonPlotSpecs } from './comparisonPlots.js';
import { htmlTable } from './page.js';
import type { PlotSpec } from './plotData.js';
import { seedsDirLabel } from './records.js';
import { writeSimplePage } from './simplePage.js';
import { formatComparisons } from './summaries/comparisons.js';

const valueText = (v: JsonValue | undefined) =>
  v === undefined ? '(unset)' : typeof v === 'string' ? v : JSON.stringify(v);

/** Header lines: what is compared with what, on which seeds, and which options differ. */
function header(r: CompareResult): string[] {
  const diff = Object.entries(r.config_diff).map(([k, [a, b]]) => `${k}: ${valueText(a)} -> ${valueText(b)}`);
  return [
    `compare  B = ${r.b.label} (${r.b.source})  minus  A = ${r.a.label} (${r.a.source})`,
    `experiments ${r.a.experiment === r.b.experiment ? r.a.experiment : `${r.a.experiment} / ${r.b.experiment}`}, paired over the same ${r.seeds.length} seeds ${seedsDirLabel([...r.seeds].sort((x, y) => x - y))}`,
    diff.length
      ? `options that differ: ${diff.join('; ')}`
      : 'options: identical (the records differ only by code or chance)',
  ];
}

/** Lines after the table: what was not compared and why. */
function footer(r: CompareResult): string[] {
  return [
    ...(r.constants.length
      ? [
          `the same in every seed of both records (not compared, not plotted): ${r.constants.map((c) => `${c.metric} = ${formatNumber(c.value)}`).join(', ')}`,
        ]
      : []),
    ...r.notes.map((n) => `note: ${n}`),
  ];
}

/** The terminal text of a comparison. */
export function formatCompare(r: CompareResult): string {
  const table = formatComparisons(r.comparisons, 'paired differences B − A (arm = B, baseline = A):');
  return [...header(r), '', ...(table ? [table] : []), ...footer(r)].join('\n');
}

/**
 * Bar plots of the differences, one per measure: with the experiment's plan the metric keys split
 * into measure and arm (`verify_rate.drop` -> bar 'drop' in the 'verify_rate' plot); otherwise one
 * plot per metric key with a single bar.
 */
export function comparePlotSpecs(r: CompareResult, plan: ComparisonPlan | null): PlotSpec[] {
  const split = (key: string): [arm: string, measure: string] => {
    if (plan) {
      for (const m of plan.metrics) {
        if (key.startsWith(`${m}.`)) return [key.slice(m.length + 1), m];
      }
    }
    return [key, key];
  };
  const regrouped: Comparison[] = r.comparisons.map((c) => {
    const [arm, measure] = split(c.metric);
    return { ...c, arm, metric: measure, baseline: r.a.label };
  });
  return comparisonPlotSpecs(regrouped).map((spec) => {
    const measure = spec.family.slice('comparison.'.length);
    return {
      ...spec,
      title: `${measure}: ${r.b.label} − ${r.a.label}`,
      yLabel: `difference (${r.b.label} − ${r.a.label})`,
    };
  });
}

/** Writes the comparison page to `path`. */
export async function writeCompareHtml(
  r: CompareResult,
  plan: ComparisonPlan | null,
  path: string,
): Promise<void> {
  const rows = r.comparisons.map((c) => [
    c.metric,
    c.n,
    c.diff,
    `[${formatNumber(c.ci95[0])}, ${formatNumber(c.ci95[1])}]`,
    Number(formatNumber(c.p, 3)),
    Number(formatNumber(c.p_holm, 3)),
    c.mde80,
  ]);
  await writeSimplePage(path, comparePlotSpecs(r, plan), {
    title: `compare: ${r.b.label} − ${r.a.label}`,
    meta: [...header(r), ...footer(r)],
    sections: [
      {
        heading: 'Paired differences',
        html: `${htmlTable(['metric', 'n', 'diff (B − A)', '95% CI (paired BCa)', 'p', 'p_holm', 'mde80'], rows)}\n<p class="note">${formatComparisons(r.comparisons, '').split('\n').at(-1) ?? ''}</p>`,
      },
    ],
    version: VERSION,
  });
}
