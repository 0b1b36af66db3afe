/**
 * verl `compute_policy_loss_vanilla` (the PPO clipped surrogate with dual clip, registered as
 * `"vanilla"`; docs/verl-semantics.md §5) and its analytic gradient with respect to the current log-probs.
 *
 * Per token, with `ℓ = clamp(lp − old, −L, L)` (L = logRatioClamp = 20), `r = exp(ℓ)`, `A` the
 * advantage, `ε_lo = clipRatioLow ?? clipRatio`, `ε_hi = clipRatioHigh ?? clipRatio`, `c = clipRatioC`:
 *
 *     p1 = −A·r,  p2 = −A·clamp(r, 1−ε_lo, 1+ε_hi),  q = max(p1, p2),  p3 = −A·c
 *     loss_tok = A < 0 ? min(p3, q) : q        (then × rollout IS weight w, if given)
 *     pg_loss  = agg_loss(loss_tok, m, mode, global batch info)
 *     pg_clipfrac       = masked_mean([p2 > p1], m)
 *     pg_clipfrac_lower = masked_mean([q > p3]·[A < 0], m)
 *     ppo_kl            = masked_mean(−ℓ, m)          masked_mean(x,m) = Σ x·m / (Σ m + 1e-8)
 *
 * The kernel makes one pass over the batch: the per-token loss, the metrics and the row sums of
 * every aggregation mode are accumulated together (float64), and the inputs are checked for
 * non-finite values through a running sum that a single non-finite entry turns into NaN; only
 * then a slow path names the offending field and position. Padding tokens cost no exp.
 */
import {
  AGG_SUM_SLOTS,
  type AggOptions,
  type AggSums,
  addAggSums,
  addRowSums,
  aggLossGrad,
  aggSumsOf,
  checkAggMode,
  finishAgg,
  type LossAggMode,
  resolveAggOptions,
} from './aggLoss.js';
import {
  checkOutNotAliased,
  type FloatArray,
  type MaskArray,
  outputBuffer,
  outputBuffer64,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { fastExp } from './fastExp.js';
import { lossSimdKernel, simdEligible, type VanillaChunk } from './lossSimd.js';
import { maskedMeanOf } from './maskedPrimitives.js';
import {
  checkLossOutput,
  checkPolicyInputs,
  type PolicyLossInputs,
  type PolicyLossMetrics,
  throwIfNonFiniteUnderMask,
} from './policyLossInputs.js';

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
  /** {@link policyLossVanillaGrad} only: a preallocated `[B,T]` Float64Array for `grad`. */
  outGrad?: Float64Array | null;
}

/** verl's ActorConfig defaults: clip 0.2 both sides, dual clip c = 3, log-ratio clamp 20, token-mean. */
export const VANILLA_DEFAULTS = Object.freeze({
  clipRatio: 0.2,
  clipRatioLow: null,
  clipRatioHigh: null,
  clipRatioC: 3.0,
  logRatioClamp: 20,
  lossAggMode: 'token-mean',
  agg: Object.freeze({}),
  rolloutIsWeights: null,
  out: null,
  outGrad: null,
} as const satisfies Required<VanillaLossOptions>);

export interface PolicyLossResult {
  /** verl's `pg_loss`. */
  loss: number;
  /**
   * The per-token loss before aggregation `[B,T]` (IS weights applied); 0 at mask-0 positions
   * (verl computes a value there from the padding, which aggregation then ignores).
   */
  perTokenLoss: Float32Array;
  metrics: PolicyLossMetrics;
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
  /** 0 when every input and every mask entry was valid; NaN or non-zero otherwise. */
  check: number;
}

/**
 * One call's validated arguments, as both {@link vanillaPass} and its slow path {@link vanillaSlow}
 * take them: the four `[B,T]` inputs, the IS weights (or null), the shape, the clip settings and
 * the aggregation mode.
 */
interface VanillaArgs {
  old: FloatArray;
  lp: FloatArray;
  adv: FloatArray;
  mask: MaskArray;
  w: FloatArray | null;
  rows: number;
  cols: number;
  p: ClipParams;
  mode: LossAggMode;
}

/** Tokens per call of {@link vanillaRows} (see there). */
const TOKENS_PER_CALL = 16384;

