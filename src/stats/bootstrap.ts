/**
 * Bootstrap intervals of a mean over seeds (Efron & Tibshirani 1993, "An Introduction to the
 * Bootstrap", ch. 13 percentile, ch. 14 BCa). Every resample draws from the `Rng` passed in, so the
 * same values and the same stream give the same interval, byte for byte.
 *
 * Where each is used in the lab:
 * - BCa for paired differences (`pairedComparison`): it corrects the percentile interval for bias and
 *   skew (second-order accurate), which matters for differences of trimodal per-seed rates.
 * - percentile for the mean of a rate over seeds (`rateMeanInterval`): its ends are means of
 *   resampled rates, so they stay inside [min, max] of the data and therefore inside [0, 1].
 * Both ends of either interval are quantiles of the bootstrap means, so neither leaves the range of
 * the data. Both undercover with few seeds (n < ~10): prefer more seeds to a different interval.
 */
import { quantileOfSorted } from '../core/stats.js';
import type { Rng } from '../random.js';
import { checkFiniteValues, checkInteger, checkLevel } from './checks.js';
import { normalCdf, normalQuantile } from './normal.js';

/** Default number of bootstrap resamples: the Monte-Carlo error of a 2.5% quantile is then ~0.1 percentile points. */
export const DEFAULT_RESAMPLES = 10_000;

export type BootstrapMethod = 'percentile' | 'bca';

export interface BootstrapInterval {
  /** The mean of the values (the point estimate). */
  estimate: number;
  /** [lo, hi] at `level`. */
  ci: [number, number];
  /** 'bca' can fall back to 'percentile' (all resamples on one side of the estimate): the method actually used. */
  method: BootstrapMethod;
  resamples: number;
}

function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i] as number;
  return s / values.length;
}

/**
 * `resamples` bootstrap means of `values`, sorted ascending: each draws n indices uniformly with
 * replacement from `rng` (one `rng.next()` per index) and averages those values. Shape: values [n],
 * result Float64Array [resamples]. Errors: BAD_ARGUMENT empty values or resamples < 1, NON_FINITE value.
 */
export function bootstrapMeans(
  values: ArrayLike<number>,
  rng: Rng,
  resamples = DEFAULT_RESAMPLES,
  field = 'values',
): Float64Array {
  checkFiniteValues(values, field);
  checkInteger(resamples, 'resamples', 1);
  const n = values.length;
  const out = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[Math.floor(rng.next() * n)] as number;
    out[b] = s / n;
  }
  return out.sort();
}

/**
 * Percentile bootstrap interval of the mean: the (1−level)/2 and (1+level)/2 quantiles (numpy
 * 'linear') of {@link bootstrapMeans}. Defaults: level 0.95, 10,000 resamples. A constant list gives
 * [c, c]. Stays within [min(values), max(values)].
 */
export function percentileInterval(
  values: ArrayLike<number>,
  rng: Rng,
  options: { level?: number; resamples?: number; field?: string } = {},
): BootstrapInterval {
  const level = options.level ?? 0.95;
  checkLevel(level);
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const means = bootstrapMeans(values, rng, resamples, options.field);
  const alpha = (1 - level) / 2;
  return {
    estimate: mean(values),
    ci: clampToData(values, [quantileOfSorted(means, alpha), quantileOfSorted(means, 1 - alpha)]),
    method: 'percentile',
    resamples,
  };
}

/**
 * BCa (bias-corrected and accelerated) bootstrap interval of the mean (Efron 1987, JASA 82:171;
 * Efron & Tibshirani 1993, section 14.3). With θ̂ the mean, θ*_b the sorted bootstrap means and B resamples:
 *   z0 = Φ⁻¹((#{θ* < θ̂} + #{θ* = θ̂}/2) / B)                      (bias correction; = up to rounding, countBelowAndTies)
 *   a  = Σ(θ̄₍.₎ − θ₍ᵢ₎)³ / (6·(Σ(θ̄₍.₎ − θ₍ᵢ₎)²)^{3/2})               (jackknife acceleration; θ₍ᵢ₎ = mean without i)
 *   α_k = Φ(z0 + (z0 + z_k)/(1 − a·(z0 + z_k)))  for z_k = Φ⁻¹((1∓level)/2)
 *   interval = [quantile(θ*, α_1), quantile(θ*, α_2)].
 * Constant values give [c, c]. When z0 is infinite (every resample on one side of θ̂) or an α is
 * not finite, falls back to the percentile interval of the same resamples and says so in `method`.
 * Defaults: level 0.95, 10,000 resamples (BCa needs more than the percentile interval: Efron
 * recommends >= 1000 for its tail quantiles).
 */
