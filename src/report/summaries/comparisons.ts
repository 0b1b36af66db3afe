/**
 * The paired comparisons of a multi-seed record (or of `labs compare`) as a terminal table, with one
 * line saying how each column was computed.
 */
import { formatNumber, table } from '../../experiments/text.js';
import type { Comparison } from '../../experiments/types.js';

/** `[lo, hi]` with 4 significant digits. */
export function intervalText(ci: readonly [number, number]): string {
  return `[${formatNumber(ci[0])}, ${formatNumber(ci[1])}]`;
}

/** A p-value to 3 significant digits ('<1e-4' style is not used: the Monte-Carlo floor is explicit). */
function pText(p: number): string {
  return formatNumber(p, 3);
}

/**
 * Table: arm, baseline, metric, n, diff, 95% CI, p, p_holm, mde80 (diff = arm − baseline, mean over
 * seeds), then the methods. `title` heads it. Empty input gives ''.
 */
export function formatComparisons(comparisons: readonly Comparison[], title: string): string {
  if (comparisons.length === 0) return '';
  const rows = comparisons.map((c) => [
    c.arm,
    c.baseline,
    c.metric,
    c.n,
    c.diff,
    intervalText(c.ci95),
    pText(c.p),
    pText(c.p_holm),
    c.mde80,
  ]);
  const exact = comparisons.filter((c) => c.p_method === 'exact').length;
  const pMethod =
    exact === comparisons.length
      ? 'exact sign-flip permutation (all 2^n sign vectors)'
      : exact === 0
        ? 'Monte-Carlo sign-flip permutation (100,000 seeded sign vectors)'
        : 'sign-flip permutation (exact for n <= 20, else 100,000 seeded Monte-Carlo sign vectors)';
  const fallback = comparisons.filter((c) => c.ci_method !== 'bca').length;
  return [
    title,
    table(['arm', 'baseline', 'metric', 'n', 'diff', '95% CI (paired BCa)', 'p', 'p_holm', 'mde80'], rows),
    `diff = mean over seeds of arm − baseline (paired by seed). 95% CI: BCa bootstrap of the paired differences, 10,000 resamples${fallback ? ` (${fallback} fell back to percentile)` : ''}. p: two-sided ${pMethod}. p_holm: Holm across these ${comparisons.length} comparisons. mde80: smallest paired difference detectable with 80% power at two-sided α = 0.05, (t_{0.975,n-1} + t_{0.80,n-1})·sd/√n — a non-significant diff smaller than mde80 means "too few seeds to tell", not "no effect".`,
  ].join('\n');
}
