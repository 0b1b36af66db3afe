/**
 * From records to plot specifications: which plots a report has, their titles, axis labels, kind,
 * legend order and data points. Pure data (no DOM, no Plot), so the choices are testable.
 *
 * Curves are keyed `<family>.<series>` (a key without a dot is its own family and series) with
 * x = `curves.update`; all series of a family share one plot. `plots[family]` hints give title,
 * labels and kind, or name a table to plot (`xField`, one series per `yFields` entry). A multi-seed
 * record contributes its per-update mean with the 95% band from `curve_summary`. Several records are
 * overlaid: each series is prefixed by a label telling the records apart (experiment, seed, the
 * config keys that differ).
 */
import { summarizeRuns } from '../experiments/multiSeed.js';
import { bandOf } from '../experiments/seedStatistics.js';
import type { JsonValue, MultiSeedRecord, PlotHint, RunRecord } from '../experiments/types.js';
import { decodeNumber } from './recordShape.js';

export type PlotKind = NonNullable<PlotHint['kind']>;

/** One drawn point. `lo`/`hi` (95% band across seeds) only when the record has several seeds. */
export interface PlotPoint {
  x: number | string;
  y: number;
  series: string;
  lo?: number;
  hi?: number;
}

export interface PlotSpec {
  /** The curve family (or hint key) this plot shows; unique within a report. */
  family: string;
  title: string;
  xLabel: string;
  yLabel: string;
  /** The kind actually drawn (a stacked area becomes lines when bands or overlays are shown). */
  kind: PlotKind;
  /** Legend order; every point's `series` is one of these. */
  series: string[];
  points: PlotPoint[];
  /** True when points carry a 95% band (`lo`, `hi`). */
  band: boolean;
  /** Short notes shown under the plot (what was changed or is missing). */
  notes: string[];
  /**
   * Overlays only: for each entry of `series`, the index of the record it comes from and its name
   * within that record (`mixed` for `seed 8 · mixed`). Line plots colour by that name and dash by
   * record, so the same curve of two records shares a colour instead of the palette running out.
   */
  overlay?: { record: number[]; base: string[]; labels: string[] };
}

export interface ReportPlan {
  plots: PlotSpec[];
  /** Plots that could not be drawn at all, and why. */
  omitted: string[];
}

/** How the records of an overlay are told apart in line plots, in record order (see plots.ts DASHES). */
export const LINE_STYLE_NAMES = ['solid', 'dashed', 'dotted', 'dash-dot'];

/** A record with the label that tells it apart from the others in the same report ('' when alone). */
export interface LabeledRecord {
  record: RunRecord | MultiSeedRecord;
  label: string;
  source: string;
}

/** What one record contributes to plots: per-update values and, for several seeds, the band. */
interface RecordView {
  label: string;
  update: number[] | null;
  curves: Record<string, number[]>;
  bands: Record<string, { lo: number[]; hi: number[] }> | null;
  tables: Record<string, Record<string, JsonValue>[]>;
  /** For table plots of a multi-seed record: every seed's tables. */
  runTables: Record<string, Record<string, JsonValue>[]>[] | null;
  hints: Record<string, PlotHint>;
  source: string;
}

function viewOf({ record, label, source }: LabeledRecord): RecordView {
  if (!('runs' in record)) {
    const { update, ...curves } = record.curves;
    return {
      label,
      update: update ?? null,
      curves,
      bands: null,
      tables: record.tables,
      runTables: null,
      hints: record.plots ?? {},
      source,
    };
  }
  const first = record.runs[0] as RunRecord;
  const summary =
    record.curve_summary ??
    summarizeRuns(record.experiment, record.config, record.runs, 0).curve_summary ??
    {};
  const curves: Record<string, number[]> = {};
  const bands: Record<string, { lo: number[]; hi: number[] }> = {};
  for (const [key, s] of Object.entries(summary)) {
    if (key === 'update') continue;
    curves[key] = s.mean;
    bands[key] = { lo: s.lo, hi: s.hi };
  }
  return {
    label,
    update: first.curves.update ?? null,
    curves,
    bands,
    tables: first.tables,
    runTables: record.runs.map((r) => r.tables),
    hints: Object.assign({}, ...record.runs.map((r) => r.plots ?? {}).reverse()),
    source,
  };
}

/** `group_kind.all_wrong` -> ['group_kind', 'all_wrong']; `loss` -> ['loss', 'loss']. */
export function splitCurveKey(key: string): [family: string, series: string] {
  const dot = key.indexOf('.');
  return dot < 0 ? [key, key] : [key.slice(0, dot), key.slice(dot + 1)];
}