export function bcaInterval(
  values: ArrayLike<number>,
  rng: Rng,
  options: { level?: number; resamples?: number; field?: string } = {},
): BootstrapInterval {
  const level = options.level ?? 0.95;
  checkLevel(level);
  const resamples = options.resamples ?? DEFAULT_RESAMPLES;
  const means = bootstrapMeans(values, rng, resamples, options.field);
  const n = values.length;
  const estimate = mean(values);
  const alpha = (1 - level) / 2;
  const percentile: BootstrapInterval = {
    estimate,
    ci: clampToData(values, [quantileOfSorted(means, alpha), quantileOfSorted(means, 1 - alpha)]),
    method: 'percentile',
    resamples,
  };
  if (means[0] === means[resamples - 1]) return { ...percentile, method: 'bca' };
  const { below, ties } = countBelowAndTies(means, estimate, values);
  const z0 = normalQuantile((below + ties / 2) / resamples);
  if (!Number.isFinite(z0)) return percentile;
  // Jackknife: the mean without value i is (n·θ̂ − x_i)/(n − 1).
  let num = 0;
  let den = 0;
  if (n > 1) {
    const total = estimate * n;
    const jack = new Float64Array(n);
    for (let i = 0; i < n; i++) jack[i] = (total - (values[i] as number)) / (n - 1);
    const jackMean = mean(jack);
    for (let i = 0; i < n; i++) {
      const d = jackMean - (jack[i] as number);
      num += d * d * d;
      den += d * d;
    }
  }
  // Tiny spreads (denormal squares) can underflow den^1.5 to 0: no acceleration then.
  const accel = num / (6 * den ** 1.5);
  const a = Number.isFinite(accel) ? accel : 0;
  const adjust = (z: number) => {
    const arg = z0 + (z0 + z) / (1 - a * (z0 + z));
    return Number.isNaN(arg) ? Number.NaN : normalCdf(arg);
  };
  const a1 = adjust(normalQuantile(alpha));
  const a2 = adjust(normalQuantile(1 - alpha));
  if (!(Number.isFinite(a1) && Number.isFinite(a2) && a1 >= 0 && a2 <= 1 && a1 <= a2)) return percentile;
  return {
    estimate,
    ci: clampToData(values, [quantileOfSorted(means, a1), quantileOfSorted(means, a2)]),
    method: 'bca',
    resamples,
  };
}

/**
 * The counts behind BCa's bias correction z0: bootstrap means below the estimate, and ties. A
 * resample that holds the same values as the sample (in another order) has the same mean in exact
 * arithmetic, but summed in another order it can differ from the estimate by a few ulp, and whether
 * it then counts as below, above or tied would depend on summation order (seen moving an interval
 * end by 6e-4). So a mean within `tol` of the estimate is a tie, with `tol = n·ε·max|x|`: twice the
 * bound on the rounding error of a mean of n values summed in any order ((n−1)·(ε/2)·Σ|x|/n).
 * Shapes: sortedMeans [B], values [n].
 */
function countBelowAndTies(
  sortedMeans: ArrayLike<number>,
  estimate: number,
  values: ArrayLike<number>,
): { below: number; ties: number } {
  let maxAbs = 0;
  for (let i = 0; i < values.length; i++) maxAbs = Math.max(maxAbs, Math.abs(values[i] as number));
  const tol = values.length * Number.EPSILON * maxAbs;
  let below = 0;
  let ties = 0;
  for (let b = 0; b < sortedMeans.length; b++) {
    const m = sortedMeans[b] as number;
    if (Math.abs(m - estimate) <= tol) ties++;
    else if (m < estimate) below++;
  }
  return { below, ties };
}

/** Guards against an ulp of rounding in the resampled means pushing an end outside [min, max] of the data. */
function clampToData(values: ArrayLike<number>, ci: [number, number]): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < values.length; i++) {
    const v = values[i] as number;
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [Math.min(Math.max(ci[0], lo), hi), Math.min(Math.max(ci[1], lo), hi)];
}
