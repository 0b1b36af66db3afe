import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import {
  policyLossCispo,
  policyLossClipCov,
  policyLossGeoMean,
  policyLossGpg,
  policyLossGspo,
  policyLossKlCov,
  policyLossReinforce,
  policyLossSapo,
} from './policyLosses.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const shape = { rows: 2, cols: 3 };
const old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('GSPO', () => {
  it('uses one sequence ratio per row (mean token log-ratio), clipped, seq-mean-token-mean', () => {
    // row 0 log-ratios 0.3, 0.3, 0.3 -> s = e^0.3 = 1.35 > 1.28; row 1: -0.1, -0.3 -> s = e^-0.2 = 0.8187 (in range)
    const lp = Float64Array.of(-0.7, -0.7, -0.7, -2.1, -2.3, 99);
    const adv = Float64Array.of(1, 1, 1, -1, -1, -1);
    const r = policyLossGspo(old, lp, adv, mask, shape, { clipRatioLow: 0.2, clipRatioHigh: 0.28 });
    const row0 = -1 * Math.min(Math.exp(0.3), 1.28);
    const row1 = Math.exp(-0.2);
    expect(r.loss).toBeCloseTo((row0 + row1) / 2, 6);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(3 / 5, 7);
    expect(r.metrics.ppo_kl).toBeCloseTo(-(0.9 - 0.4) / 5, 7);
    expect(r.metrics.pg_clipfrac_lower).toBe(0);
  });
  it('caps the log sequence ratio at 10 (no overflow for long drifting sequences)', () => {
    const r = policyLossGspo(
      Float64Array.of(0),
      Float64Array.of(50),
      Float64Array.of(-1),
      Uint8Array.of(1),
      { rows: 1, cols: 1 },
      {},
    );
    expect(r.loss).toBeCloseTo(Math.exp(10), 2);
  });
});

describe('SAPO', () => {
  it('gate = sigmoid(tau (r - 1)) * 4 / tau; at r = 1 the loss is -2A / tau', () => {
    const lp = Float64Array.from(old);
    const adv = Float64Array.of(1, 2, 3, -1, -1, 0);
    const r = policyLossSapo(old, lp, adv, mask, shape, { tauPos: 3, tauNeg: 0.5 });
    const expected = [-2 / 3, -4 / 3, -2, 4, 4];
    for (const [i, v] of expected.entries()) expect(r.perTokenLoss[i]).toBeCloseTo(v, 6);
    expect(r.loss).toBeCloseTo((-4 / 3 + 4) / 2, 6);
  });
  it('uses tau_neg where A <= 0 and clamps the log-ratio at 20', () => {
    const r = policyLossSapo(
      Float64Array.of(0, 0),
      Float64Array.of(Math.log(1.5), 30),
      Float64Array.of(-1, 1),
      Uint8Array.of(1, 1),
      { rows: 1, cols: 2 },
      { tauPos: 1, tauNeg: 2 },
    );
    const gateNeg = (1 / (1 + Math.exp(-2 * 0.5))) * 2;
    const gatePos = (1 / (1 + Math.exp(-(Math.exp(20) - 1)))) * 4;
    expect(r.perTokenLoss[0]).toBeCloseTo(gateNeg, 5);
    expect(r.perTokenLoss[1]).toBeCloseTo(-gatePos, 5);
    expect(r.metrics.ppo_kl).toBeCloseTo(-(Math.log(1.5) + 20) / (2 + 1e-8), 9);
  });
});

describe('CISPO', () => {
  it('per token -clip(r) * A * lp; clip fraction counts r != clip(r)', () => {
    const lp = Float64Array.of(-1 + Math.log(1.5), -1, -1 + Math.log(0.5), -2, -2, 0);
    const adv = Float64Array.of(1, 1, 1, 2, 2, 2);
    const r = policyLossCispo(old, lp, adv, mask, shape, {
      clipRatio: 0.2,
      lossAggMode: 'seq-mean-token-sum',
    });
    const row0 = -1.2 * (lp[0] as number) - 1 * -1 - 0.8 * (lp[2] as number);
    const row1 = -2 * -2 * 2;
    expect(r.loss).toBeCloseTo((row0 + row1) / 2, 6);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(2 / 5, 7);
  });
});

