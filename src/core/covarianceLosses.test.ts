import { describe, expect, it } from 'vitest';
import { policyLossClipCov, policyLossKlCov } from './covarianceLosses.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const _shape = { rows: 2, cols: 3 };
const _old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const _mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('KL-Cov and Clip-Cov', () => {
  // one row, 4 valid tokens; old = 0 so lp is the log-ratio
  const o = Float64Array.of(0, 0, 0, 0, 0);
  const lp = Float64Array.of(-0.5, 0.1, 0.3, -0.2, 9);
  const adv = Float64Array.of(2, 2, -1, -1, 5);
  const m = Uint8Array.of(1, 1, 1, 1, 0);
  const sh = { rows: 1, cols: 5 };
  // means over valid tokens: A 0.5, lp -0.075; cov = (A - 0.5)(lp + 0.075) = [-0.6375, 0.2625, -0.5625, 0.1875]
  it('KL-Cov adds ppo_kl_coef·|lp − old| to the top-k covariance tokens', () => {
    const r = policyLossKlCov({ oldLogProb: o, logProb: lp, advantages: adv, responseMask: m }, sh, {
      klCovRatio: 0.5,
      ppoKlCoef: 0.1,
    });
    const base = [0, 1, 2, 3].map((i) => -(adv[i] as number) * Math.exp(lp[i] as number));
    base[1] = (base[1] as number) + 0.1 * 0.1; // cov 0.2625 (largest)
    base[3] = (base[3] as number) + 0.1 * 0.2; // cov 0.1875 (second)
    expect(r.loss).toBeCloseTo(base.reduce((a, v) => a + v, 0) / 4, 6);
    expect(r.metrics.ppo_kl).toBeCloseTo((0.5 + 0.1 + 0.3 + 0.2) / (4 + 1e-8), 9);
  });
  it('Clip-Cov zeroes the loss of unclipped tokens whose covariance lies in (lb, ub)', () => {
    const r = policyLossClipCov({ oldLogProb: o, logProb: lp, advantages: adv, responseMask: m }, sh, {
      clipCovRatio: 1,
      clipCovLb: 0.15,
      clipCovUb: 1,
    });
    // cut: tokens 1 (cov 0.2625) and 3 (0.1875), both inside the clip range (not clipped already)
    // kept: token 0 (A = 2, r = e^-0.5 below the range: -A·r) and token 2 (A = -1, r = e^0.3: -A·r, no dual clip)
    expect(r.loss).toBeCloseTo((-2 * Math.exp(-0.5) + Math.exp(0.3)) / 4, 6);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(2 / 4, 7);
  });
  it('Clip-Cov needs a random source when only some candidates are cut, and then cuts exactly that many', () => {
    expect(() =>
      policyLossClipCov({ oldLogProb: o, logProb: lp, advantages: adv, responseMask: m }, sh, {
        clipCovRatio: 0.25,
        clipCovLb: 0.15,
        clipCovUb: 1,
      }),
    ).toThrow(/random/);
    let x = 3;
    const random = () => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x / 4294967296;
    };
    const r = policyLossClipCov({ oldLogProb: o, logProb: lp, advantages: adv, responseMask: m }, sh, {
      clipCovRatio: 0.25,
      clipCovLb: 0.15,
      clipCovUb: 1,
      random,
    });
    expect(r.metrics.pg_clipfrac).toBeCloseTo(1 / 4, 7);
    const zeros = Array.from(r.perTokenLoss.subarray(0, 4)).filter((v) => v === 0).length;
    expect(zeros).toBe(1);
  });
});
