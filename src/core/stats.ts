/**
 * Small summary statistics for multi-seed runs and reports.
 */
import { LabError } from './errors.js';
import { tQuantile } from './studentT.js';

/**
 * t_{0.975, df} for df = 1..30 as printed t tables give it: {@link tQuantile}(0.975, df) rounded to 3
 * decimals (`src/core/studentT.test.ts` checks every entry against the function). Kept as literals
 * because every multi-seed record since v0.1 was computed with these rounded values, and records
 * must stay byte-identical; a literal also spares the bisection on each `summarize`.
 */
const T975_ROUNDED = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

/**
 * t_{0.975, df}, the multiplier of the 95% t interval (scipy `t.ppf(0.975, df)`): the 3-decimal
 * table value for df <= 30, {@link tQuantile}(0.975, df) beyond (to ~1e-12; the normal 1.96 alone
 * would make the CI of 31 seeds 4% too narrow, t_{0.975,31} = 2.0395); NaN for df < 1 (no
 * interval from one value). Not a second t-quantile: the table is {@link tQuantile} rounded.
 */
export function tQuantile975(df: number): number {
  if (df < 1) return Number.NaN;
  if (df <= 30 && Number.isInteger(df)) return T975_ROUNDED[df - 1] as number;
  return tQuantile(0.975, df);
}

export interface Summary {
  mean: number;
  /** Sample standard deviation (n-1); 0 for a single value. */
  std: number;
  min: number;
  max: number;
  /** mean +- t_{0.975, n-1} * std / sqrt(n); collapses to [mean, mean] for n = 1. */
  ci95: [number, number];
  n: number;
}

/**
 * Across-seed summary of one metric: mean, sample std `sqrt(Σ(x − mean)²/(n − 1))` (0 for n = 1), min,
 * max and the t-based 95% interval of the mean `mean ± t_{0.975, n−1}·std/√n` (scipy
 * `stats.t.interval(0.95, n−1, mean, sem)`). Errors: BAD_ARGUMENT empty list, NON_FINITE value
 * (names `field` and the position).
 */
export function summarize(values: readonly number[], field = 'values'): Summary {
  const n = values.length;
  if (n === 0) throw new LabError('BAD_ARGUMENT', `${field}: cannot summarise an empty list`);
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: value ${v} at position ${i} is not finite`, {
        details: { field, row: i },
      });
    }
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  // A constant list must summarise to exactly that constant (sum/n can be off by an ulp).
  const mean = min === max ? min : sum / n;
  let ss = 0;
  for (const v of values) ss += (v - mean) * (v - mean);
  const std = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  if (!Number.isFinite(std) || !Number.isFinite(mean)) {
    throw new LabError(
      'NON_FINITE',
      `${field}: values too large for float64 statistics (sum or squares overflow)`,
      {
        details: { field },
      },
    );
  }
  const half = n > 1 ? (tQuantile975(n - 1) * std) / Math.sqrt(n) : 0;
  return { mean, std, min, max, ci95: [mean - half, mean + half], n };
}

/**
 * The q-quantile of `values` (numpy `np.quantile(values, q)`, default 'linear' method): with the
 * values sorted ascending, position `pos = (n − 1)·q` and `lo = floor(pos)`,
 * `x[lo] + (x[lo+1] − x[lo])·(pos − lo)`. Sorts a copy; `values` is not reordered.
 * Errors: BAD_ARGUMENT for an empty list or q outside [0, 1], NON_FINITE value (names the position).
 */
export function quantile(values: ArrayLike<number>, q: number, field = 'values'): number {
  if (values.length === 0) throw new LabError('BAD_ARGUMENT', `${field}: no quantile of an empty list`);
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (!Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: value ${v} at position ${i} is not finite`, {
        details: { field, row: i },
      });
    }
  }
  return quantileOfSorted(Float64Array.from(values).sort(), q);
}

/**
 * {@link quantile} of values already sorted ascending and finite (not checked: for callers that sort
 * once and read several quantiles). BAD_ARGUMENT for an empty list or q outside [0, 1].
 */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) throw new LabError('BAD_ARGUMENT', 'quantile: no quantile of an empty list');
  if (!(q >= 0 && q <= 1)) {
    throw new LabError('BAD_ARGUMENT', `q: expected a quantile level in [0, 1], got ${q}`, {
      details: { field: 'q', value: q },
    });
  }
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, n - 1);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}