describe('GMPO (geo_mean)', () => {
  it('clips log-ratios on the pessimistic side per sign of A and averages over all rows', () => {
    // row 0, A > 0: log-ratios 0.6 (clipped to 0.4), -0.6 (kept: lower side is not clipped for A > 0)
    // row 1, A < 0: log-ratios -0.6 (clipped to -0.4), 0.6 (kept)
    const o = Float64Array.of(0, 0, 0, 0);
    const lp = Float64Array.of(0.6, -0.6, -0.6, 0.6);
    const adv = Float64Array.of(1, 3, -2, -2);
    const r = policyLossGeoMean(
      o,
      lp,
      adv,
      Uint8Array.of(1, 1, 1, 1),
      { rows: 2, cols: 2 },
      { clipRatio: 0.4 },
    );
    const d = 2 + 1e-8;
    const row0 = (-4 / d) * Math.exp((0.4 - 0.6) / d);
    const row1 = (4 / d) * Math.exp((-0.4 + 0.6) / d);
    expect(r.loss).toBeCloseTo((row0 + row1) / 2, 9);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(2 / 4, 7);
    expect(r.metrics.pg_clipfrac_lower).toBeCloseTo(2 / 4, 7);
  });
  it('a fully masked row contributes 0 but still counts in the mean over B', () => {
    const r = policyLossGeoMean(
      Float64Array.of(0, 0),
      Float64Array.of(0, 0),
      Float64Array.of(2, 2),
      Uint8Array.of(1, 0),
      { rows: 2, cols: 1 },
    );
    expect(r.loss).toBeCloseTo(-2 / 2, 7);
    expect(r.perSequenceLoss[1]).toBe(-0);
  });
});

describe('GPG and REINFORCE', () => {
  it('GPG: -lp * A aggregated in the requested mode, no metrics', () => {
    const lp = Float64Array.of(-1, -2, -3, -4, -5, 1000);
    const adv = Float64Array.of(1, 1, 1, 2, 2, 2);
    const r = policyLossGpg(old, lp, adv, mask, shape, { lossAggMode: 'token-mean' });
    expect(r.loss).toBeCloseTo((1 + 2 + 3 + 8 + 10) / 5, 6);
    expect(r.metrics).toEqual({});
  });
  it('REINFORCE defaults to seq-mean-token-sum and reports ppo_kl = mean(rollout_lp - lp)', () => {
    const lp = Float64Array.of(-1, -2, -3, -4, -5, 1000);
    const adv = Float64Array.of(1, 1, 1, 2, 2, 2);
    const w = Float64Array.of(1, 1, 2, 0.5, 1, 1);
    const r = policyLossReinforce(old, lp, adv, mask, shape, { rolloutIsWeights: w });
    expect(r.loss).toBeCloseTo((1 + 2 + 6 + (4 + 10)) / 2, 6);
    // rollout_lp - lp over the 5 valid tokens: 0, 1, 2, 2, 3
    expect(r.metrics.ppo_kl).toBeCloseTo(8 / 5, 7);
  });
});

