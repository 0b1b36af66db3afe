import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { klPenalty } from './kl.js';
import { lowVarKlGrad, lowVarKlValue } from './klLossGrad.js';

describe('lowVarKlGrad', () => {
  it('matches a central finite difference of the k3 value', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -8, max: -0.01, noNaN: true }),
        fc.double({ min: -8, max: -0.01, noNaN: true }),
        (lp, ref) => {
          const h = 1e-6;
          const fd = (lowVarKlValue(lp + h, ref) - lowVarKlValue(lp - h, ref)) / (2 * h);
          const g = lowVarKlGrad([lp], [ref])[0] as number;
          expect(Math.abs(g - fd)).toBeLessThan(1e-5 * Math.max(1, Math.abs(fd)));
        },
      ),
    );
  });

  it('the value agrees with core klPenalty (float32) and is 0 with slope 0 at logprob = ref', () => {
    const lp = Float64Array.of(-1, -0.5, -3, -2.2);
    const ref = Float64Array.of(-1.5, -0.5, -1, -0.1);
    const k3 = klPenalty(lp, ref, 'low_var_kl');
    for (const [i, x] of lp.entries())
      expect(lowVarKlValue(x, ref[i] as number)).toBeCloseTo(k3[i] as number, 6);
    expect(lowVarKlValue(-0.5, -0.5)).toBe(0);
    expect(lowVarKlGrad([-0.5], [-0.5])[0]).toBe(0);
    // pi above ref: the estimate grows with logprob (d > 0 pushes logprob down under gradient descent)
    expect(lowVarKlGrad([-0.5], [-1])[0]).toBeGreaterThan(0);
  });

  it('no gradient where a clamp binds', () => {
    // ref - lp = 25 > 20: log-ratio clamp; ref - lp = 3: exp(3) - 4 = 16 > 10: value clamp
    expect(Array.from(lowVarKlGrad([-30, -4], [-5, -1]))).toEqual([0, 0]);
  });

  it('bad input names the field and index', () => {
    expectLabError(() => lowVarKlGrad([0, Number.NaN], [0, 0]), 'NON_FINITE', 'logprob', 'index 1');
    expectLabError(
      () => lowVarKlGrad([0, 0], [0, Number.POSITIVE_INFINITY]),
      'NON_FINITE',
      'ref_logprob',
      'index 1',
    );
    expectLabError(() => lowVarKlGrad([0, 0], [0]), 'SHAPE_MISMATCH', 'ref_logprob');
  });
});
