import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { policyLossCispo } from './cispoLoss.js';
import { policyLossGpg, policyLossReinforce } from './logProbLosses.js';
import { policyLossSapo } from './sapoLoss.js';
import { policyLossGeoMean, policyLossGspo } from './sequenceRatioLosses.js';

// Two rows of three tokens; row 1 has one padded token holding garbage.
const shape = { rows: 2, cols: 3 };
const old = Float64Array.of(-1, -1, -1, -2, -2, -2);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('bad input is a LabError naming the field', () => {
  const lp = Float64Array.of(-1, -1, -1, -2, -2, -2);
  const adv = Float64Array.of(1, 1, 1, 1, 1, 1);
  it('non-finite log-prob under the mask', () => {
    const bad = Float64Array.from(lp);
    bad[4] = Number.NaN;
    for (const f of [policyLossGspo, policyLossSapo, policyLossCispo, policyLossGeoMean, policyLossGpg]) {
      expectLabError(
        () => f({ oldLogProb: old, logProb: bad, advantages: adv, responseMask: mask }, shape),
        'NON_FINITE',
        'log_prob',
        'row 1, token 1',
      );
    }
    expectLabError(
      () =>
        policyLossReinforce({ rolloutLogProb: bad, logProb: lp, advantages: adv, responseMask: mask }, shape),
      'NON_FINITE',
      'rollout_log_prob',
    );
  });
  it('non-finite padding: NON_FINITE where verl multiplies it into a row (GSPO valid rows, GMPO all rows)', () => {
    const pad = Float64Array.from(lp);
    pad[5] = Number.NaN; // row 1, token 2 is padding
    expectLabError(
      () => policyLossGspo({ oldLogProb: old, logProb: pad, advantages: adv, responseMask: mask }, shape),
      'NON_FINITE',
      'log_prob',
      'row 1, token 2',
    );
    expectLabError(
      () => policyLossGeoMean({ oldLogProb: old, logProb: pad, advantages: adv, responseMask: mask }, shape),
      'NON_FINITE',
      'log_prob',
      'row 1, token 2',
    );
    // a fully masked row drops out of GSPO's seq-mean-token-mean but not out of GMPO's plain mean
    const m2 = Uint8Array.of(1, 1, 1, 0, 0, 0);
    expect(
      Number.isFinite(
        policyLossGspo({ oldLogProb: old, logProb: pad, advantages: adv, responseMask: m2 }, shape).loss,
      ),
    ).toBe(true);
    expectLabError(
      () => policyLossGeoMean({ oldLogProb: old, logProb: pad, advantages: adv, responseMask: m2 }, shape),
      'NON_FINITE',
      'row 1, token 2',
    );
    // token-mean losses that compute per token ignore padding, as verl
    expect(
      Number.isFinite(
        policyLossGpg({ oldLogProb: old, logProb: pad, advantages: adv, responseMask: mask }, shape).loss,
      ),
    ).toBe(true);
  });
  it('shape mismatch, bad mask, bad mode, bad tau', () => {
    expectLabError(
      () =>
        policyLossGpg(
          { oldLogProb: old, logProb: lp.subarray(1), advantages: adv, responseMask: mask },
          shape,
        ),
      'SHAPE_MISMATCH',
      'log_prob',
    );
    expectLabError(
      () =>
        policyLossCispo(
          {
            oldLogProb: old,
            logProb: lp,
            advantages: adv,
            responseMask: Float32Array.of(1, 1, 1, 1, 1, 0.5),
          },
          shape,
        ),
      'BAD_MASK',
      'response_mask',
    );
    expectLabError(
      () =>
        policyLossGpg({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          lossAggMode: 'x' as never,
        }),
      'UNKNOWN_MODE',
    );
    expectLabError(
      () =>
        policyLossSapo({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          tauNeg: 0,
        }),
      'BAD_ARGUMENT',
      'tau_neg',
    );
  });
  it('all-zero mask: EMPTY_MASK for the seq-mean losses (verl: NaN)', () => {
    const zero = new Uint8Array(6);
    expectLabError(
      () => policyLossGspo({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: zero }, shape),
      'EMPTY_MASK',
    );
    expectLabError(
      () => policyLossSapo({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: zero }, shape),
      'EMPTY_MASK',
    );
  });
});
