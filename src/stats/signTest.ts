/**
 * The exact two-sided sign test of a median paired difference of 0 (Conover, Practical
 * Nonparametric Statistics, 3rd ed., section 3.4): count the pairs that went up (d > 0) and down (d < 0),
 * drop the ties (d = 0), and under the null the ups are Binomial(up + down, 1/2). It uses only the
 * signs, so one seed with a huge difference counts once: beside a mean and its interval it says
 * whether the effect is in most seeds or in a few. (scipy `binomtest(up, up + down, 0.5)`.)
 */
import { checkFiniteValues } from './checks.js';

export interface SignTestResult {
  /** Pairs with d > 0. */
  up: number;
  /** Pairs with d < 0. */
  down: number;
  /** Pairs with d = 0 (left out of the test). */
  ties: number;
  /** Two-sided exact p: min(1, 2·P(X <= min(up, down))), X ~ Binomial(up + down, 1/2); 1 when up + down = 0. */
  p: number;
}

/**
 * log C(n, k) by summing logs (n here is a number of seeds: at most a few thousand), exact enough
 * for the tail sum below to agree with scipy to 1e-12 relative.
 */
function logChoose(n: number, k: number): number {
  let s = 0;
  for (let i = 1; i <= k; i++) s += Math.log(n - k + i) - Math.log(i);
  return s;
}

/**
 * Exact two-sided sign test of the paired differences `d` (shape [n], finite). Example: 23 up, 6
 * down, 1 tie gives p = 0.00232 (2·Σ_{i<=6} C(29, i)/2^29; scipy binomtest(23, 29)). Errors: NON_FINITE
 * naming `field` and the position of a value that is not finite.
 */
export function signTest(d: ArrayLike<number>, field = 'differences'): SignTestResult {
  checkFiniteValues(d, field, 0);
  let up = 0;
  let down = 0;
  for (let i = 0; i < d.length; i++) {
    const v = d[i] as number;
    if (v > 0) up++;
    else if (v < 0) down++;
  }
  const n = up + down;
  const ties = d.length - n;
  if (n === 0) return { up, down, ties, p: 1 };
  const k = Math.min(up, down);
  let tail = 0;
  for (let i = 0; i <= k; i++) tail += Math.exp(logChoose(n, i) - n * Math.LN2);
  return { up, down, ties, p: Math.min(1, 2 * tail) };
}
