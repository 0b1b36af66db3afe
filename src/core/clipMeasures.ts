/**
 * What the clipped surrogate bounds and what it does not, measured exactly (course: "the clip caps
 * the gain on one side of the surrogate — it does not guarantee a bounded parameter update or a
 * hard bound on the true KL"). Pure kernels over typed arrays; the clip experiment calls them after
 * every PPO epoch.
 *
 * - {@link trueKlAtPositions}: the exact `KL(pi_old || pi_new)` over the whole vocabulary at every
 *   visited position of a batch — its mean over positions (the quantity verl's `ppo_kl`, a k1 sample
 *   estimate, targets) and its maximum;
 * - {@link ratioStats} / {@link ratioHistogram}: the distribution of `r = pi_new/pi_old` over the
 *   batch's tokens (max, p99, fraction outside `[1 − ε_low, 1 + ε_high]`);
 * - {@link clippedMovedFurther}: tokens whose surrogate was clipped (zero gradient of their own)
 *   before a step and whose ratio moved further out of the band after it — with Adam mostly through
 *   its momentum (the first moment keeps stepping the token's own parameter while its own gradient
 *   is 0), and with any optimizer through the softmax normalisation of the context (and, in a neural
 *   model, shared parameters);
 * - {@link l2Distance}: the parameter update norm `||θ_new − θ_old||₂`.
 *
 * Log-prob tables are row-major `[R, V]` (float64): one row per context of a tabular policy, or one
 * row per position of a sequence model. `rowOf[i]` says which row position `i` of a `[B,T]` batch
 * reads, so the same kernel serves both.
 */
import { checkLength, checkMask, checkShape, type FloatArray, type MaskArray, type Shape2 } from './batch.js';
import { LabError } from './errors.js';
import { quantileOfSorted } from './stats.js';

/**
 * Exact `KL(P || Q) = Σ_v p_v (log p_v − log q_v)` of two categorical rows given as log-probs,
 * `logP[offset .. offset+vocab)` and `logQ[...]` (p_v = exp(log p_v); a term with p_v = 0 is 0).
 * Non-negative up to rounding; clamped at 0 so rounding never reports a negative divergence.
 */
export function categoricalKl(logP: FloatArray, logQ: FloatArray, offset: number, vocab: number): number {
  let kl = 0;
  for (let v = offset; v < offset + vocab; v++) {
    const lp = logP[v] as number;
    if (lp === Number.NEGATIVE_INFINITY) continue;
    kl += Math.exp(lp) * (lp - (logQ[v] as number));
  }
  return Math.max(kl, 0);
}

export interface TrueKl {
  /** Mean over mask-1 positions of the exact per-position KL (positions weighted equally). */
  mean: number;
  /** Largest per-position KL. */
  max: number;
  /** Mask-1 positions counted. */
  positions: number;
}

function checkTables(
  oldLog: FloatArray,
  newLog: FloatArray,
  vocab: number,
  fieldOld: string,
  fieldNew: string,
): number {
  if (!Number.isInteger(vocab) || vocab < 2) {
    throw new LabError('BAD_ARGUMENT', `vocab: expected an integer >= 2, got ${vocab}`, {
      details: { field: 'vocab', value: vocab },
    });
  }
  if (oldLog.length === 0 || oldLog.length % vocab !== 0) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${fieldOld}: expected a non-empty multiple of vocab ${vocab} values, got ${oldLog.length}`,
      { details: { field: fieldOld, actual: oldLog.length } },
    );
  }
  if (newLog.length !== oldLog.length) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${fieldNew}: expected ${oldLog.length} values (as ${fieldOld}), got ${newLog.length}`,
      { details: { field: fieldNew, expected: oldLog.length, actual: newLog.length } },
    );
  }
  return oldLog.length / vocab;
}

/**
 * Exact `KL(pi_old || pi_new)` at every mask-1 position of a `[B,T]` batch: position `i` reads row
 * `rowOf[i]` of the `[R, V]` log-prob tables `oldLog`, `newLog` ({@link categoricalKl}); returns the
 * mean over positions and the maximum. Each row's KL is computed once. Errors: SHAPE_MISMATCH,
 * BAD_MASK, BAD_ARGUMENT (a row index outside `[0, R)`, naming row and token), EMPTY_MASK (no
 * position to average over), NON_FINITE (a KL that is not finite, e.g. a −Infinity log-prob in
 * `newLog` where `oldLog` has mass).
 */
