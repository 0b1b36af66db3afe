/**
 * verl's other registered policy losses (docs/verl-semantics.md §5.1): GSPO, SAPO, CISPO, GMPO (`geo_mean`), GPG and
 * the REINFORCE helper. Same inputs as the vanilla loss (`old_log_prob`, `log_prob`, `advantages`,
 * `response_mask`, all `[B,T]`, optional `rollout_is_weights` multiplied into the per-token loss).
 * Metrics are verl's (`pg_clipfrac`, `ppo_kl`, `pg_clipfrac_lower` as masked means with the 1e-8
 * denominator); a loss that does not report a metric leaves it out, as verl does.
 *
 * These kernels validate their inputs in separate passes at entry (shape, 0/1 mask, finite values
 * where the mask is 1) and then compute in plain loops; only the vanilla loss is benchmarked and
 * fused (policyLoss.ts). Clamp bounds that verl hard-codes are named constants here.
 */
import {
  type AggOptions,
  aggLossNamed,
  checkAggMode,
  type LossAggMode,
  resolveAggOptions,
} from './aggLoss.js';
import type { FloatArray, MaskArray, Shape2 } from './batch.js';
import { LabError } from './errors.js';
import { LOG_RATIO_CLAMP } from './ess.js';
import { checkPolicyInputs, type PolicyLossMetrics, throwIfNonFiniteUnderMask } from './policyLoss.js';

/** GSPO's `clamp(log_seq_importance_ratio, max=10)`. */
export const GSPO_MAX_LOG_SEQ_RATIO = 10;

/** Clip ratios shared by GSPO, CISPO and GMPO (ActorConfig names). */
export interface ClipRatioOptions {
  /** `clip_ratio`, the fallback of both sides. Default 0.2. */
  clipRatio?: number;
  /** `clip_ratio_low`; null falls back to clipRatio. */
  clipRatioLow?: number | null;
  /** `clip_ratio_high`; null falls back to clipRatio. */
  clipRatioHigh?: number | null;
}

export interface CommonLossOptions {
  /** verl `config.global_batch_info`, splatted into agg_loss. */
  agg?: AggOptions;
  /** `rollout_is_weights` [B,T]. */
  rolloutIsWeights?: FloatArray | null;
}

/** A policy loss's value, its per-token loss (before aggregation, IS weights applied) and metrics. */
export interface PolicyLossOutput {
  loss: number;
  perTokenLoss: Float32Array;
  /** Only the metrics verl reports for this loss (GPG: none; REINFORCE: ppo_kl). */
  metrics: Partial<PolicyLossMetrics>;
}

function clipBounds(o: ClipRatioOptions): { low: number; high: number } {
  const eps = o.clipRatio ?? 0.2;
  const low = o.clipRatioLow ?? eps;
  const high = o.clipRatioHigh ?? eps;
  for (const [v, field] of [
    [eps, 'clip_ratio'],
    [low, 'clip_ratio_low'],
    [high, 'clip_ratio_high'],
  ] as const) {
    if (!Number.isFinite(v) || v < 0) {
      throw new LabError('BAD_ARGUMENT', `${field}: must be a finite number >= 0, got ${v}`, {
        details: { field, value: v },
      });
    }
  }
  return { low, high };
}

/** Entry validation of every loss in this file; returns the IS weights or null. */
function validate(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  weights: FloatArray | null | undefined,
  oldName = 'old_log_prob',
): FloatArray | null {
  const { cols, weights: w } = checkPolicyInputs(old, lp, adv, mask, shape, weights);
  throwIfNonFiniteUnderMask(old, lp, adv, w, mask, cols, oldName);
  return w;
}

/**
 * Entry of the losses that aggregate with the caller's `lossAggMode`: {@link validate}, then the mode
 * (`options.lossAggMode`, else `defaultMode`) checked (UNKNOWN_MODE). Returns the IS weights or null
 * and the mode.
 */
