/**
 * `labs report` / `labs run --html`: records -> one self-contained HTML page with a plot per curve
 * family (and optionally a PNG per plot). Validates each record first (a malformed one is a
 * BAD_RECORD error naming its file), plans the plots (plotData.ts), draws them (plots.ts) and
 * assembles the page (page.ts). The HTML is written atomically.
 */
import { dirname, join } from 'node:path';
import { LabError } from '../core/errors.js';
import type { SweepRecord } from '../experiments/sweep.js';
import { formatNumber } from '../experiments/text.js';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { VERSION } from '../experiments/version.js';
import { comparisonPlotSpecs } from './comparisonPlots.js';
import { type PagePlot, renderPage } from './page.js';
import { planPlots, recordLabels } from './plotData.js';
import { renderPlotSvg, svgToPng } from './plots.js';
import { isSweepData, normalizeRecord, normalizeSweepRecord } from './recordShape.js';
import { makeDirs, writeFileAtomic } from './records.js';
import { auditRerunCommand, experimentDefaults, rerunCommand } from './rerun.js';
import { writeSweepHtml } from './sweepHtml.js';
import { sweepConstants } from './sweepPlots.js';

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
  /** A live page reloaded by the browser every this many seconds (page.ts `refreshSeconds`). */
  refreshSeconds?: number;
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

/** `group_kind` -> `01-group_kind.png`: ordered, and safe on every file system. */
export function pngFileName(index: number, family: string): string {
  return `${String(index + 1).padStart(2, '0')}-${family.replace(/[^A-Za-z0-9_.-]+/g, '_')}.png`;
}

/** Writes one PNG per plot into `dir`, in page order; returns the files. */
async function writePngs(plots: readonly PagePlot[], dir: string): Promise<string[]> {
  const pngs: string[] = [];
  makeDirs(dir);
  for (const [i, { spec, svg }] of plots.entries()) {
    const path = join(dir, pngFileName(i, spec.family));
    await writeFileAtomic(path, await svgToPng(svg));
    pngs.push(path);
  }
  return pngs;
}

/** A sweep record's own page (sweepHtml.ts) and its PNGs; constants are reported as not plotted. */
async function writeSweepReport(
  data: unknown,
  source: string,
  o: HtmlReportOptions,
): Promise<HtmlReportResult> {
  const rec = normalizeSweepRecord(data, source);
  const plots = await writeSweepHtml(rec, o.html, source);
  let pngs: string[] = [];
  try {
    if (o.png) pngs = await writePngs(plots, o.png);
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write the report's PNGs: ${(e as Error).message}`, { cause: e });
  }
  return {
    html: o.html,
    pngs,
    plotted: plots.map((p) => p.spec.family),
    omitted: sweepConstants(rec).map(
      (c) => `'${c.metric}' not plotted: ${formatNumber(c.value)} at every ${rec.sweep.key} and seed`,
    ),
  };
}

/**
 * Builds the page for `records` (several are overlaid for comparison) and writes it to `o.html`. A
 * sweep record (`labs run --sweep ... --out`) gets the sweep page, and only alone.
 */
export async function writeHtmlReport(
  records: readonly (RunRecord | MultiSeedRecord | SweepRecord)[],
  o: HtmlReportOptions,
): Promise<HtmlReportResult> {
  if (records.length === 0) throw new LabError('BAD_ARGUMENT', 'report: at least one record is needed');
  const sources = records.map((_, i) => o.sources[i] ?? `record ${i + 1}`);
  const sweepAt = records.findIndex(isSweepData);
  if (sweepAt >= 0) {
    const source = sources[sweepAt] as string;
    if (records.length > 1) {
      throw new LabError(
        'BAD_CLI',
        `report: ${source} is a sweep record, which gets a page of its own (labs report ${source} --html OUT.html); it cannot be overlaid with other records`,
        { details: { file: source } },
      );
    }
    return writeSweepReport(records[0], source, o);
  }
  const checked = records.map((r, i) => normalizeRecord(r, sources[i] as string));
  const labels = recordLabels(checked);
  const reruns = await Promise.all(
    checked.map(async (record, i) => {
      const given = o.reruns?.[i];
      if (given !== undefined) return given;
      if (record.experiment === 'audit' && !('runs' in record)) return auditRerunCommand(record) ?? undefined;
      const defaults = await experimentDefaults(record.experiment);
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
  const page = renderPage({
    records: labeled,
    plots,
    omitted: plan.omitted,
    version: VERSION,
    ...(o.refreshSeconds === undefined ? {} : { refreshSeconds: o.refreshSeconds }),
  });
  let pngs: string[] = [];
  try {
    makeDirs(dirname(o.html));
    await writeFileAtomic(o.html, page);
    if (o.png) pngs = await writePngs(plots, o.png);
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write the report: ${(e as Error).message}`, { cause: e });
  }
  return { html: o.html, pngs, plotted: plan.plots.map((p) => p.family), omitted: plan.omitted };
}
