/**
 * The interval of a mean of rates over seeds (e.g. held-out success of 30 seeds, each a rate over
 * 400 tasks). Per-seed rates can be trimodal (about 0, 0.5 or 1), where a t interval is a poor fit
 * and can leave [0, 1]; the percentile bootstrap over seeds cannot.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { type BootstrapInterval, percentileInterval } from './bootstrap.js';
import { checkFiniteValues } from './checks.js';

/**
 * Percentile-bootstrap 95% interval (default 10,000 resamples from `rng`) of the mean of per-seed
 * rates: the seeds are resampled, not the episodes, so between-seed variation (the larger source
 * here) is what the interval measures. Both ends lie in [min, max] of the rates, hence in [0, 1].
 * One seed gives [x, x] (no spread to resample). Errors: NON_FINITE value, BAD_ARGUMENT for a
 * value outside [0, 1] (names the position) or an empty list.
 */
export function rateMeanInterval(
  rates: ArrayLike<number>,
  rng: Rng,
  options: { level?: number; resamples?: number; field?: string } = {},
): BootstrapInterval {
  const field = options.field ?? 'rates';
  checkFiniteValues(rates, field);
  for (let i = 0; i < rates.length; i++) {
    const v = rates[i] as number;
    if (v < 0 || v > 1) {
      throw new LabError('BAD_ARGUMENT', `${field}: value ${v} at position ${i} is not a rate in [0, 1]`, {
        details: { field, row: i },
      });
    }
  }
  return percentileInterval(rates, rng, { ...options, field });
}
