/**
 * Small summary statistics for multi-seed runs and reports.
 */
import { LabError } from './errors.js';

/** Two-sided 97.5% quantiles of Student's t for df = 1..30; beyond 30 the normal 1.96 is within 2%. */
const T975 = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131,
  2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042,
];

export function tQuantile975(df: number): number {
  if (df < 1) return Number.NaN;
  return df <= 30 ? (T975[df - 1] as number) : 1.96;
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

/** mean, sample std, min, max and a t-based 95% confidence interval of the mean. */
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
  const half = n > 1 ? (tQuantile975(n - 1) * std) / Math.sqrt(n) : 0;
  return { mean, std, min, max, ci95: [mean - half, mean + half], n };
}

/** Linear-interpolated quantile (numpy's default 'linear' method) of a copy of `values`. */
export function quantile(values: ArrayLike<number>, q: number): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  const sorted = Float64Array.from(values as ArrayLike<number>).sort();
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, n - 1);
  return (sorted[lo] as number) + ((sorted[hi] as number) - (sorted[lo] as number)) * (pos - lo);
}