function validateWithMode(
  old: FloatArray,
  lp: FloatArray,
  adv: FloatArray,
  mask: MaskArray,
  shape: Shape2,
  options: CommonLossOptions & { lossAggMode?: LossAggMode },
  defaultMode: LossAggMode,
  oldName = 'old_log_prob',
): { w: FloatArray | null; mode: LossAggMode } {
  const w = validate(old, lp, adv, mask, shape, options.rolloutIsWeights, oldName);
  const mode = options.lossAggMode ?? defaultMode;
  checkAggMode(mode);
  return { w, mode };
}

/**
 * Losses that reduce each row with a plain product `x·m` before anything else (GSPO's sequence
 * ratio, GMPO's means) turn a non-finite padded value into a NaN loss in verl; the lab raises
 * NON_FINITE there instead. `rowsThatCount`: 'valid' when fully masked rows drop out of the
 * aggregation (GSPO), 'all' when every row enters the mean (GMPO).
 */
function checkPaddingFinite(
  fields: ReadonlyArray<readonly [FloatArray | null, string]>,
  mask: MaskArray,
  shape: Shape2,
  rowsThatCount: 'valid' | 'all',
  loss: string,
): void {
  const { rows, cols } = shape;
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    if (rowsThatCount === 'valid') {
      let any = false;
      for (let t = 0; t < cols && !any; t++) any = mask[base + t] !== 0;
      if (!any) continue;
    }
    for (let t = 0; t < cols; t++) {
      if (mask[base + t] !== 0) continue;
      for (const [arr, name] of fields) {
        const v = arr ? (arr[base + t] as number) : 0;
        if (!Number.isFinite(v)) {
          throw new LabError(
            'NON_FINITE',
            `${name}: value ${v} at row ${b}, token ${t} (mask 0) makes the ${loss} loss NaN in verl (it multiplies by the mask)`,
            { details: { field: name, row: b, token: t, value: v } },
          );
        }
      }
    }
  }
}

/** verl's masked-mean denominator `Σ m + 1e-8`. */
function maskedMeanDenominator(mask: MaskArray): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i] as number;
  return n + 1e-8;
}

/**
 * verl's three metrics from their masked sums: pg_clipfrac `clip`, ppo_kl `kl`, pg_clipfrac_lower
 * `lower`, each `/ (Σ m + 1e-8)`; a loss that has no such clip passes 0 (the metric is then 0).
 */
function clipMetrics(clip: number, kl: number, lower: number, mask: MaskArray): PolicyLossMetrics {
  const d = maskedMeanDenominator(mask);
  return { pg_clipfrac: clip / d, ppo_kl: kl / d, pg_clipfrac_lower: lower / d };
}

const FIELD = 'per-token loss (from log_prob/old_log_prob/advantages)';

/**
 * verl `compute_policy_loss_gspo` (GSPO, sequence-level ratio). Per row
 * `ρ_b = Σ_t (lp − old)·m / max(Σ_t m, 1)`, `s_b = exp(min(ρ_b, 10))` (the value is the sequence
 * ratio for every token; in verl the gradient flows through each token's lp). Per token
 * `max(−A·s_b, −A·clamp(s_b, 1−ε_lo, 1+ε_hi))` × w, aggregated **seq-mean-token-mean** whatever
 * mode the caller asked for (verl ignores the argument). Metrics: pg_clipfrac `[p2 > p1]`,
 * pg_clipfrac_lower 0, ppo_kl `masked_mean(old − lp)` (unclamped).
 */