/**
 * The fused pass. Writes `out` (0 at mask-0 positions) and returns the accumulators.
 *
 * Padding costs no exp: under token-mean a mask-0 token is not even read (verl ignores it); under
 * the other modes only its inputs are checked for finiteness (`x − x` is NaN exactly when x is not
 * finite), which is all verl's result can depend on there (a non-finite padded loss makes verl's
 * loss NaN, see {@link vanillaSlow}).
 * A valid token adds `(m − 1)²` to the check: non-negative, so two bad entries cannot cancel (0.5 and
 * 1.5 would with `m − 1`), and non-zero for any mask value other than 0 or 1.
 */
function vanillaPass(args: VanillaArgs, out: Float32Array, engine: VanillaEngine = 'auto'): VanillaAcc {
  const { old, lp, adv, mask, w, rows, cols, p, mode } = args;
  // token-mean ignores padding entirely (as verl); the other modes need its values checked
  const padCheck = mode !== 'token-mean';
  const lo = 1 - p.low;
  const hi = 1 + p.high;
  // The clip decisions are taken on ℓ against log bounds, so exp is only evaluated where the
  // surrogate is live (clipped tokens take the bound itself). exp is monotone, so the regions are
  // verl's up to rounding at the exact boundary (where both sides give the same loss value).
  const bounds = Float64Array.of(
    lo,
    hi,
    p.c,
    p.clamp,
    lo > 0 ? Math.log(lo) : Number.NEGATIVE_INFINITY,
    Math.log(hi),
    Math.log(p.c),
  );
  const acc = new Float64Array(ACC_SLOTS);
  const step = Math.max(1, Math.floor(TOKENS_PER_CALL / cols));
  const simd =
    engine === 'js' ? null : simdEligible([old, lp, adv, w], mask, p.clamp) ? lossSimdKernel() : null;
  for (let b = 0; b < rows; b += step) {
    const b1 = Math.min(rows, b + step);
    if (simd) {
      const chunk = simd.run(
        old as Float32Array,
        lp as Float32Array,
        adv as Float32Array,
        mask as Float32Array | Uint8Array,
        w as Float32Array | null,
        b,
        b1,
        cols,
        bounds,
        padCheck,
        out,
      );
      addChunk(chunk, b1 - b, acc);
    } else vanillaRows(old, lp, adv, mask, w, b, b1, cols, bounds, padCheck, out, acc);
  }
  return {
    sums: aggSumsOf(acc),
    kl: acc[KL] as number,
    clip: acc[CLIP] as number,
    lower: acc[LOWER] as number,
    check: acc[CHECK] as number,
  };
}

/**
 * Adds the SIMD kernel's results for one chunk of `rows` rows into `acc`, combining the row sums in
 * the same order and with the same operations as the end of {@link vanillaRows} (so both passes give
 * the same float64 sums).
 */
function addChunk(chunk: VanillaChunk, rows: number, acc: Float64Array): void {
  addRowSums(chunk.rowSum, chunk.rowCount, rows, acc);
  acc[KL] = (acc[KL] as number) + chunk.kl;
  acc[CLIP] = (acc[CLIP] as number) + chunk.clip;
  acc[LOWER] = (acc[LOWER] as number) + chunk.lower;
  acc[CHECK] = (acc[CHECK] as number) + chunk.check;
}

/** Accumulator slots of {@link vanillaRows}: the {@link AggSums} (see addAggSums), then kl, clip, lower, check. */
const KL = AGG_SUM_SLOTS;
const CLIP = KL + 1;
const LOWER = KL + 2;
const CHECK = KL + 3;
const ACC_SLOTS = KL + 4;

/**
 * 0 when every value of `old`, `lp`, `adv` (and `w`) in `[from, to)` is finite, NaN otherwise: the
 * values are summed in float64 (float32 inputs cannot overflow there; a float64 input that does only
 * sends the caller to the exact slow path), in two independent sums so that the loop is bound by
 * the loads rather than by the latency of one running addition.
 */
function paddingCheck(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  w: FloatArray | null,
  from: number,
  to: number,
): number {
  let s0 = 0;
  let s1 = 0;
  let i = from;
  for (; i + 1 < to; i += 2) {
    s0 += (lp[i] as number) + (old[i] as number) + (adv[i] as number);
    s1 += (lp[i + 1] as number) + (old[i + 1] as number) + (adv[i + 1] as number);
  }
  if (i < to) s0 += (lp[i] as number) + (old[i] as number) + (adv[i] as number);
  if (w !== null) for (let j = from; j < to; j++) s1 += w[j] as number;
  const s = s0 + s1;
  return s - s;
}

