/**
 * Policy losses that single out the tokens with the largest advantage/log-prob covariance (Cui et
 * al. 2025; docs/verl-semantics.md §5.1): Clip-Cov (`"clip_cov"`, cuts their gradient) and KL-Cov (`"kl_cov"`, adds
 * a KL penalty on them).
 */
import { aggLossNamed, type LossAggMode } from './aggLoss.js';
import { outputBuffer, type Shape2 } from './batch.js';
import { LabError } from './errors.js';
import { maskedMeanOf, maskedMeanUnchecked } from './maskedPrimitives.js';
import {
  type ClipRatioOptions,
  type CommonLossOptions,
  checkLossOutput,
  clipBounds,
  PER_TOKEN_LOSS_FIELD as FIELD,
  type PolicyLossInputs,
  type PolicyLossOutput,
  validateWithMode,
} from './policyLossInputs.js';

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
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: ClipCovOptions = {},
): PolicyLossOutput {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const { w, mode } = validateWithMode(inputs, shape, options, 'token-mean');
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
  const meanA = maskedMeanUnchecked(advantages, responseMask);
  const meanLp = maskedMeanUnchecked(logProb, responseMask);
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(out, 'out', inputs, w);
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
    metrics: { pg_clipfrac: maskedMeanOf(cut.length, valid), ppo_kl: maskedMeanOf(kl, valid) },
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
  inputs: PolicyLossInputs,
  shape: Shape2,
  options: KlCovOptions = {},
): PolicyLossOutput {
  const { oldLogProb, logProb, advantages, responseMask } = inputs;
  const { w, mode } = validateWithMode(inputs, shape, options, 'token-mean');
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
  const out = outputBuffer(options.out, shape.rows * shape.cols, `[${shape.rows},${shape.cols}]`);
  checkLossOutput(out, 'out', inputs, w);
  for (let i = 0; i < n; i++) out[i] = (loss64[i] as number) * (w ? (w[i] as number) : 1);
  const loss = aggLossNamed(out, responseMask, shape, mode, options.agg ?? {}, FIELD);
  return { loss, perTokenLoss: out, metrics: { ppo_kl: maskedMeanOf(absKl, validIdx.length) } };
}