export function policyLossGspo(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: ClipRatioOptions & CommonLossOptions = {},
): PolicyLossOutput {
  const w = validate(oldLogProb, logProb, advantages, responseMask, shape, options.rolloutIsWeights);
  checkPaddingFinite(
    [
      [oldLogProb, 'old_log_prob'],
      [logProb, 'log_prob'],
    ],
    responseMask,
    shape,
    'valid',
    'GSPO',
  );
  const { low, high } = clipBounds(options);
  const agg = options.agg ?? {};
  resolveAggOptions(agg);
  const { rows, cols } = shape;
  const out = new Float32Array(rows * cols);
  let kl = 0;
  let clip = 0;
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    let sum = 0;
    let n = 0;
    for (let t = 0; t < cols; t++) {
      const m = responseMask[base + t] as number;
      if (m === 0) continue;
      sum += (logProb[base + t] as number) - (oldLogProb[base + t] as number);
      n++;
    }
    kl -= sum;
    const s = Math.exp(Math.min(sum / Math.max(n, 1), GSPO_MAX_LOG_SEQ_RATIO));
    const sc = Math.min(Math.max(s, 1 - low), 1 + high);
    for (let t = 0; t < cols; t++) {
      const i = base + t;
      const a = advantages[i] as number;
      const p1 = -a * s;
      const p2 = -a * sc;
      out[i] = Math.max(p1, p2) * (w ? (w[i] as number) : 1);
      if (p2 > p1) clip += responseMask[i] as number;
    }
  }
  const loss = aggLossNamed(out, responseMask, shape, 'seq-mean-token-mean', agg, FIELD);
  return {
    loss,
    perTokenLoss: out,
    metrics: clipMetrics(clip, kl, 0, responseMask),
  };
}

/** SAPO temperatures (ActorConfig `tau_pos`, `tau_neg`). */
export interface SapoOptions extends CommonLossOptions {
  /** Temperature where A > 0. Default 1.0. */
  tauPos?: number;
  /** Temperature where A <= 0. Default 1.05. */
  tauNeg?: number;
}

/**
 * verl `compute_policy_loss_sapo` (soft adaptive gate instead of a hard clip):
 * `ℓ = clamp(lp − old, ±20)`, `r = exp(ℓ)`, `τ = A > 0 ? τ_pos : τ_neg`,
 * `gate = sigmoid(τ·(r − 1))·4/τ`, per-token loss `−gate·A` × w, aggregated
 * **seq-mean-token-mean** (mode argument ignored, as verl). Metrics: pg_clipfrac 0,
 * pg_clipfrac_lower 0, ppo_kl `masked_mean(−ℓ)`. The gate's slope at r = 1 is 1 for every τ,
 * so near on-policy it matches the unclipped surrogate.
 */
export function policyLossSapo(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: SapoOptions = {},
): PolicyLossOutput {
  const w = validate(oldLogProb, logProb, advantages, responseMask, shape, options.rolloutIsWeights);
  const tauPos = options.tauPos ?? 1.0;
  const tauNeg = options.tauNeg ?? 1.05;
  for (const [v, field] of [
    [tauPos, 'tau_pos'],
    [tauNeg, 'tau_neg'],
  ] as const) {
    if (!(v > 0) || !Number.isFinite(v)) {
      throw new LabError('BAD_ARGUMENT', `${field}: must be a positive finite number, got ${v}`, {
        details: { field, value: v },
      });
    }
  }
  const agg = options.agg ?? {};
  resolveAggOptions(agg);
  const n = shape.rows * shape.cols;
  const out = new Float32Array(n);
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const a = advantages[i] as number;
    const l = Math.min(
      Math.max((logProb[i] as number) - (oldLogProb[i] as number), -LOG_RATIO_CLAMP),
      LOG_RATIO_CLAMP,
    );
    const tau = a > 0 ? tauPos : tauNeg;
    const gate = (4 / tau) * (1 / (1 + Math.exp(-tau * (Math.exp(l) - 1))));
    out[i] = -gate * a * (w ? (w[i] as number) : 1);
    if (responseMask[i] !== 0) kl -= l;
  }
  const loss = aggLossNamed(out, responseMask, shape, 'seq-mean-token-mean', agg, FIELD);
  return {
    loss,
    perTokenLoss: out,
    metrics: clipMetrics(0, kl, 0, responseMask),
  };
}

