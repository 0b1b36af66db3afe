/**
 * Structural check of a record before it is drawn: every curve an array of numbers of the same
 * length as `curves.update`, every table an array of objects, every plot hint with a title and a
 * y label. Records on disk spell non-finite numbers as the strings 'NaN' / 'Infinity' /
 * '-Infinity' (see `toJson`); those (and `null`) decode to NaN here and are drawn as gaps. Anything
 * else is a BAD_RECORD error naming the file, the field and the position.
 */
import { LabError } from '../core/errors.js';
import type { DoseRow, SweepRecord } from '../experiments/sweep.js';
import type {
  Comparison,
  JsonValue,
  MultiSeedRecord,
  PlotHint,
  RunRecord,
  SummaryInterval,
} from '../experiments/types.js';

const NON_FINITE_SPELLINGS: Record<string, number> = {
  NaN: Number.NaN,
  Infinity: Number.POSITIVE_INFINITY,
  '-Infinity': Number.NEGATIVE_INFINITY,
};

function fail(file: string, field: string, what: string): never {
  throw new LabError('BAD_RECORD', `${file}: ${field} ${what}`, { details: { file, field } });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function describe(v: unknown): string {
  const text = JSON.stringify(v);
  return text === undefined ? String(v) : text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

/** One curve value: a number, null, or a non-finite spelling; returns the number (NaN for gaps). */
export function decodeNumber(v: unknown, file: string, field: string): number {
  if (typeof v === 'number') return v;
  if (v === null) return Number.NaN;
  if (typeof v === 'string' && v in NON_FINITE_SPELLINGS) return NON_FINITE_SPELLINGS[v] as number;
  return fail(file, field, `is ${describe(v)} (expected a number)`);
}

function decodeSeries(v: unknown, file: string, field: string): number[] {
  if (!Array.isArray(v)) fail(file, field, `is ${describe(v)} (expected an array of numbers)`);
  return v.map((x, i) => decodeNumber(x, file, `${field}[${i}]`));
}

function checkCurves(v: unknown, file: string, field: string): Record<string, number[]> {
  if (v === undefined) return {};
  if (!isObject(v)) fail(file, field, `is ${describe(v)} (expected an object of number arrays)`);
  const curves: Record<string, number[]> = {};
  for (const [key, series] of Object.entries(v)) curves[key] = decodeSeries(series, file, `${field}.${key}`);
  const update = curves.update;
  if (update) {
    for (const [key, series] of Object.entries(curves)) {
      if (series.length !== update.length) {
        fail(file, `${field}.${key}`, `has ${series.length} values but ${field}.update has ${update.length}`);
      }
    }
  }
  return curves;
}

function checkTables(v: unknown, file: string, field: string): Record<string, Record<string, JsonValue>[]> {
  if (v === undefined) return {};
  if (!isObject(v)) fail(file, field, `is ${describe(v)} (expected an object of row arrays)`);
  for (const [name, rows] of Object.entries(v)) {
    if (!Array.isArray(rows))
      fail(file, `${field}.${name}`, `is ${describe(rows)} (expected an array of rows)`);
    rows.forEach((row, i) => {
      if (!isObject(row)) fail(file, `${field}.${name}[${i}]`, `is ${describe(row)} (expected an object)`);
    });
  }
  return v as Record<string, Record<string, JsonValue>[]>;
}

function checkHints(v: unknown, file: string, field: string): Record<string, PlotHint> | undefined {
  if (v === undefined) return undefined;
  if (!isObject(v)) fail(file, field, `is ${describe(v)} (expected an object of plot hints)`);
  for (const [family, hint] of Object.entries(v)) {
    const at = `${field}.${family}`;
    if (!isObject(hint)) fail(file, at, `is ${describe(hint)} (expected a plot hint object)`);
    if (typeof hint.title !== 'string') fail(file, `${at}.title`, 'is missing (expected a string)');
    if (typeof hint.y !== 'string') fail(file, `${at}.y`, 'is missing (expected the y label with its unit)');
    if (hint.kind !== undefined && !['line', 'stacked-area', 'bar'].includes(hint.kind as string)) {
      fail(file, `${at}.kind`, `is ${describe(hint.kind)} (expected 'line', 'stacked-area' or 'bar')`);
    }
    if (
      hint.yFields !== undefined &&
      !(Array.isArray(hint.yFields) && hint.yFields.every((f) => typeof f === 'string'))
    ) {
      fail(file, `${at}.yFields`, `is ${describe(hint.yFields)} (expected an array of column names)`);
    }
  }
  return v as Record<string, PlotHint>;
}

function checkObject(v: unknown, file: string, field: string): Record<string, JsonValue> {
  if (v === undefined) return {};
  if (!isObject(v)) fail(file, field, `is ${describe(v)} (expected an object)`);
  return v as Record<string, JsonValue>;
}

function checkRun(v: unknown, file: string, prefix: string): RunRecord {
  if (!isObject(v)) fail(file, prefix || 'record', `is ${describe(v)} (expected a RunRecord object)`);
  const at = (f: string) => (prefix ? `${prefix}.${f}` : f);
  if (typeof v.experiment !== 'string') fail(file, at('experiment'), 'is missing (expected a string)');
  if (typeof v.seed !== 'number') fail(file, at('seed'), `is ${describe(v.seed)} (expected a number)`);
  if (!isObject(v.metrics)) fail(file, at('metrics'), `is ${describe(v.metrics)} (expected an object)`);
  const hints = checkHints(v.plots, file, at('plots'));
  const record: RunRecord = {
    experiment: v.experiment,
    seed: v.seed,
    version: typeof v.version === 'string' ? v.version : '?',
    config: checkObject(v.config, file, at('config')),
    metrics: v.metrics as Record<string, JsonValue>,
    curves: checkCurves(v.curves, file, at('curves')),
    tables: checkTables(v.tables, file, at('tables')),
    timing: {
      wall_ms: isObject(v.timing) && typeof v.timing.wall_ms === 'number' ? v.timing.wall_ms : Number.NaN,
    },
  };
  if (Array.isArray(v.notes)) record.notes = v.notes.map(String);
  if (hints) record.plots = hints;
  return record;
}

/** `comparisons` of a multi-seed record: each entry with string arm/baseline/metric and numeric diff, ci95, p, p_holm. */
function checkComparisons(v: unknown[], file: string): Comparison[] {
  return v.map((c, i) => {
    const at = `comparisons[${i}]`;
    if (!isObject(c)) fail(file, at, `is ${describe(c)} (expected a comparison object)`);
    for (const f of ['arm', 'baseline', 'metric'])
      if (typeof c[f] !== 'string') fail(file, `${at}.${f}`, `is ${describe(c[f])} (expected a string)`);
    const ci = Array.isArray(c.ci95) ? c.ci95 : [];
    if (ci.length !== 2) fail(file, `${at}.ci95`, `is ${describe(c.ci95)} (expected [lo, hi])`);
    return {
      ...(c as unknown as Comparison),
      diff: decodeNumber(c.diff, file, `${at}.diff`),
      ci95: [decodeNumber(ci[0], file, `${at}.ci95[0]`), decodeNumber(ci[1], file, `${at}.ci95[1]`)],
      p: decodeNumber(c.p, file, `${at}.p`),
      p_holm: decodeNumber(c.p_holm, file, `${at}.p_holm`),
      mde80: c.mde80 === null || c.mde80 === undefined ? null : decodeNumber(c.mde80, file, `${at}.mde80`),
    };
  });
}

function checkCurveSummary(v: unknown, file: string): MultiSeedRecord['curve_summary'] {
  if (v === undefined) return undefined;
  if (!isObject(v)) fail(file, 'curve_summary', `is ${describe(v)} (expected an object)`);
  const out: NonNullable<MultiSeedRecord['curve_summary']> = {};
  for (const [key, s] of Object.entries(v)) {
    const at = `curve_summary.${key}`;
    if (!isObject(s)) fail(file, at, `is ${describe(s)} (expected {mean, lo, hi})`);
    const mean = decodeSeries(s.mean, file, `${at}.mean`);
    const lo = decodeSeries(s.lo, file, `${at}.lo`);
    const hi = decodeSeries(s.hi, file, `${at}.hi`);
    if (lo.length !== mean.length || hi.length !== mean.length) {
      fail(file, at, `has mean/lo/hi of lengths ${mean.length}/${lo.length}/${hi.length} (expected equal)`);
    }
    out[key] = { mean, lo, hi };
    if (s.interval === 't' || s.interval === 'bootstrap-percentile') out[key].interval = s.interval;
  }
  return out;
}

/**
 * Validates a single-seed or multi-seed record read from `file` and returns a copy whose curves hold
 * plain numbers (NaN for gaps). Throws LabError('BAD_RECORD') naming `file` and the field.
 */
export function normalizeRecord(data: unknown, file: string): RunRecord | MultiSeedRecord {
  if (!isObject(data)) return fail(file, 'record', `is ${describe(data)} (expected a JSON object)`);
  if (!('runs' in data)) return checkRun(data, file, '');
  if (typeof data.experiment !== 'string') fail(file, 'experiment', 'is missing (expected a string)');
  if (!Array.isArray(data.runs) || data.runs.length === 0) {
    fail(file, 'runs', `is ${describe(data.runs)} (expected a non-empty array of RunRecords)`);
  }
  const runs = data.runs.map((r, i) => checkRun(r, file, `runs[${i}]`));
  const record: MultiSeedRecord = {
    experiment: data.experiment,
    seeds: Array.isArray(data.seeds) ? data.seeds.map(Number) : runs.map((r) => r.seed),
    version: typeof data.version === 'string' ? data.version : '?',
    config: checkObject(data.config, file, 'config'),
    runs,
    summary: checkObject(data.summary, file, 'summary') as unknown as MultiSeedRecord['summary'],
    timing: {
      wall_ms:
        isObject(data.timing) && typeof data.timing.wall_ms === 'number' ? data.timing.wall_ms : Number.NaN,
    },
  };
  const curveSummary = checkCurveSummary(data.curve_summary, file);
  if (curveSummary) record.curve_summary = curveSummary;
  if (Array.isArray(data.comparisons)) record.comparisons = checkComparisons(data.comparisons, file);
  if (isObject(data.statistics)) record.statistics = data.statistics as Record<string, JsonValue>;
  return record;
}

/** True for what `labs run --sweep ... --out` writes: an object with `sweep`, `points` and `dose_response`. */
export function isSweepData(data: unknown): boolean {
  return (
    isObject(data) && isObject(data.sweep) && Array.isArray(data.points) && Array.isArray(data.dose_response)
  );
}

function decodePair(v: unknown, file: string, field: string): [number, number] {
  if (!Array.isArray(v) || v.length !== 2) fail(file, field, `is ${describe(v)} (expected [lo, hi])`);
  return [decodeNumber(v[0], file, `${field}[0]`), decodeNumber(v[1], file, `${field}[1]`)];
}

/**
 * Validates a sweep record (src/experiments/sweep.ts `SweepRecord`) read from `file`: the swept key
 * and values, the seeds, every point's multi-seed record (checked like any record) and every
 * dose-response row, with non-finite spellings decoded to numbers. Throws BAD_RECORD naming the field.
 */
export function normalizeSweepRecord(data: unknown, file: string): SweepRecord {
  if (!isObject(data) || !isObject(data.sweep))
    return fail(file, 'sweep', 'is missing (expected {key, values})');
  if (typeof data.experiment !== 'string') fail(file, 'experiment', 'is missing (expected a string)');
  const { key, values } = data.sweep;
  if (typeof key !== 'string') fail(file, 'sweep.key', `is ${describe(key)} (expected a string)`);
  if (!Array.isArray(values)) fail(file, 'sweep.values', `is ${describe(values)} (expected an array)`);
  if (!Array.isArray(data.seeds) || !data.seeds.every((x) => typeof x === 'number')) {
    fail(file, 'seeds', `is ${describe(data.seeds)} (expected an array of numbers)`);
  }
  const points = (data.points as unknown[]).map((p, i) => {
    if (!isObject(p)) fail(file, `points[${i}]`, `is ${describe(p)} (expected {value, record})`);
    const record = normalizeRecord(p.record, `${file} points[${i}].record`);
    if (!('runs' in record))
      fail(file, `points[${i}].record`, 'is a single-seed record (expected a --seeds record)');
    return { value: p.value as JsonValue, record };
  });
  const dose = (data.dose_response as unknown[]).map((r, i): DoseRow => {
    const at = `dose_response[${i}]`;
    if (!isObject(r)) fail(file, at, `is ${describe(r)} (expected a row object)`);
    if (typeof r.metric !== 'string')
      fail(file, `${at}.metric`, `is ${describe(r.metric)} (expected a string)`);
    if (typeof r.n !== 'number') fail(file, `${at}.n`, `is ${describe(r.n)} (expected a number)`);
    const row: DoseRow = {
      metric: r.metric,
      arm: typeof r.arm === 'string' ? r.arm : '',
      value: r.value as JsonValue,
      mean: decodeNumber(r.mean, file, `${at}.mean`),
      ci95: decodePair(r.ci95, file, `${at}.ci95`),
      interval: (r.interval === 'bootstrap-percentile' ? 'bootstrap-percentile' : 't') as SummaryInterval,
      n: r.n,
    };
    if (r.diff !== undefined) row.diff = decodeNumber(r.diff, file, `${at}.diff`);
    if (r.diff_ci95 !== undefined) row.diff_ci95 = decodePair(r.diff_ci95, file, `${at}.diff_ci95`);
    if (r.p_holm !== undefined) row.p_holm = decodeNumber(r.p_holm, file, `${at}.p_holm`);
    return row;
  });
  return {
    experiment: data.experiment,
    sweep: { key, values: values as JsonValue[] },
    seeds: data.seeds as number[],
    version: typeof data.version === 'string' ? data.version : '?',
    config: checkObject(data.config, file, 'config'),
    baseline: typeof data.baseline === 'string' ? data.baseline : null,
    points: points as SweepRecord['points'],
    dose_response: dose,
    timing: {
      wall_ms:
        isObject(data.timing) && typeof data.timing.wall_ms === 'number' ? data.timing.wall_ms : Number.NaN,
    },
  };
}
