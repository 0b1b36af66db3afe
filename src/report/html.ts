/**
 * `labs report` / `labs run --html`: records -> one self-contained HTML page with a plot per curve
 * family (and optionally a PNG per plot). Validates each record first (a malformed one is a
 * BAD_RECORD error naming its file), plans the plots (plotData.ts), draws them (plots.ts) and
 * assembles the page (page.ts). The HTML is written atomically.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LabError } from '../core/errors.js';
import { experimentNames, loadExperiment } from '../experiments/registry.js';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { VERSION } from '../experiments/version.js';
import { comparisonPlotSpecs } from './comparisonPlots.js';
import { renderPage } from './page.js';
import { planPlots, recordLabels } from './plotData.js';
import { renderPlotSvg, svgToPng } from './plots.js';
import { normalizeRecord } from './recordShape.js';
import { writeFileAtomic } from './records.js';
import { rerunCommand } from './rerun.js';

export interface HtmlReportOptions {
  /** Output HTML file. */
  html: string;
  /** Directory for one PNG per plot, or null for none. */
  png: string | null;
  /** Where each record came from (shown in the page and named in errors); same order as records. */
  sources: string[];
  /**
   * The command that reproduces each record, when the caller knows it (`labs audit ... --html`);
   * otherwise it is derived from a registered experiment's defaults (rerun.ts).
   */
  reruns?: (string | undefined)[];
}

export interface HtmlReportResult {
  html: string;
  /** PNG files written, one per plot, in page order. */
  pngs: string[];
  /** Families drawn, in page order. */
  plotted: string[];
  /** Plots omitted and why. */
  omitted: string[];
}

/** The current defaults of a registered experiment's options, or null for an unknown experiment (e.g. `audit`). */
async function defaultsOf(experiment: string): Promise<Record<string, unknown> | null> {
  if (!experimentNames().includes(experiment)) return null;
  const { options } = await loadExperiment(experiment);
  return Object.fromEntries(Object.entries(options).map(([k, o]) => [k, o.default]));
}

/** `group_kind` -> `01-group_kind.png`: ordered, and safe on every file system. */
export function pngFileName(index: number, family: string): string {
  return `${String(index + 1).padStart(2, '0')}-${family.replace(/[^A-Za-z0-9_.-]+/g, '_')}.png`;
}

/** Builds the page for `records` (several are overlaid for comparison) and writes it to `o.html`. */
export async function writeHtmlReport(
  records: (RunRecord | MultiSeedRecord)[],
  o: HtmlReportOptions,
): Promise<HtmlReportResult> {
  if (records.length === 0) throw new LabError('BAD_ARGUMENT', 'report: at least one record is needed');
  const sources = records.map((_, i) => o.sources[i] ?? `record ${i + 1}`);
  const checked = records.map((r, i) => normalizeRecord(r, sources[i] as string));
  const labels = recordLabels(checked);
  const reruns = await Promise.all(
    checked.map(async (record, i) => {
      const given = o.reruns?.[i];
      if (given !== undefined) return given;
      const defaults = await defaultsOf(record.experiment);
      return defaults ? rerunCommand(record, defaults) : undefined;
    }),
  );
  const labeled = checked.map((record, i) => {
    const rerun = reruns[i];
    return { record, label: labels[i] as string, source: sources[i] as string, ...(rerun ? { rerun } : {}) };
  });
  const plan = planPlots(labeled);
  // Paired comparisons (multi-seed records of an experiment with arms) come first: they are the headline.
  const comparisonPlots = labeled.flatMap(({ record, label }) =>
    'runs' in record ? comparisonPlotSpecs(record.comparisons ?? [], label ? `${label}: ` : '') : [],
  );
  plan.plots.unshift(...comparisonPlots);
  const plots = [];
  for (const spec of plan.plots) plots.push({ spec, svg: await renderPlotSvg(spec) });
  const page = renderPage({ records: labeled, plots, omitted: plan.omitted, version: VERSION });
  const pngs: string[] = [];
  try {
    await mkdir(dirname(o.html), { recursive: true });
    await writeFileAtomic(o.html, page);
    if (o.png) {
      await mkdir(o.png, { recursive: true });
      for (const [i, { spec, svg }] of plots.entries()) {
        const path = join(o.png, pngFileName(i, spec.family));
        await writeFileAtomic(path, await svgToPng(svg));
        pngs.push(path);
      }
    }
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write the report: ${(e as Error).message}`, { cause: e });
  }
  return { html: o.html, pngs, plotted: plan.plots.map((p) => p.family), omitted: plan.omitted };
}
