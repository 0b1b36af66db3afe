/**
 * Student's t distribution: CDF and quantile for any level and degrees of freedom, the project's one
 * t-quantile. It lives in the core because the multi-seed summary (`core/stats.ts` `summarize`, the
 * t interval of a mean) needs it and the core may not import from `src/stats/`
 * (docs/architecture.md §2); the power calculation (`stats/power.ts`, t_{0.80, n−1}) imports it
 * from here.
 */
import { LabError } from './errors.js';

/** ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms; relative error ~1e-15). */
function logGamma(x: number): number {
  const c = [
    0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406,
    12.507343278686905, -0.13857109526572012, 0.000009984369578019572, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  const y = x - 1;
  let a = c[0] as number;
  const t = y + 7.5;
  for (let i = 1; i < 9; i++) a += (c[i] as number) / (y + i);
  return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Continued fraction of the regularised incomplete beta (Numerical Recipes `betacf`, modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 500; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

/** I_x(a, b), the regularised incomplete beta function, for x in [0, 1]. */
function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  return x < (a + 1) / (a + b + 2)
    ? (front * betaContinuedFraction(a, b, x)) / a
    : 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

function checkDf(df: number): void {
  if (!(df > 0) || !Number.isFinite(df)) {
    throw new LabError('BAD_ARGUMENT', `df: expected degrees of freedom > 0, got ${df}`, {
      details: { field: 'df', value: df },
    });
  }
}

/**
 * P(T <= t) for T ~ Student's t with `df` degrees of freedom (scipy `t.cdf`):
 * `1 − I_{df/(df+t²)}(df/2, 1/2)/2` for t >= 0, symmetric for t < 0. Accurate to ~1e-14.
 * Errors: BAD_ARGUMENT for df <= 0 or NaN t.
 */
export function tCdf(t: number, df: number): number {
  checkDf(df);
  if (Number.isNaN(t)) throw new LabError('BAD_ARGUMENT', 'tCdf: t is NaN', { details: { field: 't' } });
  if (t === Number.POSITIVE_INFINITY) return 1;
  if (t === Number.NEGATIVE_INFINITY) return 0;
  const tail = 0.5 * incompleteBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/**
 * t_{p, df}, the p-quantile of Student's t (scipy `t.ppf(p, df)`), by bisection on {@link tCdf}
 * to ~1e-12 (called a few times per report, so speed does not matter). ±∞ at p = 0 / 1.
 * Errors: BAD_ARGUMENT for p outside [0, 1] or df <= 0.
 */
export function tQuantile(p: number, df: number): number {
  checkDf(df);
  if (!(p >= 0 && p <= 1)) {
    throw new LabError('BAD_ARGUMENT', `tQuantile: p must be in [0, 1], got ${p}`, {
      details: { field: 'p', value: p },
    });
  }
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  if (p === 0.5) return 0;
  if (p < 0.5) return -tQuantile(1 - p, df);
  let lo = 0;
  let hi = 1;
  while (tCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-13 * Math.max(1, hi); i++) {
    const mid = 0.5 * (lo + hi);
    if (tCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}
