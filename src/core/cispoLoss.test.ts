import { describe, expect, it } from 'vitest';
import { policyLossCispo } from './cispoLoss.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const shape = { rows: 2, cols: 3 };
const old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('CISPO', () => {
  it('per token -clip(r) * A * lp; clip fraction counts r != clip(r)', () => {
    const lp = Float64Array.of(-1 + Math.log(1.5), -1, -1 + Math.log(0.5), -2, -2, 0);
    const adv = Float64Array.of(1, 1, 1, 2, 2, 2);
    const r = policyLossCispo({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
      clipRatio: 0.2,
      lossAggMode: 'seq-mean-token-sum',
    });
    const row0 = -1.2 * (lp[0] as number) - 1 * -1 - 0.8 * (lp[2] as number);
    const row1 = -2 * -2 * 2;
    expect(r.loss).toBeCloseTo((row0 + row1) / 2, 6);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(2 / 5, 7);
  });
});
