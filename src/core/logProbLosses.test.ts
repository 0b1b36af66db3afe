import { describe, expect, it } from 'vitest';
import { policyLossGpg, policyLossReinforce } from './logProbLosses.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const shape = { rows: 2, cols: 3 };
const old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('GPG and REINFORCE', () => {
  it('GPG: -lp * A aggregated in the requested mode, no metrics', () => {
    const lp = Float64Array.of(-1, -2, -3, -4, -5, 1000);
    const adv = Float64Array.of(1, 1, 1, 2, 2, 2);
    const r = policyLossGpg({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
      lossAggMode: 'token-mean',
    });
    expect(r.loss).toBeCloseTo((1 + 2 + 3 + 8 + 10) / 5, 6);
    expect(r.metrics).toEqual({});
  });
  it('REINFORCE defaults to seq-mean-token-sum and reports ppo_kl = mean(rollout_lp - lp)', () => {
    const lp = Float64Array.of(-1, -2, -3, -4, -5, 1000);
    const adv = Float64Array.of(1, 1, 1, 2, 2, 2);
    const w = Float64Array.of(1, 1, 2, 0.5, 1, 1);
    const r = policyLossReinforce(
      { rolloutLogProb: old, logProb: lp, advantages: adv, responseMask: mask },
      shape,
      { rolloutIsWeights: w },
    );
    expect(r.loss).toBeCloseTo((1 + 2 + 6 + (4 + 10)) / 2, 6);
    // rollout_lp - lp over the 5 valid tokens: 0, 1, 2, 2, 3
    expect(r.metrics.ppo_kl).toBeCloseTo(8 / 5, 7);
  });
});