function seedLabel(record: RunRecord | MultiSeedRecord): string {
  if (!('runs' in record)) return `seed ${record.seed}`;
  const seeds = record.seeds;
  const contiguous = seeds.every((s, i) => i === 0 || s === (seeds[i - 1] as number) + 1);
  return contiguous && seeds.length > 1
    ? `seeds ${seeds[0]}..${seeds[seeds.length - 1]}`
    : `seeds ${seeds.join(',')}`;
}

/**
 * Labels that tell records apart: the experiment when experiments differ, the seed(s) when they
 * differ, and `key=value` for (up to 3) config keys whose values differ; `#i` when nothing differs.
 */
export function recordLabels(records: readonly (RunRecord | MultiSeedRecord)[]): string[] {
  if (records.length <= 1) return records.map(() => '');
  const differs = (values: string[]) => new Set(values).size > 1;
  const experiments = records.map((r) => r.experiment);
  const seeds = records.map(seedLabel);
  const keys = [...new Set(records.flatMap((r) => Object.keys(r.config)))];
  const differing = keys
    .filter((k) => differs(records.map((r) => JSON.stringify(r.config[k] ?? null))))
    .slice(0, 3);
  const labels = records.map((r, i) => {
    const parts: string[] = [];
    if (differs(experiments)) parts.push(r.experiment);
    if (differs(seeds)) parts.push(seeds[i] as string);
    for (const k of differing) {
      const v = r.config[k];
      parts.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v ?? null)}`);
    }
    return parts.join(' ');
  });
  return labels.map((l, i) => (l === '' || labels.indexOf(l) !== i ? `${l ? `${l} ` : ''}#${i + 1}` : l));
}

function seriesName(view: RecordView, series: string, familySeriesCount: number): string {
  if (!view.label) return series;
  return familySeriesCount > 1 ? `${view.label} · ${series}` : view.label;
}

function curvePoints(view: RecordView, family: string): { points: PlotPoint[]; series: string[] } {
  const keys = Object.keys(view.curves).filter((k) => splitCurveKey(k)[0] === family);
  const points: PlotPoint[] = [];
  const series: string[] = [];
  for (const key of keys) {
    const values = view.curves[key] as number[];
    const name = seriesName(view, splitCurveKey(key)[1], keys.length);
    const band = view.bands?.[key];
    series.push(name);
    values.forEach((y, i) => {
      const x = view.update ? (view.update[i] as number) : i;
      const p: PlotPoint = { x, y, series: name };
      if (band) {
        p.lo = band.lo[i] as number;
        p.hi = band.hi[i] as number;
      }
      points.push(p);
    });
  }
  return { points, series };
}

function tableValue(v: JsonValue | undefined, source: string, field: string): number {
  return v === undefined ? Number.NaN : decodeNumber(v, source, field);
}

/** Rows of `hint.table`: x from `xField`, one series per `yFields` entry; several seeds give mean and band. */
function tablePoints(
  view: RecordView,
  hint: PlotHint & { table: string },
): { points: PlotPoint[]; series: string[] } | string {
  const xField = hint.xField;
  const rows0 = view.tables[hint.table];
  if (!rows0) return `no table '${hint.table}'`;
  if (!xField) return `the hint names table '${hint.table}' but no xField`;
  const yFields =
    hint.yFields ??
    Object.keys(rows0[0] ?? {}).filter((k) => k !== xField && typeof rows0[0]?.[k] === 'number');
  if (yFields.length === 0) return `table '${hint.table}' has no numeric column to plot`;
  const series = yFields.map((f) => seriesName(view, f, yFields.length));
  const points: PlotPoint[] = [];
  const tables = view.runTables ?? [view.tables];
  // x values in order of first appearance across seeds; a seed lacking a row simply contributes nothing there.
  const xs: (number | string)[] = [];
  const byX = new Map<number | string, Map<string, number[]>>();
  tables.forEach((t, run) => {
    const rows = t[hint.table] ?? [];
    rows.forEach((row, r) => {
      const at = `${view.runTables ? `runs[${run}].` : ''}tables.${hint.table}[${r}]`;
      const xv = row[xField];
      const x = typeof xv === 'string' ? xv : tableValue(xv, view.source, `${at}.${xField}`);
      if (!byX.has(x)) {
        byX.set(x, new Map());
        xs.push(x);
      }
      const cell = byX.get(x) as Map<string, number[]>;
      for (const f of yFields) {
        const y = tableValue(row[f], view.source, `${at}.${f}`);
        if (!cell.has(f)) cell.set(f, []);
        (cell.get(f) as number[]).push(y);
      }
    });
  });
  yFields.forEach((f, j) => {
    for (const x of xs) {
      const ys = (byX.get(x)?.get(f) ?? []).filter(Number.isFinite);
      if (!view.runTables) {
        points.push({ x, y: ys.length ? (ys[0] as number) : Number.NaN, series: series[j] as string });
      } else if (ys.length) {
        // rates (every value in [0, 1]) get a bootstrap band that stays in [0, 1]
        const s = bandOf(ys, `${hint.table}/${String(x)}/${f}`);
        points.push({ x, y: s.mean, lo: s.lo, hi: s.hi, series: series[j] as string });
      }
    }
  });
  return { points, series };
}

function describeSource(view: RecordView): string {
  return view.label ? `${view.label} (${view.source})` : view.source;
}

/**
 * Decides the report's plots. Hinted families come first in hint order, then every other curve
 * family in the order its first curve appears. A hinted family that no record has is omitted with
 * a note; a family missing from some of several records is drawn from the others with a note.
 */
export function planPlots(records: readonly LabeledRecord[]): ReportPlan {
  const views = records.map(viewOf);
  const hints: Record<string, PlotHint> = Object.assign({}, ...views.map((v) => v.hints).reverse());
  const curveFamilies: string[] = [];
  for (const v of views) {
    for (const key of Object.keys(v.curves)) {
      const family = splitCurveKey(key)[0];
      if (!curveFamilies.includes(family)) curveFamilies.push(family);
    }
  }
  const families = [...Object.keys(hints), ...curveFamilies.filter((f) => !(f in hints))];
  const plots: PlotSpec[] = [];
  const omitted: string[] = [];
  const overlaid = views.length > 1;
  const banded = views.some((v) => v.bands !== null);

  for (const family of families) {
    const hint = hints[family];
    const title = hint?.title ?? family.replace(/_/g, ' ');
    const notes: string[] = [];
    const points: PlotPoint[] = [];
    const series: string[] = [];
    const seriesRecord: number[] = [];
    const seriesBase: string[] = [];
    const missing: string[] = [];
    for (const [r, view] of views.entries()) {
      const got = hint?.table
        ? tablePoints(view, hint as PlotHint & { table: string })
        : curvePoints(view, family);
      if (typeof got === 'string' || got.series.length === 0) {
        missing.push(`${describeSource(view)}: ${typeof got === 'string' ? got : `no curves '${family}.*'`}`);
        continue;
      }
      for (const p of got.points) points.push(p); // a spread of 10^5+ points overflows the call stack
      series.push(...got.series);
      for (const name of got.series) {
        seriesRecord.push(r);
        // seriesName() gives `label · series` (several series) or just `label` (one series).
        seriesBase.push(
          view.label && name.startsWith(`${view.label} · `) ? name.slice(view.label.length + 3) : '',
        );
      }
    }
    if (series.length === 0) {
      omitted.push(`'${title}' omitted: ${missing.join('; ')}`);
      continue;
    }
    const drawable = new Set(points.filter((p) => Number.isFinite(p.y)).map((p) => p.series));
    if (drawable.size === 0) {
      omitted.push(`'${title}' omitted: no finite values in ${series.join(', ')}`);
      continue;
    }
    const blank = series.filter((s) => !drawable.has(s));
    if (blank.length) notes.push(`no finite values (not drawn): ${blank.join(', ')}`);
    if (missing.length) notes.push(`not in ${missing.join('; ')}`);
    let kind: PlotKind = hint?.kind ?? 'line';
    const band = points.some((p) => p.lo !== undefined);
    if (kind === 'stacked-area' && (overlaid || band)) {
      kind = 'line';
      notes.push(
        band
          ? 'drawn as mean lines with 95% bands across seeds (a stacked area cannot show bands)'
          : 'drawn as lines so the records can be overlaid',
      );
    }
    if (!hint?.table && views.every((v) => v.update === null)) notes.push('no curves.update: x is the index');
    if (band && banded) notes.push('shaded: 95% confidence band of the mean across seeds');
    const used = [...new Set(seriesRecord)];
    const overlay =
      overlaid && kind === 'line' && used.length > 1
        ? { record: seriesRecord, base: seriesBase, labels: views.map((v) => v.label) }
        : undefined;
    if (overlay) {
      notes.push(
        `line style by record: ${used.map((r) => `${LINE_STYLE_NAMES[r % LINE_STYLE_NAMES.length]} = ${views[r]?.label}`).join('; ')}`,
      );
    }
    plots.push({
      family,
      title,
      xLabel: hint?.x ?? (hint?.table ? (hint.xField ?? 'x') : 'update'),
      yLabel: hint?.y ?? family.replace(/_/g, ' '),
      kind,
      series,
      points,
      band,
      notes,
      ...(overlay ? { overlay } : {}),
    });
  }
  return { plots, omitted };
}
