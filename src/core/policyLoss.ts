/**
 * verl `compute_policy_loss_vanilla` (the PPO clipped surrogate with dual clip, registered as
 * `"vanilla"`; spec §5) and its analytic gradient with respect to the current log-probs.
 *
 * Per token, with `ℓ = clamp(lp − old, −L, L)` (L = logRatioClamp = 20), `r = exp(ℓ)`, `A` the
 * advantage, `ε_lo = clipRatioLow ?? clipRatio`, `ε_hi = clipRatioHigh ?? clipRatio`, `c = clipRatioC`:
 *
 *     p1 = −A·r,  p2 = −A·clamp(r, 1−ε_lo, 1+ε_hi),  q = max(p1, p2),  p3 = −A·c
 *     loss_tok = A < 0 ? min(p3, q) : q        (then × rollout IS weight w, if given)
 *     pg_loss  = aggLoss(loss_tok, m, mode, global batch info)
 *     pg_clipfrac       = masked_mean([p2 > p1], m)
 *     pg_clipfrac_lower = masked_mean([q > p3]·[A < 0], m)
 *     ppo_kl            = masked_mean(−ℓ, m)          masked_mean(x,m) = Σ x·m / (Σ m + 1e-8)
 *
 * The kernel makes one pass over the batch: the per-token loss, the metrics and the row sums of
 * every aggregation mode are accumulated together (float64), and the inputs are checked for
 * non-finite values through a running sum that a single non-finite entry turns into NaN; only
 * then a slow path names the offending field and position.
 */
import {
  type AggOptions,
  type AggSums,
  aggLossGrad,
  checkAggMode,
  finishAgg,
  type LossAggMode,
  resolveAggOptions,
  SEQ_TOKEN_MEAN_EPS,
} from './aggLoss.js';
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkShape,
  type FloatArray,
  type MaskArray,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';

/** Options of {@link policyLossVanilla}; verl's ActorConfig names in the comments. */
export interface VanillaLossOptions {
  /** `clip_ratio` ε, the fallback of both sides. Default 0.2. */
  clipRatio?: number;
  /** `clip_ratio_low`; `null` falls back to clipRatio (verl: None). */
  clipRatioLow?: number | null;
  /** `clip_ratio_high`; `null` falls back to clipRatio (DAPO's clip-higher sets e.g. 0.28). */
  clipRatioHigh?: number | null;
  /** `clip_ratio_c`, the dual-clip bound for negative advantages; must be > 1. Default 3.0. */
  clipRatioC?: number;
  /** Bound of the log-ratio clamp before exp (verl hard-codes 20). */
  logRatioClamp?: number;
  /** `loss_agg_mode`. Default 'token-mean'. */
  lossAggMode?: LossAggMode;
  /** `config.global_batch_info` splatted into agg_loss. */
  agg?: AggOptions;
  /** `rollout_is_weights` [B,T], multiplied into the per-token loss after clipping (metrics unaffected). */
  rolloutIsWeights?: FloatArray | null;
  /** Preallocated `[B,T]` buffer for `perTokenLoss` (reused across calls; saves the allocation). */
  out?: Float32Array | null;
}

export const VANILLA_DEFAULTS = {
  clipRatio: 0.2,
  clipRatioLow: null,
  clipRatioHigh: null,
  clipRatioC: 3.0,
  logRatioClamp: 20,
  lossAggMode: 'token-mean',
  agg: {},
  rolloutIsWeights: null,
  out: null,
} as const satisfies Required<VanillaLossOptions>;

/** verl's metrics dict, without the `actor/` prefix. */
export interface PolicyLossMetrics {
  pg_clipfrac: number;
  ppo_kl: number;
  pg_clipfrac_lower: number;
}

export interface PolicyLossResult {
  /** verl's `pg_loss`. */
  loss: number;
  /**
   * The per-token loss before aggregation `[B,T]` (IS weights applied). At masked positions it is
   * what verl computes from the padding values there (not forced to 0); aggregation ignores it.
   */
  perTokenLoss: Float32Array;
  metrics: PolicyLossMetrics;
}

/** Validated inputs shared by every policy loss (checked once at the entry). */
export interface PolicyInputs {
  rows: number;
  cols: number;
  weights: FloatArray | null;
}

