import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { aggLoss, LOSS_AGG_MODES } from './aggLoss.js';
import { KL_PENALTY_NAMES, klPenalty } from './kl.js';
import { klLossGrad } from './klLoss.js';

describe('klLossGrad (verl use_kl_loss)', () => {
  it('loss = agg_loss(kl_penalty(lp, ref), mask, mode) for every name and mode', () => {
    const lp = Float64Array.of(-1, -0.5, -2, -0.1, -3, -1);
    const ref = Float64Array.of(-1.2, -0.7, -1, -0.1, -2.5, -4);
    const mask = Float32Array.of(1, 1, 0, 1, 1, 1);
    const shape = { rows: 2, cols: 3 };
    for (const name of KL_PENALTY_NAMES) {
      for (const mode of LOSS_AGG_MODES) {
        const kld = klPenalty({ logprob: lp, refLogprob: ref }, name, { shape, mask });
        expect(klLossGrad({ logProb: lp, refLogProb: ref, mask }, shape, name, mode).loss).toBe(
          aggLoss({ lossMat: kld, lossMask: mask }, shape, mode),
        );
      }
    }
  });

  it('low_var_kl by hand: loss of one token and gradient 1 − exp(ref − lp)', () => {
    const r = klLossGrad(
      { logProb: Float64Array.of(-1), refLogProb: Float64Array.of(-1.5), mask: Float32Array.of(1) },
      { rows: 1, cols: 1 },
      'low_var_kl',
    );
    expect(r.loss).toBeCloseTo(Math.exp(-0.5) + 0.5 - 1, 6);
    expect(r.grad[0]).toBeCloseTo(1 - Math.exp(-0.5), 12);
  });

  it('matches central finite differences (every name except abs at 0, every mode)', () => {
    const names = KL_PENALTY_NAMES;
    fc.assert(
      fc.property(
        fc.constantFrom(...names),
        fc.constantFrom(...LOSS_AGG_MODES),
        fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 6, maxLength: 6 }),
        fc.array(fc.double({ min: -4, max: -0.1, noNaN: true }), { minLength: 6, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 1 }), { minLength: 6, maxLength: 6 }),
        (name, mode, d, ref, m) => {
          m[0] = 1;
          const shape = { rows: 2, cols: 3 };
          // keep |d| away from 0 (abs's kink) and from k3's value clamp (|d| <= 3: e^3 − 4 ≈ 16 > 10)
          const safe = d.map((x) => (Math.abs(x) < 0.05 ? 0.05 : x));
          const lp = Float64Array.from(ref.map((r, i) => r + (safe[i] as number)));
          const refA = Float64Array.from(ref);
          const mask = Float64Array.from(m);
          const { grad } = klLossGrad({ logProb: lp, refLogProb: refA, mask }, shape, name, mode);
          const h = 1e-6;
          for (let i = 0; i < 6; i++) {
            const up = Float64Array.from(lp);
            const dn = Float64Array.from(lp);
            up[i] = (up[i] as number) + h;
            dn[i] = (dn[i] as number) - h;
            // float64 evaluation of the same formula (klPenalty returns float32, too coarse for h = 1e-6)
            const f = (x: Float64Array) =>
              aggLoss({ lossMat: penalty64(x, refA, name), lossMask: mask }, shape, mode);
            const fd = (f(up) - f(dn)) / (2 * h);
            const k3Clamped =
              (name === 'low_var_kl' || name === 'k3') &&
              Math.exp(-(safe[i] as number)) + (safe[i] as number) - 1 > 10;
            if (k3Clamped) expect(grad[i]).toBe(0);
            else expect(grad[i]).toBeCloseTo(fd, 5);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('errors name the field: non-finite log_prob under the mask, unknown name', () => {
    const shape = { rows: 1, cols: 2 };
    expectLabError(
      () =>
        klLossGrad(
          {
            logProb: Float64Array.of(Number.NaN, 0),
            refLogProb: Float64Array.of(0, 0),
            mask: Float32Array.of(1, 1),
          },
          shape,
          'k3',
        ),
      'NON_FINITE',
      'logprob',
    );
    expectLabError(
      () =>
        klLossGrad(
          { logProb: Float64Array.of(0, 0), refLogProb: Float64Array.of(0, 0), mask: Float32Array.of(1, 1) },
          shape,
          'k9' as never,
        ),
      'UNKNOWN_MODE',
    );
  });
});

/** verl's kl_penalty formulas in float64 (klPenalty's output is float32, as verl's). */
function penalty64(lp: Float64Array, ref: Float64Array, name: string): Float64Array {
  return lp.map((x, i) => {
    const d = x - (ref[i] as number);
    switch (name) {
      case 'kl':
      case 'k1':
        return d;
      case 'abs':
        return Math.abs(d);
      case 'mse':
      case 'k2':
        return 0.5 * d * d;
      default: {
        const k = Math.min(Math.max(-d, -20), 20);
        return Math.min(Math.max(Math.exp(k) - k - 1, -10), 10);
      }
    }
  });
}
