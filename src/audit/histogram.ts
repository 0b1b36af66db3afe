/**
 * The audit's row-level summaries (reward distribution, response length by correctness) computed
 * from `audit_hist`, the reader's histogram of the good rows: one row per distinct (reward, length)
 * with its count `n`. The reader builds it in the same scan as the groups (a second grouping set),
 * so no row-level values are kept. The answers are those of the row-level SQL they replace:
 *
 *  - reward distribution: `count(*) GROUP BY reward` when there are <= 20 distinct rewards, else
 *    10 equal-width bins `least(floor((r − min) / width), 9)` with width = (max − min) / 10;
 *  - length by correctness (correct: reward >= passValue): count, mean, and DuckDB's
 *    `quantile_cont(length, [0.5, 0.9])`, i.e. with the n lengths sorted (0-based), position
 *    h = (n − 1)·q and d = h − ⌊h⌋: x[h] when h is whole, else x[⌊h⌋]·(1 − d) + x[⌈h⌉]·d (type 7 of
 *    Hyndman and Fan, R's default, written as DuckDB rounds it), read off the cumulative counts. Lengths are integers (tokens or characters), so the mean
 *    Σ length·count / n is exact, as `avg(length)` is.
 */
import type { JsonValue } from '../experiments/types.js';
import type { DuckSession } from './duckdb.js';

/** Distinct rewards with their sample counts when there are at most 20, else 10 equal-width bins. */
export async function rewardDistribution(db: DuckSession): Promise<Record<string, JsonValue>[]> {
  const s = (
    await db.all('SELECT count(DISTINCT reward) AS k, min(reward) AS lo, max(reward) AS hi FROM audit_hist')
  )[0];
  const k = Number(s?.k ?? 0);
  if (k <= 20) {
    const rows = await db.all(
      'SELECT reward AS value, sum(n) AS n FROM audit_hist GROUP BY reward ORDER BY reward',
    );
    return rows.map((r) => ({ value: Number(r.value), samples: Number(r.n) }));
  }
  const lo = Number(s?.lo);
  const hi = Number(s?.hi);
  const width = (hi - lo) / 10;
  if (!Number.isFinite(width)) return halvedBins(db, lo, hi);
  const rows = await db.all(
    `SELECT least(CAST(floor((reward - ${lo}) / ${width}) AS INTEGER), 9) AS bin, sum(n) AS n
     FROM audit_hist GROUP BY 1 ORDER BY 1`,
  );
  return rows.map((r) => ({
    bin_lo: lo + Number(r.bin) * width,
    bin_hi: lo + (Number(r.bin) + 1) * width,
    samples: Number(r.n),
  }));
}

/**
 * The 10 equal-width bins when max − min overflows float64 (finite rewards beyond ±9e307 on both
 * sides): the same bins computed on halved values (halving is exact there), h = (max/2 − min/2) / 10
 * the half width, and each edge min + k·h + k·h, which stays finite (the last edge is max).
 */
async function halvedBins(db: DuckSession, lo: number, hi: number): Promise<Record<string, JsonValue>[]> {
  const half = (hi / 2 - lo / 2) / 10;
  const rows = await db.all(
    `SELECT least(CAST(floor((reward / 2 - ${lo / 2}) / ${half}) AS INTEGER), 9) AS bin, sum(n) AS n
     FROM audit_hist GROUP BY 1 ORDER BY 1`,
  );
  const edge = (k: number) => (k === 10 ? hi : lo + k * half + k * half);
  return rows.map((r) => ({
    bin_lo: edge(Number(r.bin)),
    bin_hi: edge(Number(r.bin) + 1),
    samples: Number(r.n),
  }));
}

export interface LengthByCorrectness {
  correct: boolean;
  samples: number;
  mean: number;
  median: number;
  p90: number;
}

/**
 * Count, mean, median and 90th percentile of the length of correct and of incorrect samples (rows
 * without a length left out), correct first. Shapes: one row per class present.
 */
export async function lengthByCorrectness(
  db: DuckSession,
  passValue: number,
): Promise<LengthByCorrectness[]> {
  // Per class: the positions h = (n − 1)·q, the values at ⌊h⌋ and ⌈h⌉ (the length whose run of
  // sorted positions [first, first + c) holds them), then x⌊h⌋·(1 − d) + x⌈h⌉·d with d = h − ⌊h⌋.
  const at = (pos: string) => `max(length) FILTER (WHERE first <= ${pos} AND ${pos} < first + c)`;
  const rows = await db.all(`
    WITH h AS (
      SELECT reward >= ${passValue} AS correct, length, sum(n) AS c
      FROM audit_hist WHERE length IS NOT NULL GROUP BY 1, 2),
    w AS (
      SELECT correct, length, c,
        sum(c) OVER (PARTITION BY correct ORDER BY length ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) - c AS first,
        sum(c) OVER (PARTITION BY correct) AS total
      FROM h),
    p AS (
      SELECT *, CAST(total - 1 AS DOUBLE) * CAST(0.5 AS DOUBLE) AS h50, CAST(total - 1 AS DOUBLE) * CAST(0.9 AS DOUBLE) AS h90
      FROM w),
    x AS (
      SELECT correct, any_value(total) AS samples, sum(length * c) / any_value(total) AS mean,
        any_value(h50) AS h50, ${at('floor(h50)')} AS lo50, ${at('ceil(h50)')} AS hi50,
        any_value(h90) AS h90, ${at('floor(h90)')} AS lo90, ${at('ceil(h90)')} AS hi90
      FROM p GROUP BY correct)
    SELECT correct, samples, mean,
      CASE WHEN floor(h50) = ceil(h50) THEN lo50 ELSE lo50 * (1 - (h50 - floor(h50))) + hi50 * (h50 - floor(h50)) END AS median,
      CASE WHEN floor(h90) = ceil(h90) THEN lo90 ELSE lo90 * (1 - (h90 - floor(h90))) + hi90 * (h90 - floor(h90)) END AS p90
    FROM x ORDER BY correct DESC`);
  return rows.map((r) => ({
    correct: Boolean(r.correct),
    samples: Number(r.samples),
    mean: Number(r.mean),
    median: Number(r.median),
    p90: Number(r.p90),
  }));
}
