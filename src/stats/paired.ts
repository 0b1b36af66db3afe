/**
 * One paired comparison of an arm against its baseline over the same seeds: the mean difference,
 * its BCa bootstrap interval, the sign-flip permutation p-value and the minimal detectable
 * difference at 80% power. Holm's adjustment across an experiment's comparisons is applied by the
 * caller ({@link holmAdjust}), since it needs all of them.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { bcaInterval, DEFAULT_RESAMPLES } from './bootstrap.js';
import { checkFiniteValues } from './checks.js';
import { minimalDetectableDifference } from './power.js';
import { DEFAULT_PERMUTATIONS, EXACT_MAX_N, signFlipTest } from './signFlip.js';

export interface PairedComparison {
  /** Pairs used. */
  n: number;
  /** mean_i (arm_i − baseline_i). */
  diff: number;
  /** 95% paired bootstrap interval of `diff` (BCa; see `ci_method`). */
  ci95: [number, number];
  ci_method: 'bca' | 'percentile';
  /** Two-sided sign-flip permutation p-value. */
  p: number;
  p_method: 'exact' | 'monte-carlo';
  /** Sample sd (n − 1) of the paired differences. */
  sd: number;
  /** Minimal detectable difference at 80% power, two-sided α = 0.05 (t-based); null for n < 2. */
  mde80: number | null;
}

export interface PairedOptions {
  resamples?: number;
  permutations?: number;
  exactMaxN?: number;
  field?: string;
}

/**
 * Compares `arm` with `baseline`, paired by position (seed i of one with seed i of the other).
 * The bootstrap and, beyond {@link EXACT_MAX_N} pairs, the permutation test draw from two streams
 * forked from `rng` ('bootstrap', 'permutation'), so either can change without moving the other.
 * Defaults: 10,000 bootstrap resamples, exact permutation up to 20 pairs, else 100,000 sign vectors.
 * Shapes: arm [n], baseline [n]. Errors: BAD_ARGUMENT on a length mismatch or n = 0, NON_FINITE value.
 */
export function pairedComparison(
  arm: ArrayLike<number>,
  baseline: ArrayLike<number>,
  rng: Rng,
  options: PairedOptions = {},
): PairedComparison {
  const field = options.field ?? 'paired';
  if (arm.length !== baseline.length) {
    throw new LabError(
      'BAD_ARGUMENT',
      `${field}: arm has ${arm.length} values but baseline has ${baseline.length}; pairs need equal lengths`,
      { details: { field } },
    );
  }
  checkFiniteValues(arm, `${field}.arm`);
  checkFiniteValues(baseline, `${field}.baseline`);
  const n = arm.length;
  const d = new Float64Array(n);
  for (let i = 0; i < n; i++) d[i] = (arm[i] as number) - (baseline[i] as number);
  let sum = 0;
  for (const v of d) sum += v;
  const diff = sum / n;
  let ss = 0;
  for (const v of d) ss += (v - diff) * (v - diff);
  const sd = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  const boot = bcaInterval(d, rng.fork('bootstrap'), {
    resamples: options.resamples ?? DEFAULT_RESAMPLES,
    field: `${field}.differences`,
  });
  const perm = signFlipTest(d, rng.fork('permutation'), {
    exactMaxN: options.exactMaxN ?? EXACT_MAX_N,
    permutations: options.permutations ?? DEFAULT_PERMUTATIONS,
    field: `${field}.differences`,
  });
  return {
    n,
    diff,
    ci95: boot.ci,
    ci_method: boot.method,
    p: perm.p,
    p_method: perm.method,
    sd,
    mde80: n >= 2 ? minimalDetectableDifference(sd, n) : null,
  };
}