/**
 * verl `compute_policy_loss_cispo` (clipped IS weight, REINFORCE-style gradient):
 * `ℓ = clamp(lp − old, ±20)`, `r = exp(ℓ)`, per-token loss `−sg(clamp(r, 1−ε_lo, 1+ε_hi))·A·lp` × w
 * (`sg` = stop-gradient: the clipped ratio only weights the log-prob gradient, it never zeroes
 * it), aggregated with `lossAggMode` (default token-mean). Metrics: pg_clipfrac `[r ≠ clip(r)]`,
 * pg_clipfrac_lower 0, ppo_kl `masked_mean(−ℓ)`.
 */
export function policyLossCispo(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: ClipRatioOptions & CommonLossOptions & { lossAggMode?: LossAggMode } = {},
): PolicyLossOutput {
  const { w, mode } = validateWithMode(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    options,
    'token-mean',
  );
  const { low, high } = clipBounds(options);
  const agg = options.agg ?? {};
  resolveAggOptions(agg);
  const n = shape.rows * shape.cols;
  const out = new Float32Array(n);
  let kl = 0;
  let clip = 0;
  for (let i = 0; i < n; i++) {
    const lp = logProb[i] as number;
    const l = Math.min(Math.max(lp - (oldLogProb[i] as number), -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);
    const r = Math.exp(l);
    const rc = Math.min(Math.max(r, 1 - low), 1 + high);
    out[i] = -rc * (advantages[i] as number) * lp * (w ? (w[i] as number) : 1);
    if (responseMask[i] !== 0) {
      kl -= l;
      if (r !== rc) clip++;
    }
  }
  const loss = aggLossNamed(out, responseMask, shape, mode, agg, FIELD);
  return {
    loss,
    perTokenLoss: out,
    metrics: clipMetrics(clip, kl, 0, responseMask),
  };
}

/** GMPO result: the loss is per sequence, so it reports the per-row loss instead of a per-token one. */
export interface GeoMeanLossOutput {
  loss: number;
  /** `loss_b` [B] (× the geometric-mean IS weight when given). */
  perSequenceLoss: Float64Array;
  metrics: PolicyLossMetrics;
}

/**
 * verl `compute_policy_loss_geo_mean` (GMPO, geometric mean of token ratios). The log-ratio
 * `ℓ = lp − old` is **not** clamped; it is clipped in log space: `ℓc = clamp(ℓ, −ε_lo, ε_hi)`,
 * `ℓ* = sgn(A)·min(sgn(A)·ℓ, sgn(A)·ℓc)` (the pessimistic side; sgn(0) = 0). Per row, with
 * `n_b = Σ_t m`: `ratio_b = exp(Σ_t ℓ*·m / (n_b + 1e-8))`, `Ā_b = Σ_t A·m / (n_b + 1e-8)`,
 * `loss_b = −Ā_b·ratio_b` (× `exp(Σ_t log(w + 1e-10)·m / (n_b + 1e-8))` with IS weights);
 * `loss = mean over all B rows` (a fully masked row contributes 0 but counts; loss_agg_mode and
 * global batch info are ignored, as in verl). Metrics: pg_clipfrac `[ℓ ≠ ℓc]·[A > 0]`,
 * pg_clipfrac_lower `[ℓ ≠ ℓc]·[A < 0]`, ppo_kl `masked_mean(−ℓ)`.
 */
export function policyLossGeoMean(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: ClipRatioOptions & { rolloutIsWeights?: FloatArray | null } = {},
): GeoMeanLossOutput {
  const w = validate(oldLogProb, logProb, advantages, responseMask, shape, options.rolloutIsWeights);
  checkPaddingFinite(
    [
      [oldLogProb, 'old_log_prob'],
      [logProb, 'log_prob'],
      [advantages, 'advantages'],
      [w, 'rollout_is_weights'],
    ],
    responseMask,
    shape,
    'all',
    'GMPO',
  );
  const { low, high } = clipBounds(options);
  const { rows, cols } = shape;
  const perSequenceLoss = new Float64Array(rows);
  let kl = 0;
  let clip = 0;
  let lower = 0;
  let total = 0;
  for (let b = 0; b < rows; b++) {
    const base = b * cols;
    let n = 0;
    let sumL = 0;
    let sumA = 0;
    let sumLogW = 0;
    for (let t = 0; t < cols; t++) {
      const i = base + t;
      if (responseMask[i] === 0) continue;
      const a = advantages[i] as number;
      const l = (logProb[i] as number) - (oldLogProb[i] as number);
      const lc = Math.min(Math.max(l, -low), high);
      const sg = Math.sign(a);
      sumL += sg * Math.min(sg * l, sg * lc);
      sumA += a;
      if (w) sumLogW += Math.log((w[i] as number) + 1e-10);
      n++;
      kl -= l;
      if (l !== lc) {
        if (a > 0) clip++;
        else if (a < 0) lower++;
      }
    }
    const d = n + 1e-8;
    let lossB = (-sumA / d) * Math.exp(sumL / d);
    if (w) lossB *= Math.exp(sumLogW / d);
    perSequenceLoss[b] = lossB;
    total += lossB;
  }
  const loss = total / rows;
  if (!Number.isFinite(loss)) {
    throw new LabError(
      'NON_FINITE',
      `log_prob/old_log_prob: the GMPO loss overflows (${loss}); its log-ratio is not clamped`,
      {
        details: { field: 'log_prob' },
      },
    );
  }
  return {
    loss,
    perSequenceLoss,
    metrics: clipMetrics(clip, kl, lower, responseMask),
  };
}

/**
 * verl `compute_policy_loss_gpg` (GPG): per-token loss `−lp·A` × w, aggregated with `lossAggMode`
 * (default token-mean) and the global batch info. No ratio, no clip; verl reports no metrics.
 * `oldLogProb` is accepted for the common signature and only validated.
 */
export function policyLossGpg(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: CommonLossOptions & { lossAggMode?: LossAggMode } = {},
): PolicyLossOutput {
  const { w, mode } = validateWithMode(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    options,
    'token-mean',
  );
  const n = shape.rows * shape.cols;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    out[i] = -(logProb[i] as number) * (advantages[i] as number) * (w ? (w[i] as number) : 1);
  }
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return { loss, perTokenLoss: out, metrics: {} };
}