/**
 * Rows `[b0, b1)` of the fused pass, adding into `acc`. The batch is cut into calls of about
 * {@link TOKENS_PER_CALL} tokens so that V8 optimises this function as a whole after a few calls;
 * one call per batch would run through on-stack replacement, whose code deoptimises at the loop
 * exit on every call.
 */
function vanillaRows(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  mask: MaskArray,
  w: FloatArray | null,
  b0: number,
  b1: number,
  cols: number,
  bounds: Float64Array,
  padCheck: boolean,
  out: Float32Array,
  acc: Float64Array,
): void {
  const lo = bounds[0] as number;
  const hi = bounds[1] as number;
  const c = bounds[2] as number;
  const L = bounds[3] as number;
  const logLo = bounds[4] as number;
  const logHi = bounds[5] as number;
  const logC = bounds[6] as number;
  let sumAll = 0;
  let sumValidRows = 0;
  let sumRowMeans = 0;
  let validTokens = 0;
  let validRows = 0;
  let kl = 0;
  let clip = 0;
  let lower = 0;
  let check = 0;
  for (let b = b0; b < b1; b++) {
    const start = b * cols;
    const rowEnd = start + cols;
    // The right-padding tail is filled in bulk (and, where verl multiplies padding in, checked);
    // holes inside the row take the per-token branch below.
    let end = rowEnd;
    while (end > start && mask[end - 1] === 0) end--;
    if (end < rowEnd) {
      out.fill(0, end, rowEnd);
      if (padCheck) check += paddingCheck(old, lp, adv, w, end, rowEnd);
    }
    let sum = 0;
    let n = 0;
    for (let i = start; i < end; i++) {
      const m = mask[i] as number;
      if (m === 0) {
        out[i] = 0;
        if (padCheck) {
          const dp = (lp[i] as number) - (old[i] as number);
          const ap = adv[i] as number;
          check += dp - dp + (ap - ap);
          if (w !== null) check += (w[i] as number) - (w[i] as number);
        }
        continue;
      }
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
          clip++;
        } else if (l > logC) {
          ratio = c;
          lower++;
        } else live = true;
      } else if (a === 0) {
        // zero advantage (all-equal GRPO groups): the loss is −0·r = −0 for any r; no exp
        ratio = 1;
      } else if (l > logHi) {
        ratio = hi;
        clip++;
      } else live = true;
      if (live) ratio = fastExp(l);
      let loss = -a * ratio;
      if (w !== null) {
        const wi = w[i] as number;
        loss *= wi; // after clipping, as verl
        check += wi - wi;
      }
      out[i] = loss;
      sum += loss;
      n++;
      kl -= l;
      check += d - d + (a - a) + (m - 1) * (m - 1);
    }
    sumAll += sum;
    validTokens += n;
    if (n > 0) {
      validRows++;
      sumValidRows += sum;
      sumRowMeans += maskedMeanOf(sum, n);
    }
  }
  addAggSums(acc, sumAll, sumValidRows, sumRowMeans, validTokens, validRows);
  acc[KL] = (acc[KL] as number) + kl;
  acc[CLIP] = (acc[CLIP] as number) + clip;
  acc[LOWER] = (acc[LOWER] as number) + lower;
  acc[CHECK] = (acc[CHECK] as number) + check;
}

/**
 * Slow path, taken only when the fast pass met a non-finite value or a mask entry other than 0/1:
 * names a bad mask entry or a non-finite input under mask 1; otherwise the non-finite values sit in
 * padding, where verl's token-mean ignores them (the fast result stands) and its other modes
 * multiply `loss·m`, so a non-finite padded loss in a row that counts makes verl's loss NaN: the lab
 * raises NON_FINITE there.
 */
