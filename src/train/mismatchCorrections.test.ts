/**
 * Each arm's correction on a hand-made batch, against values computed by hand from the formulas the
 * frameworks document (not from the kernels), so a wrong arm-to-kernel wiring (level, bounds, mask
 * vs weight) fails here.
 */
import { describe, expect, it } from 'vitest';
import { applyCorrection, type CorrectionThresholds, MISMATCH_ARMS } from './mismatchCorrections.js';

const T: CorrectionThresholds = {
  tisThreshold: 2,
  icepopLo: 0.5,
  icepopHi: 5,
  seqMaskLo: 0.5,
  seqMaskHi: 2,
  geoLo: 0.999,
  geoHi: 1.001,
  trlClipMax: 3,
};
const shape = { rows: 2, cols: 3 };
// log ratios ℓ = old − engine: row 0 [1, 0, 2] (token ratios e, 1, e²; sequence e³; geo mean e¹),
// row 1 [0, 0, pad] (on-policy: every ratio 1)
const engine = Float64Array.from([-2, -1, -3, -1, -0.5, 0]);
const ell = [1, 0, 2, 0, 0, 0];
const old = Float64Array.from(engine, (e, i) => e + (ell[i] as number));
const mask = Float32Array.from([1, 1, 1, 1, 1, 0]);
const run = (arm: (typeof MISMATCH_ARMS)[number]) => applyCorrection(arm, old, engine, mask, shape, T);
const list = (a: ArrayLike<number> | null) => (a ? Array.from(a, (v) => Number(v.toPrecision(6))) : null);

describe('applyCorrection', () => {
  it('none and bypass: no weights, nothing masked; bypass uses the engine log-probs as old', () => {
    expect(run('none').oldForLoss).toBe(old);
    expect(run('bypass').oldForLoss).toBe(engine);
    for (const arm of ['none', 'bypass'] as const) {
      expect(run(arm).weights).toBeNull();
      expect(Array.from(run(arm).mask)).toEqual(Array.from(mask));
    }
  });

  it('token_tis: exp(ℓ) truncated at 2 per token; seq_tis: exp(Σℓ) truncated at 2 per row', () => {
    expect(list(run('token_tis').weights)).toEqual([2, 1, 2, 1, 1, 0]);
    expect(list(run('seq_tis').weights)).toEqual([2, 2, 2, 1, 1, 0]);
    expect(Array.from(run('token_tis').mask)).toEqual(Array.from(mask));
  });

  it('icepop: token ratio kept as weight inside [0.5, 5], token masked outside', () => {
    const r = run('icepop');
    expect(Array.from(r.mask)).toEqual([1, 1, 0, 1, 1, 0]);
    expect(list(r.weights)?.slice(0, 2)).toEqual([Number(Math.E.toPrecision(6)), 1]);
  });

  it('seq_mask and geo mask the off-policy row only, without weights', () => {
    for (const arm of ['seq_mask', 'geo'] as const) {
      expect(run(arm).weights).toBeNull();
      expect(Array.from(run(arm).mask), arm).toEqual([0, 0, 0, 1, 1, 0]);
    }
  });

  it('trl_seq_mask: sequence ratio e³ > 3 gives weight 0 and a masked row; the on-policy row weight 1', () => {
    const r = run('trl_seq_mask');
    expect(Array.from(r.mask)).toEqual([0, 0, 0, 1, 1, 0]);
    expect(list(r.weights)?.slice(3, 5)).toEqual([1, 1]);
  });

  it('on-policy input: every arm is the identity (weights 1 or none, nothing masked)', () => {
    for (const arm of MISMATCH_ARMS) {
      const c = applyCorrection(arm, engine, engine, mask, shape, T);
      expect(Array.from(c.mask), arm).toEqual(Array.from(mask));
      if (c.weights) expect(Array.from(c.weights), arm).toEqual([1, 1, 1, 1, 1, 0]);
    }
  });
});
