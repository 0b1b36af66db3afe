/**
 * Holm's step-down adjustment for multiple comparisons (Holm 1979, Scand. J. Statist. 6:65), which
 * controls the family-wise error rate at α for any dependence between the tests and is uniformly
 * more powerful than Bonferroni.
 */
import { LabError } from '../core/errors.js';

/**
 * Holm-adjusted p-values, in the input order (R `p.adjust(p, "holm")`). With the m p-values sorted
 * ascending p₍₁₎ <= ... <= p₍ₘ₎: p̃₍ᵢ₎ = max_{j<=i} min(1, (m − j + 1)·p₍ⱼ₎). Each adjusted value is
 * >= its raw value, at most 1, and the adjusted values keep the order of the raw ones.
 * Rejecting H₍ᵢ₎ when p̃₍ᵢ₎ <= α is Holm's procedure. Ties keep their input order (no effect on values).
 * Shapes: p [m] -> [m]. Errors: BAD_ARGUMENT for a value outside [0, 1] or NaN (names the position).
 */
export function holmAdjust(p: readonly number[]): number[] {
  const m = p.length;
  p.forEach((v, i) => {
    if (!(v >= 0 && v <= 1)) {
      throw new LabError('BAD_ARGUMENT', `p: value ${v} at position ${i} is not a p-value in [0, 1]`, {
        details: { field: 'p', row: i },
      });
    }
  });
  const order = p.map((_, i) => i).sort((a, b) => (p[a] as number) - (p[b] as number) || a - b);
  const out = new Array<number>(m);
  let running = 0;
  order.forEach((idx, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * (p[idx] as number)));
    out[idx] = running;
  });
  return out;
}
