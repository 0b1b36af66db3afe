/**
 * Policy losses whose ratio is per sequence, not per token (docs/verl-semantics.md §5.1): GSPO (`"gspo"`, the
 * length-normalised sequence log-ratio) and GMPO (`"geo_mean"`, the geometric mean of clipped token
 * ratios). Both reduce each row with a plain product `x·m` first, so a non-finite padded input is
 * NaN in verl and NON_FINITE here.
 */
import { aggLossNamed, resolveAggOptions } from './aggLoss.js';
import { type FloatArray, outputBuffer, outputBuffer64, type Shape2 } from './batch.js';
import { LabError } from './errors.js';
import { maskedMeanOf } from './maskedPrimitives.js';
import {
  type ClipRatioOptions,
  type CommonLossOptions,
  checkLossOutput,
  checkPaddingFinite,
  clipBounds,
  clipMetrics,
  PER_TOKEN_LOSS_FIELD as FIELD,
  type PolicyLossInputs,
  type PolicyLossMetrics,
  type PolicyLossOutput,
  validatePolicyInputs as validate,
} from './policyLossInputs.js';

/** GSPO's `clamp(log_seq_importance_ratio, max=10)`. */
export const GSPO_MAX_LOG_SEQ_RATIO = 10;

/**
 * verl `compute_policy_loss_gspo` (GSPO, sequence-level ratio). Per row
 * `ρ_b = Σ_t (lp − old)·m / max(Σ_t m, 1)`, `s_b = exp(min(ρ_b, 10))` (the value is the sequence
 * ratio for every token; in verl the gradient flows through each token's lp). Per token
 * `max(−A·s_b, −A·clamp(s_b, 1−ε_lo, 1+ε_hi))` × w, aggregated **seq-mean-token-mean** whatever
 * mode the caller asked for (verl ignores the argument). Metrics: pg_clipfrac `[p2 > p1]`,
 * pg_clipfrac_lower 0, ppo_kl `masked_mean(old − lp)` (unclamped).
 */
export function policyLossGspo(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: ClipRatioOptions & CommonLossOptions = {},
): PolicyLossOutput {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
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
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(out, 'out', inputs, w);
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
 * pg_clipfrac_lower `[ℓ ≠ ℓc]·[A < 0]`, ppo_kl `masked_mean(−ℓ)`. `options.outPerSequence`: a length-B
 * buffer for `perSequenceLoss`.
 */
export function policyLossGeoMean(
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: ClipRatioOptions & {
    rolloutIsWeights?: FloatArray | null;
    /** A length-B buffer for `perSequenceLoss`. */
    outPerSequence?: Float64Array | null;
  } = {},
): GeoMeanLossOutput {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
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
  const perSequenceLoss = outputBuffer64(options.outPerSequence, rows, `[${rows}]`, 'outPerSequence');
  checkLossOutput(perSequenceLoss, 'outPerSequence', inputs, w);
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
    let lossB = -maskedMeanOf(sumA, n) * Math.exp(maskedMeanOf(sumL, n));
    if (w) lossB *= Math.exp(maskedMeanOf(sumLogW, n));
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