export function trueKlAtPositions(
  oldLog: FloatArray,
  newLog: FloatArray,
  vocab: number,
  rowOf: ArrayLike<number>,
  mask: MaskArray,
  shape: Shape2,
): TrueKl {
  const rows = checkTables(oldLog, newLog, vocab, 'old_log_probs', 'new_log_probs');
  checkShape(shape);
  const n = shape.rows * shape.cols;
  const shapeText = `[${shape.rows},${shape.cols}]`;
  checkLength(mask, n, 'response_mask', shapeText);
  checkLength(rowOf, n, 'row_of', shapeText);
  checkMask(mask, shape.cols, 'response_mask');
  const cache = new Float64Array(rows).fill(Number.NaN);
  let sum = 0;
  let max = 0;
  let count = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const r = rowOf[i] as number;
    if (!(Number.isInteger(r) && r >= 0 && r < rows)) {
      throw new LabError(
        'BAD_ARGUMENT',
        `row_of: row ${r} at row ${Math.floor(i / shape.cols)}, token ${i % shape.cols} is outside [0, ${rows})`,
        { details: { field: 'row_of', row: Math.floor(i / shape.cols), token: i % shape.cols, value: r } },
      );
    }
    let kl = cache[r] as number;
    if (Number.isNaN(kl)) {
      kl = categoricalKl(oldLog, newLog, r * vocab, vocab);
      if (!Number.isFinite(kl)) {
        throw new LabError(
          'NON_FINITE',
          `KL at table row ${r} is ${kl} (new_log_probs has no mass where old has)`,
          {
            details: { field: 'new_log_probs', row: r },
          },
        );
      }
      cache[r] = kl;
    }
    sum += kl;
    if (kl > max) max = kl;
    count++;
  }
  if (count === 0) {
    throw new LabError('EMPTY_MASK', 'response_mask: no position with mask 1 to measure the KL at', {
      details: { field: 'response_mask' },
    });
  }
  return { mean: sum / count, max, positions: count };
}

/** The band `[1 − low, 1 + high]` a ratio is compared with (verl's clip_ratio_low / clip_ratio_high). */
export interface RatioBand {
  low: number;
  high: number;
}

export interface RatioStats {
  /** Largest `r = exp(log_prob − old_log_prob)` over mask-1 tokens. */
  max: number;
  /** Smallest ratio. */
  min: number;
  /** 99th percentile (numpy's linear quantile). */
  p99: number;
  /** Fraction of mask-1 tokens with `r < 1 − low` or `r > 1 + high` (strictly outside). */
  fracOutside: number;
  tokens: number;
}

function checkPair(oldLogProb: FloatArray, logProb: FloatArray, mask: MaskArray, shape: Shape2): number {
  checkShape(shape);
  const n = shape.rows * shape.cols;
  const shapeText = `[${shape.rows},${shape.cols}]`;
  checkLength(oldLogProb, n, 'old_log_prob', shapeText);
  checkLength(logProb, n, 'log_prob', shapeText);
  checkLength(mask, n, 'response_mask', shapeText);
  checkMask(mask, shape.cols, 'response_mask');
  return n;
}

/** The ratios `exp(lp − old)` of the mask-1 tokens, in batch order; NON_FINITE names a bad position. */
function maskedRatios(old: FloatArray, lp: FloatArray, mask: MaskArray, shape: Shape2): Float64Array {
  const n = shape.rows * shape.cols;
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const r = Math.exp((lp[i] as number) - (old[i] as number));
    if (!Number.isFinite(r)) {
      throw new LabError(
        'NON_FINITE',
        `ratio at row ${Math.floor(i / shape.cols)}, token ${i % shape.cols} is ${r} (log_prob ${lp[i]}, old_log_prob ${old[i]})`,
        { details: { field: 'log_prob', row: Math.floor(i / shape.cols), token: i % shape.cols } },
      );
    }
    out.push(r);
  }
  return Float64Array.from(out);
}

/**
 * {@link RatioStats} of `r = exp(logProb − oldLogProb)` over the mask-1 tokens of a `[B,T]` batch,
 * against `band`. The ratio is the true one (no ±20 log-ratio clamp: that only matters beyond e^20).
 * Errors: SHAPE_MISMATCH, BAD_MASK, BAD_ARGUMENT (negative band), EMPTY_MASK, NON_FINITE.
 */
export function ratioStats(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  band: RatioBand,
): RatioStats {
  checkPair(oldLogProb, logProb, mask, shape);
  if (!(band.low >= 0 && band.high >= 0)) {
    throw new LabError('BAD_ARGUMENT', `band: low and high must be >= 0, got ${band.low}, ${band.high}`, {
      details: { field: 'band' },
    });
  }
  const ratios = maskedRatios(oldLogProb, logProb, mask, shape);
  if (ratios.length === 0) {
    throw new LabError('EMPTY_MASK', 'response_mask: no token with mask 1 to measure ratios at', {
      details: { field: 'response_mask' },
    });
  }
  const lo = 1 - band.low;
  const hi = 1 + band.high;
  let outside = 0;
  for (const r of ratios) if (r < lo || r > hi) outside++;
  ratios.sort();
  return {
    max: ratios[ratios.length - 1] as number,
    min: ratios[0] as number,
    p99: quantileOfSorted(ratios, 0.99),
    fracOutside: outside / ratios.length,
    tokens: ratios.length,
  };
}