/**
 * verl `compute_policy_loss_reinforce(rollout_log_prob, log_prob, advantages, response_mask,
 * loss_agg_mode="seq-mean-token-sum", config, rollout_is_weights)` (used by bypass mode):
 * per-token loss `−A·lp` × w, aggregated with `lossAggMode` (default **seq-mean-token-sum**).
 * Metric: ppo_kl `masked_mean(rollout_lp − lp)`.
 */
export function policyLossReinforce(
  rolloutLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: CommonLossOptions & { lossAggMode?: LossAggMode } = {},
): PolicyLossOutput {
  const { w, mode } = validateWithMode(
    rolloutLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    options,
    'seq-mean-token-sum',
    'rollout_log_prob',
  );
  const n = shape.rows * shape.cols;
  const out = new Float32Array(n);
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const lp = logProb[i] as number;
    out[i] = -(advantages[i] as number) * lp * (w ? (w[i] as number) : 1);
    if (responseMask[i] !== 0) kl += (rolloutLogProb[i] as number) - lp;
  }
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return { loss, perTokenLoss: out, metrics: { ppo_kl: kl / maskedMeanDenominator(responseMask) } };
}

function maskedMeanOfArray(x: FloatArray, mask: MaskArray): number {
  let s = 0;
  let n = 0;
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue;
    s += x[i] as number;
    n++;
  }
  return s / (n + 1e-8);
}

