import { describe, expect, it } from 'vitest';
import { policyLossSapo } from './sapoLoss.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const shape = { rows: 2, cols: 3 };
const old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('SAPO', () => {
  it('gate = sigmoid(tau (r - 1)) * 4 / tau; at r = 1 the loss is -2A / tau', () => {
    const lp = Float64Array.from(old);
    const adv = Float64Array.of(1, 2, 3, -1, -1, 0);
    const r = policyLossSapo({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
      tauPos: 3,
      tauNeg: 0.5,
    });
    const expected = [-2 / 3, -4 / 3, -2, 4, 4];
    for (const [i, v] of expected.entries()) expect(r.perTokenLoss[i]).toBeCloseTo(v, 6);
    expect(r.loss).toBeCloseTo((-4 / 3 + 4) / 2, 6);
  });
  it('uses tau_neg where A <= 0 and clamps the log-ratio at 20', () => {
    const r = policyLossSapo(
      {
        oldLogProb: Float64Array.of(0, 0),
        logProb: Float64Array.of(Math.log(1.5), 30),
        advantages: Float64Array.of(-1, 1),
        responseMask: Uint8Array.of(1, 1),
      },
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
