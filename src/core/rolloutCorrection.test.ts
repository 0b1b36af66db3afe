import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { kishEss } from './ess.js';
import {
  offPolicyMetrics,
  parseRejectionRules,
  ROLLOUT_IS_DEFAULTS,
  rolloutCorrection,
  rolloutIsWeights,
  rolloutRejectionMask,
} from './rolloutCorrection.js';

const shape = { rows: 2, cols: 3 };
// row 0: ratios 0.5, 3, e^25 (clamped to e^20); row 1: ratio 1.5, 1, padding (NaN, ignored)
const logRatio = Float64Array.of(Math.log(0.5), Math.log(3), 25, Math.log(1.5), 0, Number.NaN);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('rolloutIsWeights', () => {
  it('ROLLOUT_IS_DEFAULTS is frozen: a stray assignment throws instead of changing every later call', () => {
    expect(() => {
      (ROLLOUT_IS_DEFAULTS as { threshold: number }).threshold = 10;
    }).toThrow(TypeError);
    expect(ROLLOUT_IS_DEFAULTS.threshold).toBe(2);
  });

  it('token level: exp(clamp(ℓ, ±20)), truncated at τ from above only, 0 in padding', () => {
    const r = rolloutIsWeights({ logRatio, responseMask: mask }, shape, { level: 'token', threshold: 2 });
    const expected = [0.5, 2, 2, 1.5, 1, 0];
    for (const [i, v] of expected.entries()) expect(r.weights[i]).toBeCloseTo(v, 6);
    // metrics see the weights before truncation
    expect(r.metrics.rollout_is_max).toBeCloseTo(Math.exp(20), -3);
    expect(r.metrics.rollout_is_min).toBeCloseTo(0.5, 9);
    expect(r.metrics.rollout_is_ratio_fraction_high).toBeCloseTo(2 / 5, 7);
    expect(r.metrics.rollout_is_ratio_fraction_low).toBe(0);
    expect(r.metrics.rollout_is_batch_norm_factor).toBeUndefined();
  });
  it('sequence level: one weight per row, exp of the masked log-ratio sum, then truncated', () => {
    const lr = Float64Array.of(0.2, -0.1, 0.3, -0.5, -0.5, 99);
    const r = rolloutIsWeights({ logRatio: lr, responseMask: mask }, shape, {
      level: 'sequence',
      threshold: 1.5,
    });
    for (let t = 0; t < 3; t++) expect(r.weights[t]).toBeCloseTo(Math.min(Math.exp(0.4), 1.5), 6);
    expect(r.weights[3]).toBeCloseTo(Math.exp(-1), 6);
    expect(r.weights[4]).toBeCloseTo(Math.exp(-1), 6);
    expect(r.weights[5]).toBe(0);
    expect(r.metrics.rollout_is_max).toBeCloseTo(Math.exp(0.4), 9);
    expect(r.metrics.rollout_is_ratio_fraction_low).toBeCloseTo(0.5, 9); // row 1: e^-1 < 1/1.5
  });
  it('batch normalisation makes the masked mean of the weights 1 (token) and reports the factor', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 6, maxLength: 6 }),
        fc.constantFrom('token' as const, 'sequence' as const),
        (lr, level) => {
          const r = rolloutIsWeights({ logRatio: Float64Array.from(lr), responseMask: mask }, shape, {
            level,
            normalization: 'batch-mean',
          });
          let s = 0;
          for (let i = 0; i < 6; i++) s += (r.weights[i] as number) * (mask[i] as number);
          const plain = rolloutIsWeights({ logRatio: Float64Array.from(lr), responseMask: mask }, shape, {
            level,
          });
          expect(r.metrics.rollout_is_batch_norm_factor).toBeGreaterThan(0);
          if (level === 'token') expect(s / 5).toBeCloseTo(1, 5);
          else {
            // mean over valid rows of per-row means is 1
            const m0 = ((r.weights[0] as number) + (r.weights[1] as number) + (r.weights[2] as number)) / 3;
            const m1 = ((r.weights[3] as number) + (r.weights[4] as number)) / 2;
            expect((m0 + m1) / 2).toBeCloseTo(1, 5);
          }
          expect(r.weights[0]).toBeCloseTo(
            (plain.weights[0] as number) / (r.metrics.rollout_is_batch_norm_factor as number),
            5,
          );
        },
      ),
      { numRuns: 50 },
    );
  });
  it("verl's ESS metric is the Kish fraction of the weights clamped to [1/τ, τ]", () => {
    const lr = Float64Array.of(0.3, -0.2, 1.2, -1.5, 0.1, 0);
    const r = rolloutIsWeights({ logRatio: lr, responseMask: mask }, shape, { threshold: 2 });
    const clamped = Array.from(lr, (v) => Math.min(Math.max(Math.exp(v), 0.5), 2));
    expect(r.metrics.rollout_is_eff_sample_size).toBeCloseTo(kishEss(clamped, mask).fraction, 6);
  });
  it('bad input: EMPTY_MASK, NON_FINITE under the mask, BAD_ARGUMENT τ, UNKNOWN_MODE level', () => {
    expectLabError(
      () => rolloutIsWeights({ logRatio, responseMask: new Uint8Array(6) }, shape),
      'EMPTY_MASK',
      'response_mask',
    );
    const bad = Float64Array.from(logRatio);
    bad[1] = Number.POSITIVE_INFINITY;
    expectLabError(
      () => rolloutIsWeights({ logRatio: bad, responseMask: mask }, shape),
      'NON_FINITE',
      'log_ratio',
      'row 0, token 1',
    );
    expectLabError(
      () => rolloutIsWeights({ logRatio, responseMask: mask }, shape, { threshold: 0 }),
      'BAD_ARGUMENT',
      'rollout_is_threshold',
    );
    expectLabError(
      () => rolloutIsWeights({ logRatio, responseMask: mask }, shape, { level: 'geometric' as never }),
      'UNKNOWN_MODE',
      'rollout_is',
    );
  });
});