/**
 * Shape/length checks of the policy-loss inputs (finite values are checked lazily, see the file
 * header). Throws SHAPE_MISMATCH naming the field.
 */
export function checkPolicyInputs(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  weights: FloatArray | null | undefined,
): PolicyInputs {
  checkShape(shape);
  const shapeText = `[${shape.rows},${shape.cols}]`;
  const n = shape.rows * shape.cols;
  checkLength(oldLogProb, n, 'old_log_prob', shapeText);
  checkLength(logProb, n, 'log_prob', shapeText);
  checkLength(advantages, n, 'advantages', shapeText);
  checkLength(responseMask, n, 'response_mask', shapeText);
  if (weights) checkLength(weights, n, 'rollout_is_weights', shapeText);
  return { rows: shape.rows, cols: shape.cols, weights: weights ?? null };
}

/** Names the first non-finite input where the mask is 1 (slow path of every policy loss). */
export function throwIfNonFiniteUnderMask(
  fields: ReadonlyArray<readonly [FloatArray | null, string]>,
  mask: MaskArray,
  cols: number,
): void {
  checkMask(mask, cols, 'response_mask');
  for (const [arr, name] of fields) if (arr) checkFiniteWhereMasked(arr, mask, cols, name);
}

function nonNegative(v: number, field: string): number {
  if (!Number.isFinite(v) || v < 0) {
    throw new LabError('BAD_ARGUMENT', `${field}: must be a finite number >= 0, got ${v}`, {
      details: { field, value: v },
    });
  }
  return v;
}

/** Clip parameters after the None fallback, validated. */
export interface ClipParams {
  low: number;
  high: number;
  c: number;
  clamp: number;
}

export function resolveClip(o: {
  clipRatio: number;
  clipRatioLow: number | null;
  clipRatioHigh: number | null;
  clipRatioC: number;
  logRatioClamp: number;
}): ClipParams {
  const eps = nonNegative(o.clipRatio, 'clip_ratio');
  const low = nonNegative(o.clipRatioLow ?? eps, 'clip_ratio_low');
  const high = nonNegative(o.clipRatioHigh ?? eps, 'clip_ratio_high');
  if (!(o.clipRatioC > 1) || !Number.isFinite(o.clipRatioC)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `clip_ratio_c: the lower bound of clip_ratio_c for dual-clip PPO must be greater than 1.0, got ${o.clipRatioC}`,
      { details: { field: 'clip_ratio_c', value: o.clipRatioC } },
    );
  }
  if (!(o.logRatioClamp > 0) || !Number.isFinite(o.logRatioClamp)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `log_ratio_clamp: must be a positive finite number, got ${o.logRatioClamp}`,
      {
        details: { field: 'log_ratio_clamp', value: o.logRatioClamp },
      },
    );
  }
  return { low, high, c: o.clipRatioC, clamp: o.logRatioClamp };
}

interface VanillaAcc {
  sums: AggSums;
  kl: number;
  clip: number;
  lower: number;
  /** 0 when every input and every mask entry was valid; NaN or > 0 otherwise. */
  check: number;
}

