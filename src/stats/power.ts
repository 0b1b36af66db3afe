/**
 * Power in the open: the smallest paired mean difference the seeds could have detected. A
 * comparison with p > 0.05 whose mde80 is larger than any effect one cares about says "too few
 * seeds", not "no effect".
 */
import { LabError } from '../core/errors.js';
import { tQuantile } from '../core/studentT.js';
import { checkInteger } from './checks.js';

/**
 * Minimal detectable paired difference at power 1−β for a two-sided paired t-test at level α, from
 * the observed sd of the n paired differences (the usual t approximation of the noncentral t):
 *   mde = (t_{1−α/2, n−1} + t_{1−β, n−1}) · sd_d / √n.
 * Defaults α = 0.05, power 0.80: mde80 = (t_{0.975,n−1} + t_{0.80,n−1})·sd/√n, e.g. n = 30:
 * (2.0452 + 0.8542)·sd/√30 = 0.529·sd. Checked against the exact noncentral t (scipy `nct`): the
 * power at this difference is 0.791 for n = 5, 0.799 for n = 10, 0.800 for n = 30. Needs n >= 2
 * (no sd from one pair). Errors: BAD_ARGUMENT for n < 2, sd < 0 or not finite, alpha or power outside (0, 1).
 */
export function minimalDetectableDifference(sd: number, n: number, alpha = 0.05, power = 0.8): number {
  checkInteger(n, 'n', 2);
  if (!(sd >= 0) || !Number.isFinite(sd)) {
    throw new LabError('BAD_ARGUMENT', `sd: expected a finite standard deviation >= 0, got ${sd}`, {
      details: { field: 'sd', value: sd },
    });
  }
  for (const [name, v] of [
    ['alpha', alpha],
    ['power', power],
  ] as const) {
    if (!(v > 0 && v < 1)) {
      throw new LabError('BAD_ARGUMENT', `${name}: expected a value in (0, 1), got ${v}`, {
        details: { field: name, value: v },
      });
    }
  }
  const df = n - 1;
  return ((tQuantile(1 - alpha / 2, df) + tQuantile(power, df)) * sd) / Math.sqrt(n);
}
