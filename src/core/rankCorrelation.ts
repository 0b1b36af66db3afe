/**
 * Spearman's rank correlation: the Pearson correlation of the two samples' ranks, ties given the
 * average of the ranks they span (`scipy.stats.spearmanr`, `pandas.Series.corr(method='spearman')`).
 */
import { LabError } from './errors.js';

/**
 * Ranks 1..n of `values` with ties averaged (`scipy.stats.rankdata(method='average')`).
 * Errors: NON_FINITE for a non-finite value (naming `field` and the position).
 */
export function averageRanks(values: ArrayLike<number>, field = 'values'): Float64Array {
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const v = values[i] as number;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: value ${v} at position ${i} is not finite`, {
        details: { field, row: i, value: v },
      });
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (values[a] as number) - (values[b] as number),
  );
  const ranks = new Float64Array(n);
  let start = 0;
  while (start < n) {
    let end = start + 1;
    const v = values[order[start] as number] as number;
    while (end < n && values[order[end] as number] === v) end++;
    const rank = (start + 1 + end) / 2; // mean of ranks start+1..end
    for (let k = start; k < end; k++) ranks[order[k] as number] = rank;
    start = end;
  }
  return ranks;
}

/**
 * Spearman's rho of paired samples `x`, `y` (length n ≥ 2): Pearson's r of their average ranks,
 * `Σ (rx−mean)(ry−mean) / sqrt(Σ (rx−mean)² Σ (ry−mean)²)`. NaN when either sample is constant (the
 * correlation is undefined there, as scipy returns nan). Errors: SHAPE_MISMATCH for lengths that
 * differ or n < 2; NON_FINITE for a non-finite value.
 */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (x.length !== y.length || x.length < 2) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `spearman: x and y must have the same length >= 2, got ${x.length} and ${y.length}`,
      { details: { field: 'y', expected: x.length, actual: y.length } },
    );
  }
  const rx = averageRanks(x, 'x');
  const ry = averageRanks(y, 'y');
  const mean = (x.length + 1) / 2;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < rx.length; i++) {
    const dx = (rx[i] as number) - mean;
    const dy = (ry[i] as number) - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0 || syy === 0) return Number.NaN;
  return sxy / Math.sqrt(sxx * syy);
}