/** The fused pass. Writes `out`; returns the accumulators. */
function vanillaPass(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  mask: MaskArray,
  w: FloatArray | null,
  rows: number,
  cols: number,
  p: ClipParams,
  out: Float32Array,
): VanillaAcc {
  const lo = 1 - p.low;
  const hi = 1 + p.high;
  const c = p.c;
  const L = p.clamp;
  // The clip decisions are taken on ℓ against log bounds, so exp is only evaluated where the
  // surrogate is live (clipped tokens take the bound itself). exp is monotone, so the regions are
  // verl's up to rounding at the exact boundary (where both sides give the same loss value).
  const logLo = lo > 0 ? Math.log(lo) : Number.NEGATIVE_INFINITY;
  const logHi = Math.log(hi);
  const logC = Math.log(c);
  let sumAll = 0;
  let sumValidRows = 0;
  let sumRowMeans = 0;
  let validTokens = 0;
  let validRows = 0;
  let kl = 0;
  let clip = 0;
  let lower = 0;
  let check = 0;
  for (let b = 0; b < rows; b++) {
    const start = b * cols;
    const end = start + cols;
    let sum = 0;
    let n = 0;
    for (let i = start; i < end; i++) {
      const m = mask[i] as number;
      const a = adv[i] as number;
      const d = (lp[i] as number) - (old[i] as number);
      const l = Math.min(Math.max(d, -L), L);
      // verl: q = max(−A·r, −A·clamp(r, lo, hi)) = −A·min(r, hi) for A ≥ 0 and −A·max(r, lo) for
      // A < 0, where the dual clip then caps the ratio at c: −A·min(max(r, lo), c). (Multiplying
      // by the fixed −A is monotone, so this is the same float64 value as verl's max/min form.)
      let ratio = 0;
      let live = false;
      if (a < 0) {
        if (l < logLo) {
          ratio = lo;
          clip += m;
        } else if (l > logC) {
          ratio = c;
          lower += m;
        } else live = true;
      } else if (l > logHi) {
        ratio = hi;
        clip += a > 0 ? m : 0;
      } else live = true;
      if (live) ratio = Math.exp(l);
      let loss = -a * ratio;
      if (w !== null) {
        const wi = w[i] as number;
        loss *= wi; // after clipping, as verl
        check += wi - wi;
      }
      out[i] = loss;
      sum += loss * m;
      n += m;
      kl -= l * m;
      check += d - d + (a - a) + Math.abs(m * m - m);
    }
    sumAll += sum;
    validTokens += n;
    if (n > 0) {
      validRows++;
      sumValidRows += sum;
      sumRowMeans += sum / (n + SEQ_TOKEN_MEAN_EPS);
    }
  }
  return { sums: { sumAll, sumValidRows, sumRowMeans, validTokens, validRows }, kl, clip, lower, check };
}

/**
 * Exact aggregation when some value is non-finite (slow path): inputs under mask 1 are errors;
 * the rest follows verl (token-mean ignores masked positions, the other modes propagate NaN from
 * masked positions of valid rows, which the lab reports as NON_FINITE).
 */
function slowSums(
  perToken: Float32Array,
  mask: MaskArray,
  rows: number,
  cols: number,
  mode: LossAggMode,
): AggSums {
  const s: AggSums = { sumAll: 0, sumValidRows: 0, sumRowMeans: 0, validTokens: 0, validRows: 0 };
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    let sum = 0;
    let n = 0;
    for (let t = 0; t < cols; t++) {
      const m = mask[base + t] as number;
      const v = perToken[base + t] as number;
      n += m;
      if (m !== 0) sum += v;
    }
    if (mode !== 'token-mean' && (n > 0 || mode === 'seq-mean-token-sum-norm')) {
      for (let t = 0; t < cols; t++) {
        const v = perToken[base + t] as number;
        if (Number.isNaN(v)) {
          throw new LabError(
            'NON_FINITE',
            `log_prob/old_log_prob/advantages: the per-token loss at row ${b}, token ${t} (mask 0) is NaN, which makes the ${mode} loss NaN in verl (it multiplies loss by mask; only token-mean ignores masked values)`,
            { details: { field: 'log_prob', row: b, token: t, mode } },
          );
        }
      }
    }
    s.sumAll += sum;
    s.validTokens += n;
    if (n > 0) {
      s.validRows++;
      s.sumValidRows += sum;
      s.sumRowMeans += sum / (n + SEQ_TOKEN_MEAN_EPS);
    }
  }
  return s;
}

function maskedMetricSums(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  mask: MaskArray,
  p: ClipParams,
): { kl: number; clip: number; lower: number } {
  let kl = 0;
  let clip = 0;
  let lower = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    const a = adv[i] as number;
    const l = Math.min(Math.max((lp[i] as number) - (old[i] as number), -p.clamp), p.clamp);
    const r = Math.exp(l);
    const p1 = -a * r;
    const p2 = -a * Math.min(Math.max(r, 1 - p.low), 1 + p.high);
    const q = Math.max(p1, p2);
    kl -= l;
    if (p2 > p1) clip++;
    if (a < 0 && q > -a * p.c) lower++;
  }
  return { kl, clip, lower };
}

/**
 * verl `compute_policy_loss_vanilla(old_log_prob, log_prob, advantages, response_mask,
 * loss_agg_mode, config, rollout_is_weights)`; formulas in the file header. All arrays `[B,T]`.
 * Defaults {@link VANILLA_DEFAULTS}. Throws BAD_ARGUMENT (clip_ratio_c <= 1, negative ratios),
 * UNKNOWN_MODE, SHAPE_MISMATCH, BAD_MASK, NON_FINITE (a non-finite input where the mask is 1, or
 * padding that verl's non-token-mean modes would turn into NaN), EMPTY_MASK (verl: NaN).
 */
