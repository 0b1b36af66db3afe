/**
 * The Wilson score interval for one binomial proportion (Wilson 1927, JASA 22:209; method 3 of
 * Newcombe 1998, Stat. Med. 17:857). Unlike the Wald interval p̂ ± z·√(p̂(1−p̂)/n) it never leaves
 * [0, 1] and does not collapse to a point at 0 or n successes.
 */
import { LabError } from '../core/errors.js';
import { checkInteger } from './checks.js';
import { Z975 } from './normal.js';

/**
 * Wilson score interval for `successes` out of `n` trials, at normal quantile `z` (default
 * Φ⁻¹(0.975) = 1.959964, a 95% interval):
 *   centre = (x + z²/2)/(n + z²),  half = z/(n + z²)·√(x(n − x)/n + z²/4),  [centre − half, centre + half].
 * Always within [0, 1] (clamped against rounding: at x = 0 the lower end is exactly 0). n = 0 has no
 * interval: BAD_ARGUMENT. Errors: BAD_ARGUMENT when successes or n is not an integer, successes > n, or z <= 0.
 */
export function wilsonInterval(successes: number, n: number, z = Z975): [number, number] {
  checkInteger(n, 'n', 1);
  checkInteger(successes, 'successes', 0, n);
  if (!(z > 0) || !Number.isFinite(z)) {
    throw new LabError('BAD_ARGUMENT', `z: expected a positive normal quantile, got ${z}`, {
      details: { field: 'z', value: z },
    });
  }
  const z2 = z * z;
  const centre = (successes + z2 / 2) / (n + z2);
  const half = (z / (n + z2)) * Math.sqrt((successes * (n - successes)) / n + z2 / 4);
  const lo = successes === 0 ? 0 : Math.max(0, centre - half);
  const hi = successes === n ? 1 : Math.min(1, centre + half);
  return [lo, hi];
}
