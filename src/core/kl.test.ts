import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { adaptiveKlUpdate, applyKlPenalty, createKlController, KL_PENALTY_NAMES, klPenalty } from './kl.js';

const lp = Float64Array.of(-1, -0.5, -3, -30);
const ref = Float64Array.of(-1.5, -0.5, -1, -4);
// d = lp - ref = 0.5, 0, -2, -26

describe('klPenalty', () => {
  it('k1 / abs / k2 by hand', () => {
    expect(Array.from(klPenalty({ logprob: lp, refLogprob: ref }, 'k1'))).toEqual([0.5, 0, -2, -26]);
    expect(Array.from(klPenalty({ logprob: lp, refLogprob: ref }, 'abs'))).toEqual([0.5, 0, 2, 26]);
    expect(Array.from(klPenalty({ logprob: lp, refLogprob: ref }, 'k2'))).toEqual([0.125, 0, 2, 338]);
  });
  it('aliases give identical values', () => {
    expect(klPenalty({ logprob: lp, refLogprob: ref }, 'kl')).toEqual(
      klPenalty({ logprob: lp, refLogprob: ref }, 'k1'),
    );
    expect(klPenalty({ logprob: lp, refLogprob: ref }, 'mse')).toEqual(
      klPenalty({ logprob: lp, refLogprob: ref }, 'k2'),
    );
    expect(klPenalty({ logprob: lp, refLogprob: ref }, 'low_var_kl')).toEqual(
      klPenalty({ logprob: lp, refLogprob: ref }, 'k3'),
    );
  });
  it('k3 = exp(k) - k - 1 with k = ref - lp, clamped to [-20, 20] then to 10', () => {
    const k3 = klPenalty({ logprob: lp, refLogprob: ref }, 'k3');
    expect(k3[0]).toBeCloseTo(Math.exp(-0.5) + 0.5 - 1, 7);
    expect(k3[1]).toBe(0);
    expect(k3[2]).toBeCloseTo(Math.min(Math.exp(2) - 3, 10), 6);
    expect(k3[3]).toBe(10); // k = 26 -> clamped to 20 -> e^20 - 21 -> clamped to 10
  });
  it('k3 is exp(k) - k - 1 >= 0 (up to rounding), capped at 10 (property)', () => {
    fc.assert(
      fc.property(fc.double({ min: -5, max: 5, noNaN: true }), (d) => {
        const v = klPenalty(
          { logprob: Float64Array.of(0), refLogprob: Float64Array.of(d) },
          'k3',
        )[0] as number;
        expect(v).toBeGreaterThanOrEqual(-1e-12);
        expect(v).toBeCloseTo(Math.min(Math.exp(d) - d - 1, 10), 4);
      }),
    );
  });
  it('"+" names and full are NOT_SUPPORTED (verl raises), unknown names UNKNOWN_MODE', () => {
    for (const name of ['k1+', 'k2+', 'k3+', 'low_var_kl+', 'mse+', 'full']) {
      expectLabError(
        () => klPenalty({ logprob: lp, refLogprob: ref }, name as never),
        'NOT_SUPPORTED',
        'kl_penalty',
        name,
      );
    }
    expectLabError(
      () => klPenalty({ logprob: lp, refLogprob: ref }, 'bogus' as never),
      'UNKNOWN_MODE',
      'kl_penalty',
    );
    expect(KL_PENALTY_NAMES).toHaveLength(7);
  });
  it('non-finite log-probs: NON_FINITE naming field and position; with a mask, padding is ignored and 0', () => {
    const bad = Float64Array.of(-1, Number.NaN, -1, -1);
    expectLabError(
      () => klPenalty({ logprob: bad, refLogprob: ref }, 'k1', { shape: { rows: 2, cols: 2 } }),
      'NON_FINITE',
      'logprob',
      'row 0, token 1',
    );
    const masked = klPenalty({ logprob: bad, refLogprob: ref }, 'k1', {
      shape: { rows: 2, cols: 2 },
      mask: Uint8Array.of(1, 0, 1, 1),
    });
    expect(Array.from(masked)).toEqual([0.5, 0, 0, 3]);
    expectLabError(
      () => klPenalty({ logprob: lp, refLogprob: ref.subarray(1) }, 'k1'),
      'SHAPE_MISMATCH',
      'ref_logprob',
    );
  });
});

describe('applyKlPenalty (KL in reward)', () => {
  it('rewards = scores - beta * kld * m; current_kl = mean over rows of per-row masked means', () => {
    const scores = Float64Array.of(0, 1, 0, 0);
    const r = applyKlPenalty(
      { tokenLevelScores: scores, oldLogProb: lp, refLogProb: ref, responseMask: Uint8Array.of(1, 1, 1, 0) },
      { rows: 2, cols: 2 },
      0.1,
      'k1',
    );
    expect(Array.from(r.kld)).toEqual([0.5, 0, -2, 0]);
    expect(r.tokenLevelRewards[0]).toBeCloseTo(-0.05, 7);
    expect(r.tokenLevelRewards[1]).toBe(1);
    expect(r.tokenLevelRewards[2]).toBeCloseTo(0.2, 7);
    expect(r.currentKl).toBeCloseTo((0.5 / 2 + -2 / 1) / 2, 7);
  });
});

describe('KL controllers', () => {
  it('fixed never moves; adaptive follows beta * (1 + clip(kl/target - 1, ±0.2) * n / horizon)', () => {
    const fixed = createKlController({ type: 'fixed', klCoef: 0.001 });
    fixed.update(5, 1000);
    expect(fixed.value).toBe(0.001);
    const ad = createKlController({ type: 'adaptive', klCoef: 0.001, targetKl: 0.1, horizon: 10000 });
    ad.update(0.05, 256); // err = -0.5 -> clipped to -0.2
    expect(ad.value).toBeCloseTo(0.001 * (1 - (0.2 * 256) / 10000), 15);
    ad.update(0.11, 1000); // err = 0.1
    expect(ad.value).toBeCloseTo(0.001 * (1 - (0.2 * 256) / 10000) * (1 + (0.1 * 1000) / 10000), 15);
    expect(adaptiveKlUpdate(1, 0.1, 50, 0.1, 100)).toBe(1);
  });
  it('rejects bad configuration', () => {
    expectLabError(
      () => createKlController({ type: 'adaptive', klCoef: 0.1, horizon: 0 }),
      'BAD_ARGUMENT',
      'kl_ctrl',
    );
    expectLabError(
      () => createKlController({ type: 'pid' as never, klCoef: 0.1 }),
      'UNKNOWN_MODE',
      'kl_ctrl.type',
    );
    const ad = createKlController({ type: 'adaptive', klCoef: 0.1 });
    expectLabError(() => ad.update(Number.NaN, 1), 'NON_FINITE', 'current_kl');
  });
});