function vanillaSlow(args: VanillaArgs): void {
  const { old, lp, adv, mask, w, rows, cols, p, mode } = args;
  throwIfNonFiniteUnderMask(old, lp, adv, w, mask, cols);
  if (mode === 'token-mean') return;
  for (let b = 0; b < rows; b++) {
    let rowCounts = mode === 'seq-mean-token-sum-norm';
    for (let t = 0; t < cols && !rowCounts; t++) rowCounts = mask[b * cols + t] !== 0;
    if (!rowCounts) continue;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      if (mask[i] !== 0) continue;
      // verl's per-token loss at this padded position, literally
      const a = adv[i] as number;
      const r = Math.exp(Math.min(Math.max((lp[i] as number) - (old[i] as number), -p.clamp), p.clamp));
      const q = Math.max(-a * r, -a * Math.min(Math.max(r, 1 - p.low), 1 + p.high));
      const loss = (a < 0 ? Math.min(-a * p.c, q) : q) * (w ? (w[i] as number) : 1);
      if (!Number.isFinite(loss)) {
        throw new LabError(
          'NON_FINITE',
          `log_prob/old_log_prob/advantages: the per-token loss at row ${b}, token ${t} (mask 0) is ${loss}, which makes the ${mode} loss NaN in verl (it multiplies loss by mask; only token-mean ignores masked values)`,
          { details: { field: 'log_prob', row: b, token: t, mode } },
        );
      }
    }
  }
}

/**
 * verl `compute_policy_loss_vanilla(old_log_prob, log_prob, advantages, response_mask,
 * loss_agg_mode, config, rollout_is_weights)`; formulas in the file header. All arrays `[B,T]`.
 * Defaults {@link VANILLA_DEFAULTS}. Throws BAD_ARGUMENT (clip_ratio_c <= 1, negative ratios),
 * UNKNOWN_MODE, SHAPE_MISMATCH, BAD_MASK, NON_FINITE (a non-finite input where the mask is 1, or
 * padding that verl's non-token-mean modes would turn into NaN), EMPTY_MASK (verl: NaN).
 */
export function policyLossVanilla(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: VanillaLossOptions = {},
): PolicyLossResult {
  return policyLossVanillaOn('auto', inputs, shape, options);
}

/**
 * Which implementation of the fused pass runs: 'auto' takes the WebAssembly SIMD kernel
 * (vanillaSimd.ts) where it applies (float32 inputs, a float32/uint8 mask, log-ratio clamp <= 32,
 * WebAssembly available) and the JavaScript pass otherwise; 'js' always the JavaScript pass. Both give
 * the same bits (vanillaSimd.test.ts).
 */
export type VanillaEngine = 'auto' | 'js';

/** {@link policyLossVanilla} on a chosen {@link VanillaEngine} (internal: tests compare the two). */
export function policyLossVanillaOn(
  engine: VanillaEngine,
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: VanillaLossOptions = {},
): PolicyLossResult {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
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
  const perTokenLoss = outputBuffer(o.out, rows * cols, `[${rows},${cols}]`);
  checkLossOutput(perTokenLoss, 'out', inputs, weights);
  const args: VanillaArgs = {
    old: oldLogProb,
    lp: logProb,
    adv: advantages,
    mask: responseMask,
    w: weights,
    rows,
    cols,
    p,
    mode: o.lossAggMode,
  };
  const acc = vanillaPass(args, perTokenLoss, engine);
  const { sums, kl, clip, lower } = acc;
  if (acc.check !== 0) vanillaSlow(args);
  const loss = finishAgg(o.lossAggMode, agg, sums, cols, 'response_mask');
  const n = sums.validTokens;
  return {
    loss,
    perTokenLoss,
    metrics: {
      pg_clipfrac: maskedMeanOf(clip, n),
      ppo_kl: maskedMeanOf(kl, n),
      pg_clipfrac_lower: maskedMeanOf(lower, n),
    },
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
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: VanillaLossOptions = {},
): PolicyLossResult & { grad: Float64Array } {
  // before the loss pass writes `out`: an aliased outGrad must leave every buffer untouched
  checkLossOutput(options.outGrad, 'outGrad', inputs, options.rolloutIsWeights);
  checkOutNotAliased(options.outGrad, 'outGrad', { out: options.out });
  const result = policyLossVanilla(inputs, shape, options);
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const o = { ...VANILLA_DEFAULTS, ...options };
  const p = resolveClip(o);
  const n = shape.rows * shape.cols;
  const out = o.outGrad ? outputBuffer64(o.outGrad, n, `[${shape.rows},${shape.cols}]`, 'outGrad') : null;
  const grad = aggLossGrad(responseMask, shape, o.lossAggMode, { ...o.agg, out });
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