export function policyLossVanilla(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: VanillaLossOptions = {},
): PolicyLossResult {
  const o = { ...VANILLA_DEFAULTS, ...options };
  const { rows, cols, weights } = checkPolicyInputs(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    o.rolloutIsWeights,
  );
  checkAggMode(o.lossAggMode);
  const p = resolveClip(o);
  const agg = resolveAggOptions(o.agg);
  let perTokenLoss: Float32Array;
  if (o.out) {
    checkLength(o.out, rows * cols, 'out', `[${rows},${cols}]`);
    perTokenLoss = o.out;
  } else {
    perTokenLoss = new Float32Array(rows * cols);
  }
  const acc = vanillaPass(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    weights,
    rows,
    cols,
    p,
    perTokenLoss,
  );
  let { sums, kl, clip, lower } = acc;
  if (acc.check !== 0 || !Number.isFinite(sums.sumAll)) {
    throwIfNonFiniteUnderMask(
      [
        [oldLogProb, 'old_log_prob'],
        [logProb, 'log_prob'],
        [advantages, 'advantages'],
        [weights, 'rollout_is_weights'],
      ],
      responseMask,
      cols,
    );
    sums = slowSums(perTokenLoss, responseMask, rows, cols, o.lossAggMode);
    ({ kl, clip, lower } = maskedMetricSums(oldLogProb, logProb, advantages, responseMask, p));
  }
  const loss = finishAgg(o.lossAggMode, agg, sums, cols, 'response_mask');
  const denom = sums.validTokens + 1e-8;
  return {
    loss,
    perTokenLoss,
    metrics: { pg_clipfrac: clip / denom, ppo_kl: kl / denom, pg_clipfrac_lower: lower / denom },
  };
}

/**
 * {@link policyLossVanilla} plus `grad[b,t] = ∂pg_loss/∂log_prob[b,t]` (`Float64Array [B,T]`):
 * the piecewise derivative of the per-token surrogate times `∂agg/∂loss_tok` ({@link aggLossGrad}).
 * Per token (ties split half/half, as torch's maximum/minimum backward):
 * `∂r/∂lp = r` inside the log-ratio clamp, 0 outside; `∂q/∂lp = −A·r` when p1 is the max (p2 is
 * constant once clamp(r) saturates), 0 when p2 > p1; for `A < 0`, 0 when the dual clip p3 < q;
 * times the IS weight. Masked positions get 0.
 */
export function policyLossVanillaGrad(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: VanillaLossOptions = {},
): PolicyLossResult & { grad: Float64Array } {
  const result = policyLossVanilla(oldLogProb, logProb, advantages, responseMask, shape, options);
  const o = { ...VANILLA_DEFAULTS, ...options };
  const p = resolveClip(o);
  const grad = aggLossGrad(responseMask, shape, o.lossAggMode, o.agg);
  const w = o.rolloutIsWeights ?? null;
  const lo = 1 - p.low;
  const hi = 1 + p.high;
  for (let i = 0; i < grad.length; i++) {
    const g = grad[i] as number;
    if (g === 0) continue;
    const a = advantages[i] as number;
    const d = (logProb[i] as number) - (oldLogProb[i] as number);
    const l = Math.min(Math.max(d, -p.clamp), p.clamp);
    const r = Math.exp(l);
    const drdlp = d >= -p.clamp && d <= p.clamp ? r : 0;
    const p1 = -a * r;
    const rc = Math.min(Math.max(r, lo), hi);
    const p2 = -a * rc;
    const q = Math.max(p1, p2);
    // d p2 / d r: clamp passes the gradient where lo <= r <= hi (torch clamp backward)
    const dp2 = r >= lo && r <= hi ? -a : 0;
    let dq = p1 > p2 ? -a : p1 < p2 ? dp2 : 0.5 * (-a + dp2);
    if (a < 0) {
      const p3 = -a * p.c;
      dq = q < p3 ? dq : q > p3 ? 0 : 0.5 * dq;
    }
    grad[i] = g * dq * drdlp * (w ? (w[i] as number) : 1);
  }
  return { ...result, grad };
}
