/**
 * Importance weights and their effective sample size: the small kernels an off-policy (asynchronous)
 * learner needs to say how far its samples are from the policy it is updating.
 *
 *   ratio_i      = exp(clamp(logp_current_i - logp_behaviour_i, -c, c))   (verl: c = 20)
 *   tis_i        = min(ratio_i, cap)                                     (truncated IS, from above only)
 *   Kish ESS     = (sum_i w_i)^2 / sum_i w_i^2,   ESS fraction = ESS / n  (in (0, 1]; 1 = equal weights)
 *
 * verl names: `rollout_is_threshold` is the cap (default 2.0, token level); the log-ratio clamp +-20
 * is `rollout_corr_helper`'s; TRL's cap is `vllm_importance_sampling_cap`. verl's `rollout_corr/...`
 * ESS metric 1 / mean((w / mean w)^2) equals the Kish fraction computed here.
 */
import { checkOutNotAliased } from './batch.js';
import { LabError } from './errors.js';

/** Smallest normal float64: a sum of squares below it has lost precision (or is an underflowed 0). */
const MIN_NORMAL = 2.2250738585072014e-308;

/** verl clamps log-ratios to +-20 before exponentiating (rollout correction, KL estimators). */
export const LOG_RATIO_CLAMP = 20;

export interface KishEss {
  /** (sum w)^2 / sum w^2; 0 when every weight is 0. */
  ess: number;
  /** ess / n, in [0, 1]; 0 when every weight is 0. */
  fraction: number;
  /** Number of weights counted (mask 1 entries, or all). */
  n: number;
}

/**
 * Kish effective sample size `(Σ w)² / Σ w²` of non-negative weights `w` (length n), optionally
 * restricted to entries with `mask[i] === 1`; `fraction = ESS / n` equals verl's rollout-correction ESS
 * metric `1 / mean((w / mean w)²)`. Equal weights give ESS = n (fraction 1); one non-zero weight among n gives
 * ESS = 1 (fraction 1/n). All-zero weights (or an empty selection) give 0: no effective sample.
 * Scale-free: weights whose squares overflow or underflow float64 (beyond ~1e±154) are divided by
 * their maximum first, so [1e200, 1e200] has ESS 2 rather than NaN.
 * Errors: NON_FINITE or negative weight (names the position), SHAPE_MISMATCH mask length.
 */
export function kishEss(weights: ArrayLike<number>, mask?: ArrayLike<number>, field = 'weights'): KishEss {
  if (mask !== undefined && mask.length !== weights.length) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${field}: mask has ${mask.length} entries for ${weights.length} weights`,
      { details: { field: 'mask', expected: weights.length, actual: mask.length } },
    );
  }
  let sum = 0;
  let sumSq = 0;
  let max = 0;
  let n = 0;
  for (let i = 0; i < weights.length; i++) {
    if (mask !== undefined && mask[i] !== 1) continue;
    const w = weights[i] as number;
    if (!Number.isFinite(w)) {
      throw new LabError('NON_FINITE', `${field}: weight ${w} at position ${i} is not finite`, {
        details: { field, row: i, value: w },
      });
    }
    if (w < 0) {
      throw new LabError('BAD_VALUE', `${field}: weight ${w} at position ${i} is negative`, {
        details: { field, row: i, value: w },
      });
    }
    sum += w;
    sumSq += w * w;
    if (w > max) max = w;
    n += 1;
  }
  if (max === 0) return { ess: 0, fraction: 0, n };
  let ess = (sum * sum) / sumSq;
  if (!Number.isFinite(ess) || !(sumSq >= MIN_NORMAL)) {
    // w² overflowed (w > ~1e154) or underflowed (w < ~1e-154): ESS is scale-free, so redo it on w / max
    let s = 0;
    let ss = 0;
    for (let i = 0; i < weights.length; i++) {
      if (mask !== undefined && mask[i] !== 1) continue;
      const u = (weights[i] as number) / max;
      s += u;
      ss += u * u;
    }
    ess = (s * s) / ss;
  }
  // Rounding can push (sum)^2/sumSq a hair above n for equal weights; the bound is exact in theory.
  const bounded = Math.min(ess, n);
  return { ess: bounded, fraction: bounded / n, n };
}

/**
 * Per-action probability ratios pi_current / pi_behaviour from log-probs:
 * `exp(clamp(current_i - behaviour_i, -clamp, clamp))` (clamp default 20, verl's). Writes into `out`
 * when given (length n; BAD_ARGUMENT if it shares memory with an input: a shifted overlap would
 * overwrite log-probs before they are read). Errors: SHAPE_MISMATCH lengths, NON_FINITE log-prob
 * (names the position).
 */
export function importanceRatios(
  current: ArrayLike<number>,
  behaviour: ArrayLike<number>,
  out: Float64Array = new Float64Array(current.length),
  clamp = LOG_RATIO_CLAMP,
): Float64Array {
  if (behaviour.length !== current.length || out.length !== current.length) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `importanceRatios: current (${current.length}), behaviour (${behaviour.length}) and out (${out.length}) must have equal lengths`,
      { details: { field: 'behaviour', expected: current.length, actual: behaviour.length } },
    );
  }
  checkOutNotAliased(out, 'out', { current, behaviour });
  if (!(clamp > 0)) {
    throw new LabError('BAD_ARGUMENT', `importanceRatios: clamp must be > 0, got ${clamp}`, {
      details: { field: 'clamp', value: clamp },
    });
  }
  for (let i = 0; i < current.length; i++) {
    const c = current[i] as number;
    const b = behaviour[i] as number;
    if (!Number.isFinite(c) || !Number.isFinite(b)) {
      const which = Number.isFinite(c) ? 'behaviour' : 'current';
      throw new LabError('NON_FINITE', `importanceRatios: ${which} log-prob at position ${i} is not finite`, {
        details: { field: which, row: i },
      });
    }
    const d = Math.max(-clamp, Math.min(clamp, c - b));
    out[i] = Math.exp(d);
  }
  return out;
}

/**
 * Truncated importance weights `min(ratio_i, cap)` (truncated from above only, as verl's
 * `rollout_is_threshold` and TRL's `vllm_importance_sampling_cap` 'truncate' modes). Writes into `out`
 * when given (BAD_ARGUMENT if it shares memory with `ratios`, as every `out` of the library; a bad
 * ratio found halfway would otherwise leave the input half overwritten). Errors: BAD_ARGUMENT cap not > 0 or not finite, NON_FINITE or negative ratio.
 */
export function truncateWeights(
  ratios: ArrayLike<number>,
  cap: number,
  out: Float64Array = new Float64Array(ratios.length),
): Float64Array {
  if (!(Number.isFinite(cap) && cap > 0)) {
    throw new LabError('BAD_ARGUMENT', `truncateWeights: cap must be a finite number > 0, got ${cap}`, {
      details: { field: 'cap', value: cap },
    });
  }
  if (out.length !== ratios.length) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `truncateWeights: out has ${out.length} entries for ${ratios.length} ratios`,
      { details: { field: 'out', expected: ratios.length, actual: out.length } },
    );
  }
  checkOutNotAliased(out, 'out', { ratios });
  for (let i = 0; i < ratios.length; i++) {
    const r = ratios[i] as number;
    if (!Number.isFinite(r) || r < 0) {
      throw new LabError(
        'NON_FINITE',
        `truncateWeights: ratio ${r} at position ${i} is not a finite non-negative number`,
        {
          details: { field: 'ratios', row: i, value: r },
        },
      );
    }
    out[i] = Math.min(r, cap);
  }
  return out;
}
