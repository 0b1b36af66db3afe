/**
 * Rank correlations for the ranker audit (pure functions over plain arrays).
 *
 *  - `averageRanks(x)`: 1-based ranks, ties given the mean of the ranks they span.
 *  - `spearman(x, y)`: Pearson correlation of the average ranks (Spearman's rho with ties).
 *  - `kendallTauB(x, y)`: (C − D) / sqrt((n0 − n1)(n0 − n2)), n0 = n(n−1)/2 pairs, n1 / n2 the
 *    pairs tied in x / in y, C / D the concordant / discordant pairs (Kendall's tau-b).
 *  - `stratifiedSpearman(strata)` and `stratifiedKendallTauB(strata)`: the same within strata
 *    (here: groups), pooled: rho from the ranks centred within each stratum, tau-b from the pair
 *    counts summed over strata, so only pairs inside one stratum are compared. With one stratum
 *    they equal the plain coefficients.
 *
 * Every function returns null when the coefficient is undefined (fewer than 2 values, or x or y
 * constant over the compared pairs), never NaN. Inputs must be finite and of equal length
 * (LabError BAD_ARGUMENT / NON_FINITE otherwise).
 */
import { LabError } from '../core/errors.js';

export interface Paired {
  x: readonly number[];
  y: readonly number[];
}

function check(x: readonly number[], y: readonly number[]): void {
  if (x.length !== y.length) {
    throw new LabError('SHAPE_MISMATCH', `rank correlation: x has ${x.length} values, y ${y.length}`, {
      details: { field: 'y' },
    });
  }
  for (const [name, v] of [
    ['x', x],
    ['y', y],
  ] as const) {
    const i = v.findIndex((e) => !Number.isFinite(e));
    if (i >= 0) {
      throw new LabError('NON_FINITE', `rank correlation: ${name}[${i}] is ${v[i]}`, {
        details: { field: name, row: i },
      });
    }
  }
}

/** 1-based ranks with ties averaged (x = [10, 20, 20, 5] -> [2, 3.5, 3.5, 1]). */
export function averageRanks(x: readonly number[]): number[] {
  const order = x.map((_, i) => i).sort((a, b) => (x[a] as number) - (x[b] as number));
  const ranks = new Array<number>(x.length);
  let i = 0;
  while (i < order.length) {
    let j = i;
    while (j + 1 < order.length && x[order[j + 1] as number] === x[order[i] as number]) j += 1;
    const rank = (i + j) / 2 + 1;
    for (let k = i; k <= j; k++) ranks[order[k] as number] = rank;
    i = j + 1;
  }
  return ranks;
}

/** Σ dx·dy, Σ dx², Σ dy² of the ranks centred within one stratum. */
function centredRankSums(x: readonly number[], y: readonly number[]): [number, number, number] {
  const rx = averageRanks(x);
  const ry = averageRanks(y);
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
export function spearman(x: readonly number[], y: readonly number[]): number | null {
  return stratifiedSpearman([{ x, y }]);
}

/** Spearman's rho pooled over strata (ranks centred within each stratum); null if undefined. */
export function stratifiedSpearman(strata: readonly Paired[]): number | null {
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (const s of strata) {
    check(s.x, s.y);
    const [a, b, c] = centredRankSums(s.x, s.y);
    sxy += a;
    sxx += b;
    syy += c;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}

/** Pair counts of one stratum: C − D, n0 − n1, n0 − n2. O(n²), for groups. */
function pairCounts(x: readonly number[], y: readonly number[]): [number, number, number] {
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
export function kendallTauB(x: readonly number[], y: readonly number[]): number | null {
  return stratifiedKendallTauB([{ x, y }]);
}

/** Kendall's tau-b over the pairs within each stratum; null if undefined. */
export function stratifiedKendallTauB(strata: readonly Paired[]): number | null {
  let s = 0;
  let ux = 0;
  let uy = 0;
  for (const st of strata) {
    check(st.x, st.y);
    const [a, b, c] = pairCounts(st.x, st.y);
    s += a;
    ux += b;
    uy += c;
  }
  return ux > 0 && uy > 0 ? s / Math.sqrt(ux * uy) : null;
}
