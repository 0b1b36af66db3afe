/**
 * Rank correlations (pure functions), for the saturation experiment's ranker audit and `labs audit
 * --quality/--independent`:
 *
 *  - `averageRanks(x)`: 1-based ranks, ties given the mean of the ranks they span
 *    (`scipy.stats.rankdata(method='average')`).
 *  - `spearman(x, y)`: Pearson correlation of the average ranks (Spearman's rho with ties,
 *    `scipy.stats.spearmanr`).
 *  - `kendallTauB(x, y)`: (C − D) / sqrt((n0 − n1)(n0 − n2)), n0 = n(n−1)/2 pairs, n1 / n2 the
 *    pairs tied in x / in y, C / D the concordant / discordant pairs (Kendall's tau-b,
 *    `scipy.stats.kendalltau`).
 *  - `stratifiedSpearman(strata)` and `stratifiedKendallTauB(strata)`: the same within strata
 *    (here: groups), pooled: rho from the ranks centred within each stratum, tau-b from the pair
 *    counts summed over strata, so only pairs inside one stratum are compared. With one stratum
 *    they equal the plain coefficients.
 *
 * Every coefficient is null when it is undefined (fewer than 2 values, or x or y constant over the
 * compared pairs), never NaN. Inputs must be finite and of equal length (LabError SHAPE_MISMATCH /
 * NON_FINITE otherwise).
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

export interface Paired {
  x: ArrayLike<number>;
  y: ArrayLike<number>;
}

function check(x: ArrayLike<number>, y: ArrayLike<number>): void {
  if (x.length !== y.length) {
    throw new LabError('SHAPE_MISMATCH', `rank correlation: x has ${x.length} values, y ${y.length}`, {
      details: { field: 'y' },
    });
  }
  for (const [name, v] of [
    ['x', x],
    ['y', y],
  ] as const) {
    let i = 0;
    while (i < v.length && Number.isFinite(v[i])) i++;
    if (i < v.length) {
      throw new LabError('NON_FINITE', `rank correlation: ${name}[${i}] is ${v[i]}`, {
        details: { field: name, row: i },
      });
    }
  }
}

/** Σ dx·dy, Σ dx², Σ dy² of the ranks centred within one stratum. */
function centredRankSums(x: ArrayLike<number>, y: ArrayLike<number>): [number, number, number] {
  const rx = averageRanks(x, 'x');
  const ry = averageRanks(y, 'y');
  const mean = (x.length + 1) / 2; // the mean of average ranks is always (n + 1) / 2
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < x.length; i++) {
    const dx = (rx[i] as number) - mean;
    const dy = (ry[i] as number) - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return [sxy, sxx, syy];
}

/** Spearman's rho with ties (Pearson of average ranks); null if undefined. */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  return stratifiedSpearman([{ x, y }]);
}

/** Spearman's rho pooled over strata (ranks centred within each stratum); null if undefined. */
export function stratifiedSpearman(strata: readonly Paired[]): number | null {
  return pooledCorrelation(strata, centredRankSums);
}

/**
 * The pooled form both coefficients share: with (cross, normX, normY) summed over the strata,
 * cross / sqrt(normX * normY), or null when either norm is 0 (x or y constant within every stratum).
 */
function pooledCorrelation(
  strata: readonly Paired[],
  perStratum: (x: ArrayLike<number>, y: ArrayLike<number>) => [number, number, number],
): number | null {
  let cross = 0;
  let normX = 0;
  let normY = 0;
  for (const s of strata) {
    check(s.x, s.y);
    const [a, b, c] = perStratum(s.x, s.y);
    cross += a;
    normX += b;
    normY += c;
  }
  return normX > 0 && normY > 0 ? cross / Math.sqrt(normX * normY) : null;
}

/** Pair counts of one stratum: C − D, n0 − n1, n0 − n2. O(n²), for groups. */
function pairCounts(x: ArrayLike<number>, y: ArrayLike<number>): [number, number, number] {
  let s = 0;
  let untiedX = 0;
  let untiedY = 0;
  for (let i = 0; i < x.length; i++) {
    for (let j = i + 1; j < x.length; j++) {
      const dx = Math.sign((x[j] as number) - (x[i] as number));
      const dy = Math.sign((y[j] as number) - (y[i] as number));
      s += dx * dy;
      if (dx !== 0) untiedX += 1;
      if (dy !== 0) untiedY += 1;
    }
  }
  return [s, untiedX, untiedY];
}

/** Kendall's tau-b; null if undefined. */
export function kendallTauB(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  return stratifiedKendallTauB([{ x, y }]);
}

/** Kendall's tau-b over the pairs within each stratum; null if undefined. */
export function stratifiedKendallTauB(strata: readonly Paired[]): number | null {
  return pooledCorrelation(strata, pairCounts);
}