/**
 * Fraction of mask-1 tokens whose ratio falls in each bin `[edges[k], edges[k+1])` (the last bin
 * closed above only by its edge; a ratio outside all bins is not counted, so pass 0 and Infinity as
 * the outer edges to count everything). `edges` ascending, at least 2. Errors as {@link ratioStats}.
 */
export function ratioHistogram(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  edges: readonly number[],
): number[] {
  checkPair(oldLogProb, logProb, mask, shape);
  if (edges.length < 2 || edges.some((e, k) => k > 0 && !(e > (edges[k - 1] as number)))) {
    throw new LabError(
      'BAD_ARGUMENT',
      `edges: expected at least 2 ascending values, got [${edges.join(', ')}]`,
      {
        details: { field: 'edges' },
      },
    );
  }
  const ratios = maskedRatios(oldLogProb, logProb, mask, shape);
  if (ratios.length === 0) {
    throw new LabError('EMPTY_MASK', 'response_mask: no token with mask 1 to bin', {
      details: { field: 'response_mask' },
    });
  }
  const counts = new Array<number>(edges.length - 1).fill(0);
  for (const r of ratios) {
    for (let k = 0; k < counts.length; k++) {
      if (r >= (edges[k] as number) && r < (edges[k + 1] as number)) {
        counts[k] = (counts[k] as number) + 1;
        break;
      }
    }
  }
  return counts.map((c) => c / ratios.length);
}

/** Clip parameters of verl's vanilla loss as the clip region test needs them. */
export interface ClipRegion {
  /** ε_low: a negative-advantage token is clipped below `1 − low`. */
  low: number;
  /** ε_high: a positive-advantage token is clipped above `1 + high`. */
  high: number;
  /** Dual-clip bound c (> 1): a negative-advantage token is clipped above c. */
  c: number;
}

export interface ClippedMoves {
  /** Mask-1 tokens whose surrogate was clipped (zero own gradient) before the step. */
  clipped: number;
  /** Of those, the tokens whose ratio moved further out of the band after the step. */
  movedFurther: number;
}

/**
 * Tokens that were clipped before an optimizer step and moved further out after it. With
 * `d = lpBefore − old` and advantage `A` (verl's vanilla regions, decided on the log-ratio):
 * - `A > 0`, `d > log(1 + high)` (counted in `pg_clipfrac`): further out when `lpAfter > lpBefore`;
 * - `A < 0`, `d < log(1 − low)` (counted in `pg_clipfrac`): further out when `lpAfter < lpBefore`;
 * - `A < 0`, `d > log c` (dual clip, `pg_clipfrac_lower`): further out when `lpAfter > lpBefore`.
 * In all three the token's own loss term has zero gradient, so a further move comes from the
 * optimizer's state (Adam's momentum keeps stepping in the direction of earlier gradients: the main
 * cause in the clip experiment, whose share falls from 80% to 44% with β1 = 0) or from other tokens
 * through the softmax normalisation and shared parameters (all that SGD has). `[B,T]` arrays; the
 * mask is 0/1.
 */
export function clippedMovedFurther(
  oldLogProb: FloatArray,
  lpBefore: FloatArray,
  lpAfter: FloatArray,
  advantages: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  clip: ClipRegion,
): ClippedMoves {
  const n = checkPair(oldLogProb, lpBefore, mask, shape);
  const shapeText = `[${shape.rows},${shape.cols}]`;
  checkLength(lpAfter, n, 'log_prob_after', shapeText);
  checkLength(advantages, n, 'advantages', shapeText);
  if (!(clip.low >= 0 && clip.high >= 0 && clip.c > 1)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `clip: expected low >= 0, high >= 0, c > 1, got ${clip.low}, ${clip.high}, ${clip.c}`,
      { details: { field: 'clip' } },
    );
  }
  const logLo = clip.low < 1 ? Math.log(1 - clip.low) : Number.NEGATIVE_INFINITY;
  const logHi = Math.log(1 + clip.high);
  const logC = Math.log(clip.c);
  let clipped = 0;
  let further = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    const a = advantages[i] as number;
    const before = lpBefore[i] as number;
    const after = lpAfter[i] as number;
    const d = before - (oldLogProb[i] as number);
    if (a > 0 && d > logHi) {
      clipped++;
      if (after > before) further++;
    } else if (a < 0 && d < logLo) {
      clipped++;
      if (after < before) further++;
    } else if (a < 0 && d > logC) {
      clipped++;
      if (after > before) further++;
    }
  }
  return { clipped, movedFurther: further };
}

/** `||a − b||₂` of two parameter vectors of equal length (SHAPE_MISMATCH otherwise). */
export function l2Distance(a: FloatArray, b: FloatArray): number {
  if (a.length !== b.length) {
    throw new LabError('SHAPE_MISMATCH', `parameters: ${a.length} vs ${b.length} values`, {
      details: { field: 'parameters', expected: a.length, actual: b.length },
    });
  }
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = (a[i] as number) - (b[i] as number);
    s += d * d;
  }
  return Math.sqrt(s);
}
