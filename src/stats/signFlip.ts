/**
 * The paired sign-flip permutation test (Fisher 1935's randomisation test for paired data): under
 * H0 "arm and baseline are exchangeable within a seed", each paired difference d_i is as likely to be
 * +d_i as −d_i. The statistic is |Σ d_i| (equivalently |mean d|); the two-sided p-value is the share
 * of the 2^n sign assignments whose |Σ s_i·d_i| is at least the observed one.
 */
import type { Rng } from '../random.js';
import { checkFiniteValues, checkInteger } from './checks.js';

/** Up to this many pairs the test enumerates all 2^n sign assignments (2^20 ≈ 1M, ~10 ms). */
export const EXACT_MAX_N = 20;
/** Monte-Carlo sign assignments beyond {@link EXACT_MAX_N}: the p-value's standard error is then <= 0.0016. */
export const DEFAULT_PERMUTATIONS = 100_000;

export interface SignFlipResult {
  /** Two-sided p-value. */
  p: number;
  /** 'exact': all 2^n assignments; 'monte-carlo': `permutations` random ones from the stream passed in. */
  method: 'exact' | 'monte-carlo';
  /** Sign assignments evaluated (2^n when exact). */
  permutations: number;
}

/**
 * Two-sided paired sign-flip permutation test of mean(d) = 0.
 * - n <= `exactMaxN` (default 20): exact, p = #{s ∈ {±1}^n : |Σ s_i d_i| >= |Σ d_i|} / 2^n, enumerated
 *   in Gray-code order (one sign changes per step, so each step costs O(1)); `rng` is not used.
 * - beyond: Monte-Carlo with `permutations` (default 100,000) uniform sign vectors from `rng`,
 *   p = (1 + #{|Σ s_i d_i| >= |Σ d_i|}) / (1 + permutations) (Phipson & Smyth 2010: the observed
 *   assignment counts, so p is never 0).
 * "At least" allows a relative tolerance of 1e-9·Σ|d_i| so that rounding does not drop ties.
 * Zero differences carry no sign and change nothing. All d_i = 0 gives p = 1.
 * Shapes: d [n]. Errors: BAD_ARGUMENT empty d, NON_FINITE value (names the position).
 */
export function signFlipTest(
  d: ArrayLike<number>,
  rng: Rng,
  options: { exactMaxN?: number; permutations?: number; field?: string } = {},
): SignFlipResult {
  const field = options.field ?? 'differences';
  checkFiniteValues(d, field);
  const exactMaxN = options.exactMaxN ?? EXACT_MAX_N;
  checkInteger(exactMaxN, 'exactMaxN', 0, 30);
  const permutations = options.permutations ?? DEFAULT_PERMUTATIONS;
  checkInteger(permutations, 'permutations', 1);
  const n = d.length;
  let observed = 0;
  let scale = 0;
  for (let i = 0; i < n; i++) {
    observed += d[i] as number;
    scale += Math.abs(d[i] as number);
  }
  if (scale === 0) return { p: 1, method: n <= exactMaxN ? 'exact' : 'monte-carlo', permutations: 0 };
  const threshold = Math.abs(observed) - 1e-9 * scale;
  if (n <= exactMaxN) {
    const signs = new Int8Array(n).fill(1);
    const total = 2 ** n;
    let t = observed;
    let count = 1; // the identity assignment
    for (let k = 1; k < total; k++) {
      // Gray code: step k flips the sign of the lowest set bit of k.
      const j = 31 - Math.clz32(k & -k);
      signs[j] = -(signs[j] as number);
      t += 2 * (signs[j] as number) * (d[j] as number);
      if (Math.abs(t) >= threshold) count++;
    }
    return { p: count / total, method: 'exact', permutations: total };
  }
  let count = 0;
  for (let r = 0; r < permutations; r++) {
    let t = 0;
    let bits = 0;
    let left = 0;
    for (let i = 0; i < n; i++) {
      if (left === 0) {
        bits = (rng.next() * 4294967296) >>> 0; // 32 fair signs per draw
        left = 32;
      }
      t += bits & 1 ? (d[i] as number) : -(d[i] as number);
      bits >>>= 1;
      left--;
    }
    if (Math.abs(t) >= threshold) count++;
  }
  return { p: (1 + count) / (1 + permutations), method: 'monte-carlo', permutations };
}