/** Clip-Cov options (verl `PolicyLossConfig`). */
export interface ClipCovOptions extends ClipRatioOptions, CommonLossOptions {
  lossAggMode?: LossAggMode;
  /** `clip_cov_ratio`: fraction of valid tokens whose gradient is cut. Default 2e-4. */
  clipCovRatio?: number;
  /** `clip_cov_lb`, `clip_cov_ub`: the covariance band of the candidates. Defaults 1.0, 5.0. */
  clipCovLb?: number;
  clipCovUb?: number;
  /**
   * Uniform draws in [0, 1) for verl's `torch.randperm` choice of the cut subset; required only when
   * there are more candidates than `max(⌊ratio·Σm⌋, 1)` (otherwise every candidate is cut and the
   * result is deterministic). Pass `() => rng.next()` of a seeded stream.
   */
  random?: (() => number) | null;
}

/**
 * verl `compute_policy_loss_clip_cov` (Clip-Cov, Cui et al. 2025). `r = exp(lp − old)` (not
 * clamped), `p1 = −A·r`, `p2 = −A·clamp(r, 1−ε_lo, 1+ε_hi)`; per valid token the centred covariance
 * `cov = (A − masked_mean(A))·(lp − masked_mean(lp))`; candidates are valid tokens not already
 * clipped (`p2 > p1`) with `lb < cov < ub`; `min(max(⌊ratio·Σm⌋, 1), #candidates)` of them, drawn at
 * random, get their loss multiplied by 0. Per-token loss `max(p1, p2)·corr` × w, aggregated with
 * `lossAggMode`. Metrics: pg_clipfrac = fraction of valid tokens cut, ppo_kl `masked_mean(old − lp)`.
 * Throws BAD_ARGUMENT when a random subset is needed and `random` is not given.
 */
export function policyLossClipCov(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: ClipCovOptions = {},
): PolicyLossOutput {
  const { w, mode } = validateWithMode(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    options,
    'token-mean',
  );
  const { low, high } = clipBounds(options);
  const ratioCut = options.clipCovRatio ?? 2e-4;
  const lb = options.clipCovLb ?? 1.0;
  const ub = options.clipCovUb ?? 5.0;
  if (!(ratioCut > 0)) {
    throw new LabError('BAD_ARGUMENT', `clip_cov_ratio: must be > 0, got ${ratioCut}`, {
      details: { field: 'clip_cov_ratio' },
    });
  }
  const n = shape.rows * shape.cols;
  const meanA = maskedMeanOfArray(advantages, responseMask);
  const meanLp = maskedMeanOfArray(logProb, responseMask);
  const out = new Float32Array(n);
  const base = new Float64Array(n);
  const candidates: number[] = [];
  let kl = 0;
  let valid = 0;
  for (let i = 0; i < n; i++) {
    const a = advantages[i] as number;
    const lp = logProb[i] as number;
    const d = lp - (oldLogProb[i] as number);
    const r = Math.exp(d);
    const p1 = -a * r;
    const p2 = -a * Math.min(Math.max(r, 1 - low), 1 + high);
    base[i] = Math.max(p1, p2);
    if (responseMask[i] === 0) continue;
    valid++;
    kl -= d;
    const cov = (a - meanA) * (lp - meanLp);
    if (!(p2 > p1) && cov < ub && cov > lb) candidates.push(i);
  }
  const cutCount = Math.min(Math.max(Math.floor(ratioCut * valid), 1), candidates.length);
  let cut = candidates;
  if (cutCount < candidates.length) {
    const random = options.random;
    if (!random) {
      throw new LabError(
        'BAD_ARGUMENT',
        `random: clip_cov must cut ${cutCount} of ${candidates.length} candidate tokens at random (verl: torch.randperm); pass a seeded random source`,
        { details: { field: 'random' } },
      );
    }
    const pool = candidates.slice();
    for (let k = 0; k < cutCount; k++) {
      const j = k + Math.floor(random() * (pool.length - k));
      const tmp = pool[k] as number;
      pool[k] = pool[j] as number;
      pool[j] = tmp;
    }
    cut = pool.slice(0, cutCount);
  }
  for (const i of cut) base[i] = (base[i] as number) * 0;
  for (let i = 0; i < n; i++) out[i] = (base[i] as number) * (w ? (w[i] as number) : 1);
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return {
    loss,
    perTokenLoss: out,
    metrics: { pg_clipfrac: cut.length / (valid + 1e-8), ppo_kl: kl / (valid + 1e-8) },
  };
}

