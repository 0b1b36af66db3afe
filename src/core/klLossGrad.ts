/**
 * The derivative of verl's `low_var_kl` (k3) KL estimate with respect to the policy's log-prob, for
 * the KL loss of `actor.use_kl_loss` (`kl_loss = agg_loss(kl_penalty(logprob, ref_logprob,
 * 'low_var_kl'), response_mask, loss_agg_mode)`, added as `kl_loss_coef x kl_loss`).
 *
 * With `k = clamp(ref − logprob, −20, 20)` and `value = clamp(exp(k) − k − 1, −10, 10)` (core `klPenalty`):
 *
 *   d value / d logprob = 1 − exp(ref − logprob)   where neither clamp is active, else 0
 *
 * (torch's clamp passes no gradient where it clips). The value is evaluated in float64 here; core
 * `klPenalty` returns the same numbers rounded to float32.
 */
import { checkLength } from './batch.js';
import { LabError } from './errors.js';
import { K3_LOG_RATIO_CLAMP, K3_VALUE_CLAMP } from './kl.js';

/** k3 of one token in float64: clamp(exp(k) − k − 1, −10, 10), k = clamp(ref − logprob, −20, 20). */
export function lowVarKlValue(logprob: number, refLogprob: number): number {
  const k = Math.min(Math.max(refLogprob - logprob, -K3_LOG_RATIO_CLAMP), K3_LOG_RATIO_CLAMP);
  return Math.min(Math.max(Math.exp(k) - k - 1, -K3_VALUE_CLAMP), K3_VALUE_CLAMP);
}

/**
 * `d k3 / d logprob` per token (formula in the file header), float64, same length as the inputs.
 * Shapes: `logprob`, `refLogprob` [n]. Errors: SHAPE_MISMATCH, NON_FINITE (naming the field and index).
 */
export function lowVarKlGrad(logprob: ArrayLike<number>, refLogprob: ArrayLike<number>): Float64Array {
  const n = logprob.length;
  checkLength(refLogprob, n, 'ref_logprob', `[${n}]`);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const lp = logprob[i] as number;
    const ref = refLogprob[i] as number;
    if (!Number.isFinite(lp) || !Number.isFinite(ref)) {
      const field = Number.isFinite(lp) ? 'ref_logprob' : 'logprob';
      throw new LabError(
        'NON_FINITE',
        `${field}: value ${Number.isFinite(lp) ? ref : lp} at index ${i} is not finite`,
        {
          details: { field, index: i },
        },
      );
    }
    out[i] = lowVarKlSlope(lp, ref);
  }
  return out;
}

/** `d k3 / d logprob` of one token (finite inputs; no checks): 1 − exp(ref − logprob), 0 where clamped. */
export function lowVarKlSlope(logprob: number, refLogprob: number): number {
  const d = refLogprob - logprob;
  if (d <= -K3_LOG_RATIO_CLAMP || d >= K3_LOG_RATIO_CLAMP) return 0;
  const v = Math.exp(d) - d - 1;
  if (v >= K3_VALUE_CLAMP) return 0; // v >= 0 always, so only the upper clamp can bind
  return 1 - Math.exp(d);
}
