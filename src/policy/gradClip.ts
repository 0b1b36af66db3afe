/**
 * Gradient clipping by global norm, verl's `actor.grad_clip` (torch `clip_grad_norm_` over all
 * parameters, then `optimizer.step()` only when the norm is finite):
 *
 *   n = sqrt(Σ_i g_i²),   c = maxNorm / (n + 1e-6),   g ← g · min(c, 1)
 *
 * Returns the norm before clipping (verl logs it as `actor/grad_norm`). verl skips the step on a
 * non-finite norm; the lab stops instead (a LabError naming the step), since a NaN gradient here is
 * always a bug, never a rare bf16 overflow.
 */
import { LabError } from '../core/errors.js';

/**
 * Scales `grad` in place so that its global L2 norm is at most `maxNorm` (torch's `1e-6` in the
 * denominator included); returns the norm before clipping. `maxNorm = Infinity` only measures.
 * Errors: BAD_ARGUMENT for maxNorm not > 0; NON_FINITE (with `step`) for a non-finite norm.
 */
export function clipGradNorm(grad: Float64Array, maxNorm: number, step = 0): number {
  if (!(maxNorm > 0)) {
    throw new LabError('BAD_ARGUMENT', `grad_clip: expected a number > 0, got ${maxNorm}`, {
      details: { field: 'grad_clip', value: maxNorm },
    });
  }
  let sq = 0;
  for (let i = 0; i < grad.length; i++) sq += (grad[i] as number) * (grad[i] as number);
  const norm = Math.sqrt(sq);
  if (!Number.isFinite(norm)) {
    throw new LabError('NON_FINITE', `grad_norm: ${norm} at step ${step} (a non-finite gradient)`, {
      details: { field: 'grad_norm', step, value: norm },
    });
  }
  const coef = maxNorm / (norm + 1e-6);
  if (coef < 1) for (let i = 0; i < grad.length; i++) grad[i] = (grad[i] as number) * coef;
  return norm;
}
