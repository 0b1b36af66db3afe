import { describe, expect, it } from 'vitest';
import { policyLossGeoMean, policyLossGspo } from './sequenceRatioLosses.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const shape = { rows: 2, cols: 3 };
const old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('GSPO', () => {
  it('uses one sequence ratio per row (mean token log-ratio), clipped, seq-mean-token-mean', () => {
    // row 0 log-ratios 0.3, 0.3, 0.3 -> s = e^0.3 = 1.35 > 1.28; row 1: -0.1, -0.3 -> s = e^-0.2 = 0.8187 (in range)
    const lp = Float64Array.of(-0.7, -0.7, -0.7, -2.1, -2.3, 99);
    const adv = Float64Array.of(1, 1, 1, -1, -1, -1);
    const r = policyLossGspo({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
      clipRatioLow: 0.2,
      clipRatioHigh: 0.28,
    });
    const row0 = -1 * Math.min(Math.exp(0.3), 1.28);
    const row1 = Math.exp(-0.2);
    expect(r.loss).toBeCloseTo((row0 + row1) / 2, 6);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(3 / 5, 7);
    expect(r.metrics.ppo_kl).toBeCloseTo(-(0.9 - 0.4) / 5, 7);
    expect(r.metrics.pg_clipfrac_lower).toBe(0);
  });
  it('caps the log sequence ratio at 10 (no overflow for long drifting sequences)', () => {
    const r = policyLossGspo(
      {
        oldLogProb: Float64Array.of(0),
        logProb: Float64Array.of(50),
        advantages: Float64Array.of(-1),
        responseMask: Uint8Array.of(1),
      },
      { rows: 1, cols: 1 },
      {},
    );
    expect(r.loss).toBeCloseTo(Math.exp(10), 2);
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
      { oldLogProb: o, logProb: lp, advantages: adv, responseMask: Uint8Array.of(1, 1, 1, 1) },
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
      {
        oldLogProb: Float64Array.of(0, 0),
        logProb: Float64Array.of(0, 0),
        advantages: Float64Array.of(2, 2),
        responseMask: Uint8Array.of(1, 0),
      },
      { rows: 2, cols: 1 },
    );
    expect(r.loss).toBeCloseTo(-2 / 2, 7);
    expect(r.perSequenceLoss[1]).toBe(-0);
  });
});
