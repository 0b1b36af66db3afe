/**
 * The standard normal distribution: CDF Φ and quantile Φ⁻¹, to double precision. Used for
 * z-quantiles (Wilson's z = Φ⁻¹(0.975) = 1.959964) and for the BCa bootstrap's bias correction.
 */
import { LabError } from '../core/errors.js';

/**
 * Φ(x) = P(Z <= x) for Z ~ N(0, 1) (scipy `norm.cdf`). Marsaglia's (2004, J. Stat. Softw. 11(4))
 * Taylor series `Φ(x) = 1/2 + φ(x)·(x + x³/3 + x⁵/(3·5) + ...)` for |x| <= 8 (absolute error
 * about 1e-15), and the limits 0 / 1 beyond |x| > 8.3 where Φ is within 1e-16 of them.
 * NaN in, NaN out is refused: BAD_ARGUMENT.
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) throw new LabError('BAD_ARGUMENT', 'normalCdf: x is NaN', { details: { field: 'x' } });
  if (x < -8.3) return 0;
  if (x > 8.3) return 1;
  let s = x;
  let t = 0;
  let b = x;
  const q = x * x;
  let i = 1;
  while (s !== t) {
    t = s;
    i += 2;
    b *= q / i;
    s = t + b;
  }
  return 0.5 + s * Math.exp(-0.5 * q - 0.9189385332046728);
}

/**
 * Φ⁻¹(p), the standard normal quantile (scipy `norm.ppf`): Wichura's algorithm AS 241 (PPND16,
 * Applied Statistics 37, 1988), relative error about 1e-16 over (0, 1). Φ⁻¹(0) = −∞, Φ⁻¹(1) = +∞.
 * Errors: BAD_ARGUMENT for p outside [0, 1] or NaN.
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) {
    throw new LabError('BAD_ARGUMENT', `normalQuantile: p must be in [0, 1], got ${p}`, {
      details: { field: 'p', value: p },
    });
  }
  if (p === 0) return Number.NEGATIVE_INFINITY;
  if (p === 1) return Number.POSITIVE_INFINITY;
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (
      (q *
        (((((((r * 2509.0809287301227 + 33430.57558358813) * r + 67265.7709270087) * r + 45921.95393154987) *
          r +
          13731.69376550946) *
          r +
          1971.5909503065513) *
          r +
          133.14166789178438) *
          r +
          3.3871328727963665)) /
      (((((((r * 5226.495278852546 + 28729.085735721943) * r + 39307.89580009271) * r + 21213.794301586597) *
        r +
        5394.196021424751) *
        r +
        687.1870074920579) *
        r +
        42.31333070160091) *
        r +
        1)
    );
  }
  let r = q < 0 ? p : 1 - p;
  r = Math.sqrt(-Math.log(r));
  let x: number;
  if (r <= 5) {
    r -= 1.6;
    x =
      (((((((r * 0.0007745450142783414 + 0.022723844989269184) * r + 0.2417807251774506) * r +
        1.2704582524523684) *
        r +
        3.6478483247632045) *
        r +
        5.769497221460691) *
        r +
        4.630337846156546) *
        r +
        1.4234371107496835) /
      (((((((r * 1.0507500716444169e-9 + 0.0005475938084995345) * r + 0.015198666563616457) * r +
        0.14810397642748008) *
        r +
        0.6897673349851) *
        r +
        1.6763848301838038) *
        r +
        2.053191626637759) *
        r +
        1);
  } else {
    r -= 5;
    x =
      (((((((r * 2.0103343992922881e-7 + 0.000027115555687434876) * r + 0.0012426609473880784) * r +
        0.026532189526576124) *
        r +
        0.29656057182850487) *
        r +
        1.7848265399172913) *
        r +
        5.463784911164114) *
        r +
        6.657904643501103) /
      (((((((r * 2.0442631033899397e-15 + 1.421511758316446e-7) * r + 0.000018463183175100548) * r +
        0.0007868691311456133) *
        r +
        0.014875361290850615) *
        r +
        0.1369298809227358) *
        r +
        0.599832206555888) *
        r +
        1);
  }
  return q < 0 ? -x : x;
}

/** z_{0.975} = Φ⁻¹(0.975) = 1.959963984540054, the two-sided 95% normal quantile. */
export const Z975 = 1.959963984540054;