describe('bad input is a LabError naming the field', () => {
  const lp = Float64Array.of(-1, -1, -1, -2, -2, -2);
  const adv = Float64Array.of(1, 1, 1, 1, 1, 1);
  it('non-finite log-prob under the mask', () => {
    const bad = Float64Array.from(lp);
    bad[4] = Number.NaN;
    for (const f of [policyLossGspo, policyLossSapo, policyLossCispo, policyLossGeoMean, policyLossGpg]) {
      expectLabError(() => f(old, bad, adv, mask, shape), 'NON_FINITE', 'log_prob', 'row 1, token 1');
    }
    expectLabError(() => policyLossReinforce(bad, lp, adv, mask, shape), 'NON_FINITE', 'rollout_log_prob');
  });
  it('non-finite padding: NON_FINITE where verl multiplies it into a row (GSPO valid rows, GMPO all rows)', () => {
    const pad = Float64Array.from(lp);
    pad[5] = Number.NaN; // row 1, token 2 is padding
    expectLabError(
      () => policyLossGspo(old, pad, adv, mask, shape),
      'NON_FINITE',
      'log_prob',
      'row 1, token 2',
    );
    expectLabError(
      () => policyLossGeoMean(old, pad, adv, mask, shape),
      'NON_FINITE',
      'log_prob',
      'row 1, token 2',
    );
    // a fully masked row drops out of GSPO's seq-mean-token-mean but not out of GMPO's plain mean
    const m2 = Uint8Array.of(1, 1, 1, 0, 0, 0);
    expect(Number.isFinite(policyLossGspo(old, pad, adv, m2, shape).loss)).toBe(true);
    expectLabError(() => policyLossGeoMean(old, pad, adv, m2, shape), 'NON_FINITE', 'row 1, token 2');
    // token-mean losses that compute per token ignore padding, as verl
    expect(Number.isFinite(policyLossGpg(old, pad, adv, mask, shape).loss)).toBe(true);
  });
  it('shape mismatch, bad mask, bad mode, bad tau', () => {
    expectLabError(() => policyLossGpg(old, lp.subarray(1), adv, mask, shape), 'SHAPE_MISMATCH', 'log_prob');
    expectLabError(
      () => policyLossCispo(old, lp, adv, Float32Array.of(1, 1, 1, 1, 1, 0.5), shape),
      'BAD_MASK',
      'response_mask',
    );
    expectLabError(
      () => policyLossGpg(old, lp, adv, mask, shape, { lossAggMode: 'x' as never }),
      'UNKNOWN_MODE',
    );
    expectLabError(() => policyLossSapo(old, lp, adv, mask, shape, { tauNeg: 0 }), 'BAD_ARGUMENT', 'tau_neg');
  });
  it('all-zero mask: EMPTY_MASK for the seq-mean losses (verl: NaN)', () => {
    const zero = new Uint8Array(6);
    expectLabError(() => policyLossGspo(old, lp, adv, zero, shape), 'EMPTY_MASK');
    expectLabError(() => policyLossSapo(old, lp, adv, zero, shape), 'EMPTY_MASK');
  });
});

describe('KL-Cov and Clip-Cov', () => {
  // one row, 4 valid tokens; old = 0 so lp is the log-ratio
  const o = Float64Array.of(0, 0, 0, 0, 0);
  const lp = Float64Array.of(-0.5, 0.1, 0.3, -0.2, 9);
  const adv = Float64Array.of(2, 2, -1, -1, 5);
  const m = Uint8Array.of(1, 1, 1, 1, 0);
  const sh = { rows: 1, cols: 5 };
  // means over valid tokens: A 0.5, lp -0.075; cov = (A - 0.5)(lp + 0.075) = [-0.6375, 0.2625, -0.5625, 0.1875]
  it('KL-Cov adds ppo_kl_coef·|lp − old| to the top-k covariance tokens', () => {
    const r = policyLossKlCov(o, lp, adv, m, sh, { klCovRatio: 0.5, ppoKlCoef: 0.1 });
    const base = [0, 1, 2, 3].map((i) => -(adv[i] as number) * Math.exp(lp[i] as number));
    base[1] = (base[1] as number) + 0.1 * 0.1; // cov 0.2625 (largest)
    base[3] = (base[3] as number) + 0.1 * 0.2; // cov 0.1875 (second)
    expect(r.loss).toBeCloseTo(base.reduce((a, v) => a + v, 0) / 4, 6);
    expect(r.metrics.ppo_kl).toBeCloseTo((0.5 + 0.1 + 0.3 + 0.2) / (4 + 1e-8), 9);
  });
  it('Clip-Cov zeroes the loss of unclipped tokens whose covariance lies in (lb, ub)', () => {
    const r = policyLossClipCov(o, lp, adv, m, sh, { clipCovRatio: 1, clipCovLb: 0.15, clipCovUb: 1 });
    // cut: tokens 1 (cov 0.2625) and 3 (0.1875), both inside the clip range (not clipped already)
    // kept: token 0 (A = 2, r = e^-0.5 below the range: -A·r) and token 2 (A = -1, r = e^0.3: -A·r, no dual clip)
    expect(r.loss).toBeCloseTo((-2 * Math.exp(-0.5) + Math.exp(0.3)) / 4, 6);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(2 / 4, 7);
  });
  it('Clip-Cov needs a random source when only some candidates are cut, and then cuts exactly that many', () => {
    expect(() =>
      policyLossClipCov(o, lp, adv, m, sh, { clipCovRatio: 0.25, clipCovLb: 0.15, clipCovUb: 1 }),
    ).toThrow(/random/);
    let x = 3;
    const random = () => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      return x / 4294967296;
    };
    const r = policyLossClipCov(o, lp, adv, m, sh, {
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