describe('rolloutRejectionMask', () => {
  // k1 = -ℓ: row 0: 0.693, -1.099, -20; row 1: -0.405, 0
  it('token_k1 keeps log(lower) <= -ℓ <= log(upper) per token', () => {
    const r = rolloutRejectionMask({ logRatio, responseMask: mask }, shape, {
      rolloutRs: 'token_k1',
      threshold: '0.5_2.0',
    });
    expect(Array.from(r.mask)).toEqual([1, 0, 0, 1, 1, 0]);
    expect(r.metrics.rollout_rs_token_k1_masked_fraction).toBeCloseTo(2 / 5, 7);
    expect(r.metrics.rollout_rs_seq_masked_fraction).toBe(0.5);
    expect(r.metrics.rollout_rs_token_k1_min).toBeCloseTo(-20, 9);
  });
  it('a single k1 threshold u means [1/u, u]; sequence options reject whole rows', () => {
    expect(parseRejectionRules('seq_mean_k1', 1.5)).toEqual([
      { option: 'seq_mean_k1', upper: 1.5, lower: 1 / 1.5 },
    ]);
    // seq_max_k2: max ½ℓ² per row: row 0 = 200 (clamped ℓ = 20), row 1 = ½ln(1.5)²
    const r = rolloutRejectionMask({ logRatio, responseMask: mask }, shape, {
      rolloutRs: 'seq_max_k2',
      threshold: 1,
    });
    expect(Array.from(r.mask)).toEqual([0, 0, 0, 1, 1, 0]);
    expect(r.metrics.rollout_rs_seq_max_k2_max).toBeCloseTo(200, 9);
    expect(r.metrics.rollout_rs_seq_max_k2_seq_fraction_high).toBe(0.5);
  });
  it('options combine with AND and rejection never touches IS weights', () => {
    const both = rolloutRejectionMask({ logRatio, responseMask: mask }, shape, {
      rolloutRs: 'token_k2,seq_sum_k3',
      threshold: '0.3,5',
    });
    const a = rolloutRejectionMask({ logRatio, responseMask: mask }, shape, {
      rolloutRs: 'token_k2',
      threshold: 0.3,
    });
    const b = rolloutRejectionMask({ logRatio, responseMask: mask }, shape, {
      rolloutRs: 'seq_sum_k3',
      threshold: 5,
    });
    expect(Array.from(both.mask)).toEqual(Array.from(a.mask, (v, i) => v * (b.mask[i] as number)));
    const old = Float64Array.of(-1, -2, -3, -1, -1, 0);
    const rollout = Float64Array.from(old, (v, i) => (mask[i] ? v - (logRatio[i] as number) : 0));
    const c = rolloutCorrection({ oldLogProb: old, rolloutLogProb: rollout, responseMask: mask }, shape, {
      is: { level: 'token' },
      rejection: { rolloutRs: 'seq_max_k2', threshold: 1 },
    });
    const isOnly = rolloutCorrection(
      { oldLogProb: old, rolloutLogProb: rollout, responseMask: mask },
      shape,
      { is: { level: 'token' } },
    );
    expect(Array.from(c.weights ?? [])).toEqual(Array.from(isOnly.weights ?? []));
    expect(Array.from(c.mask)).toEqual([0, 0, 0, 1, 1, 0]);
    expect(Array.from(isOnly.mask)).toEqual(Array.from(mask));
    expect(c.metrics['rollout_corr/rollout_rs_masked_fraction']).toBeCloseTo(3 / 5, 7);
  });
  it('malformed specs are LabErrors naming rollout_rs / rollout_rs_threshold', () => {
    expectLabError(() => parseRejectionRules('geometric', 2), 'UNKNOWN_MODE', 'rollout_rs');
    expectLabError(
      () => parseRejectionRules('token_k2', '0.5_2'),
      'BAD_OPTION_VALUE',
      'rollout_rs_threshold',
    );
    expectLabError(
      () => parseRejectionRules('token_k1,token_k2', '1,2,3'),
      'BAD_OPTION_VALUE',
      'expected 1 or 2',
    );
    expectLabError(() => parseRejectionRules('token_k3', -1), 'BAD_OPTION_VALUE', 'positive');
  });
});

describe('offPolicyMetrics', () => {
  it('identical policies: kl 0, k3 0, chi² 0, ppl ratio 1', () => {
    const lp = Float64Array.of(-1, -2, -0.5, -1, -3, 0);
    const m = offPolicyMetrics({ oldLogProb: lp, rolloutLogProb: lp, responseMask: mask }, shape);
    expect(m.kl).toBe(0);
    expect(m.k3_kl).toBe(0);
    expect(m.chi2_token).toBeCloseTo(0, 7);
    expect(m.chi2_seq).toBeCloseTo(0, 12);
    expect(m.ppl_ratio).toBeCloseTo(1, 7);
    expect(m.training_log_ppl).toBeCloseTo((3.5 / 3 + 4 / 2) / 2, 6);
  });
});
