/**
 * Summaries of (version lag, log-ratio) pairs, one pair per consumed action: the ratio distribution by
 * lag bucket and the correlation between lag and |log ratio|. These are the monitoring quantities the
 * course asks an asynchronous system to record ("bound the lag, watch the ratio's tail").
 */
import { LabError } from './errors.js';
import { quantileOfSorted } from './stats.js';

/** Smallest normal float64: a product of sums of squares below it has lost precision. */
const MIN_NORMAL = 2.2250738585072014e-308;

/** A lag bucket: lags lo..hi inclusive (hi = Infinity for the open last bucket). */
export interface LagBucket {
  label: string;
  lo: number;
  hi: number;
}

/** 0, 1, 2, 3, 4-7, 8-15, 16+: exact for small lags, doubling widths for the tail. */
export const DEFAULT_LAG_BUCKETS: readonly LagBucket[] = Object.freeze([
  { label: '0', lo: 0, hi: 0 },
  { label: '1', lo: 1, hi: 1 },
  { label: '2', lo: 2, hi: 2 },
  { label: '3', lo: 3, hi: 3 },
  { label: '4-7', lo: 4, hi: 7 },
  { label: '8-15', lo: 8, hi: 15 },
  { label: '16+', lo: 16, hi: Number.POSITIVE_INFINITY },
]);

export interface RatioStats {
  /** Number of actions in the bucket. */
  n: number;
  /** Of ratio = exp(logRatio). */
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Mean |log ratio|. */
  meanAbsLog: number;
}

/**
 * Ratio statistics over `logRatios` (ratio = exp(log ratio); quantiles linear-interpolated as numpy).
 * Null for an empty selection (nothing measured, rather than NaN).
 */
export function ratioStats(logRatios: ArrayLike<number>): RatioStats | null {
  const n = logRatios.length;
  if (n === 0) return null;
  const ratios = new Float64Array(n);
  let sum = 0;
  let abs = 0;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const l = logRatios[i] as number;
    if (!Number.isFinite(l)) {
      throw new LabError('NON_FINITE', `logRatios: value ${l} at position ${i} is not finite`, {
        details: { field: 'logRatios', row: i },
      });
    }
    const r = Math.exp(l);
    ratios[i] = r;
    sum += r;
    abs += Math.abs(l);
    if (r > max) max = r;
  }
  ratios.sort();
  return {
    n,
    mean: sum / n,
    p50: quantileOfSorted(ratios, 0.5),
    p90: quantileOfSorted(ratios, 0.9),
    p99: quantileOfSorted(ratios, 0.99),
    max,
    meanAbsLog: abs / n,
  };
}

function checkPairs(lags: ArrayLike<number>, logRatios: ArrayLike<number>): void {
  if (lags.length !== logRatios.length) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `lags (${lags.length}) and logRatios (${logRatios.length}) must have equal lengths`,
      { details: { field: 'logRatios', expected: lags.length, actual: logRatios.length } },
    );
  }
}

/** {@link ratioStats} of the actions whose lag falls in each bucket (null for an empty bucket). */
export function ratioStatsByLag(
  lags: ArrayLike<number>,
  logRatios: ArrayLike<number>,
  buckets: readonly LagBucket[] = DEFAULT_LAG_BUCKETS,
): { bucket: LagBucket; stats: RatioStats | null }[] {
  checkPairs(lags, logRatios);
  return buckets.map((bucket) => {
    const selected: number[] = [];
    for (let i = 0; i < lags.length; i++) {
      const l = lags[i] as number;
      if (l >= bucket.lo && l <= bucket.hi) selected.push(logRatios[i] as number);
    }
    return { bucket, stats: ratioStats(selected) };
  });
}

/**
 * Pearson correlation `r = Σ(x−x̄)(y−ȳ) / sqrt(Σ(x−x̄)² · Σ(y−ȳ)²)` of equal-length x and y (two-pass,
 * float64; `scipy.stats.pearsonr(x, y).statistic`). Null when either is constant (or fewer than 2
 * pairs): the correlation is undefined there (e.g. every lag 0 in sync mode), not 0 and not NaN.
 * Errors: SHAPE_MISMATCH lengths, NON_FINITE entry (names x or y and the position).
 */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  checkPairs(x, y);
  const n = x.length;
  let xMin = Number.POSITIVE_INFINITY;
  let xMax = Number.NEGATIVE_INFINITY;
  let yMin = Number.POSITIVE_INFINITY;
  let yMax = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const xi = x[i] as number;
    const yi = y[i] as number;
    const bad = !Number.isFinite(xi) ? 'x' : !Number.isFinite(yi) ? 'y' : null;
    if (bad !== null) {
      const v = bad === 'x' ? xi : yi;
      throw new LabError('NON_FINITE', `${bad}: value ${v} at position ${i} is not finite`, {
        details: { field: bad, row: i, value: v },
      });
    }
    if (xi < xMin) xMin = xi;
    if (xi > xMax) xMax = xi;
    if (yi < yMin) yMin = yi;
    if (yi > yMax) yMax = yi;
  }
  // constant by value (a mean like 0.1·3/3 can miss the constant by an ulp and fake a variance)
  if (n < 2 || xMin === xMax || yMin === yMax) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i] as number;
    my += y[i] as number;
  }
  mx /= n;
  my /= n;
  if (!Number.isFinite(mx) || !Number.isFinite(my)) {
    throw new LabError('NON_FINITE', 'x, y: values too large for float64 statistics (the sum overflows)', {
      details: { field: Number.isFinite(mx) ? 'y' : 'x' },
    });
  }
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = (x[i] as number) - mx;
    const dy = (y[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  const denom = Math.sqrt(sxx * syy);
  if (Number.isFinite(denom) && denom >= MIN_NORMAL && Number.isFinite(sxy)) return sxy / denom;
  // squares overflowed or underflowed (|deviations| beyond ~1e±154): r is scale-free, so redo it on
  // the deviations divided by their largest magnitude
  let ax = 0;
  let ay = 0;
  for (let i = 0; i < n; i++) {
    ax = Math.max(ax, Math.abs((x[i] as number) - mx));
    ay = Math.max(ay, Math.abs((y[i] as number) - my));
  }
  sxy = 0;
  sxx = 0;
  syy = 0;
  for (let i = 0; i < n; i++) {
    const dx = ((x[i] as number) - mx) / ax;
    const dy = ((y[i] as number) - my) / ay;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxy / Math.sqrt(sxx * syy);
}

/** Counts of each integer value 0..max(values) (values must be non-negative integers). */
export function integerHistogram(values: ArrayLike<number>): number[] {
  let max = -1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isInteger(v) || v < 0) {
      throw new LabError('BAD_VALUE', `values: ${v} at position ${i} is not a non-negative integer`, {
        details: { field: 'values', row: i, value: v },
      });
    }
    if (v > max) max = v;
  }
  const counts = new Array<number>(max + 1).fill(0);
  for (let i = 0; i < values.length; i++)
    counts[values[i] as number] = (counts[values[i] as number] as number) + 1;
  return counts;
}