/** KL-Cov options (verl `PolicyLossConfig`). */
export interface KlCovOptions extends CommonLossOptions {
  lossAggMode?: LossAggMode;
  /** `kl_cov_ratio`: fraction of valid tokens that get the KL penalty. Default 2e-4. */
  klCovRatio?: number;
  /** `ppo_kl_coef`. Default 0.1 (verl's config default). */
  ppoKlCoef?: number;
}

/**
 * verl `compute_policy_loss_kl_cov` (KL-Cov, Cui et al. 2025). `r = exp(lp − old)` (not clamped),
 * per-token loss `−A·r`; the `k = max(1, ⌊N_valid·ratio⌋)` valid tokens with the largest
 * `(A − mean A)·(lp − mean lp)` (plain means over valid tokens) get `−A·r + ppo_kl_coef·|lp − old|`
 * instead (ties broken by position, first wins). × w, aggregated with `lossAggMode`. Metric:
 * ppo_kl `masked_mean(|lp − old|)`.
 */
export function policyLossKlCov(
  oldLogProb: FloatArray,
  logProb: FloatArray,
  advantages: FloatArray,
  responseMask: MaskArray,
  shape: Shape2,
  options: KlCovOptions = {},
): PolicyLossOutput {
  const { w, mode } = validateWithMode(
    oldLogProb,
    logProb,
    advantages,
    responseMask,
    shape,
    options,
    'token-mean',
  );
  const ratio = options.klCovRatio ?? 2e-4;
  const coef = options.ppoKlCoef ?? 0.1;
  if (!(ratio > 0) || !Number.isFinite(coef)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `kl_cov_ratio / ppo_kl_coef: need ratio > 0 and a finite coefficient, got ${ratio}, ${coef}`,
      {
        details: { field: 'kl_cov_ratio' },
      },
    );
  }
  const n = shape.rows * shape.cols;
  const loss64 = new Float64Array(n);
  const validIdx: number[] = [];
  let sumA = 0;
  let sumLp = 0;
  let absKl = 0;
  for (let i = 0; i < n; i++) {
    const d = (logProb[i] as number) - (oldLogProb[i] as number);
    loss64[i] = -(advantages[i] as number) * Math.exp(d);
    if (responseMask[i] === 0) continue;
    validIdx.push(i);
    sumA += advantages[i] as number;
    sumLp += logProb[i] as number;
    absKl += Math.abs(d);
  }
  if (validIdx.length > 0) {
    const mA = sumA / validIdx.length;
    const mLp = sumLp / validIdx.length;
    const cov = validIdx.map((i) => ((advantages[i] as number) - mA) * ((logProb[i] as number) - mLp));
    const order = validIdx.map((_, k) => k).sort((x, y) => (cov[y] as number) - (cov[x] as number) || x - y);
    const k = Math.max(1, Math.floor(validIdx.length * ratio));
    for (let j = 0; j < Math.min(k, order.length); j++) {
      const i = validIdx[order[j] as number] as number;
      loss64[i] = (loss64[i] as number) + coef * Math.abs((logProb[i] as number) - (oldLogProb[i] as number));
    }
  }
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = (loss64[i] as number) * (w ? (w[i] as number) : 1);
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return { loss, perTokenLoss: out, metrics: { ppo_kl: absKl / (validIdx.length + 1e-8) } };
}
