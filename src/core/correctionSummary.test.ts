import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { correctionSummary } from './correctionSummary.js';
import { rolloutCorrection } from './rolloutCorrection.js';

describe('correctionSummary', () => {
  const shape = { rows: 3, cols: 2 };
  // valid tokens: both of row 0, the first of row 1, none in row 2
  const responseMask = Float32Array.of(1, 1, 1, 0, 0, 0);

  it("verl's definitions on the applied weights: masked means, population std, Kish ESS, rejected shares", () => {
    const weights = Float64Array.of(2, 0, 1, 9, 9, 9); // 9s are off the mask: never read
    const mask = Float32Array.of(1, 0, 1, 0, 0, 0); // token (0,1) rejected
    const s = correctionSummary(weights, responseMask, mask, shape);
    const den = 3 + 1e-8;
    expect(s.is_mean).toBe(3 / den);
    expect(s.is_max).toBe(2);
    expect(s.is_min).toBe(0);
    expect(s.is_std).toBeCloseTo(Math.sqrt(5 / 3 - 1), 7);
    expect(s.eff_sample_size).toBeCloseTo(9 / (3 * 5), 14); // (Σw)² / (n Σw²)
    expect(s.masked_fraction).toBe(1 / den);
    expect(s.seq_masked_fraction).toBe(1 / 3); // over ALL rows, as verl's rollout_rs_seq_masked_fraction
    expect([s.kept_tokens, s.rejected_tokens, s.rejected_sequences]).toEqual([2, 1, 1]);
  });

  it('tiny weights keep an ESS in [0, 1] (verl’s 1e-8 guards would inflate it), all-zero weights give 0', () => {
    const tiny = Float64Array.of(1e-13, 3e-13, 2e-13, 0, 0, 0);
    const s = correctionSummary(tiny, responseMask, responseMask, shape);
    expect(s.eff_sample_size).toBeCloseTo(36 / (3 * 14), 12);
    const zero = correctionSummary(
      new Float64Array(6),
      responseMask,
      Float32Array.of(0, 0, 0, 0, 0, 0),
      shape,
    );
    expect(zero.eff_sample_size).toBe(0);
    expect(zero.rejected_sequences).toBe(2);
  });

  it("summarises verl's own correction the same way (weights × rejection mask)", () => {
    const oldLogProb = Float64Array.of(-0.1, -2, -0.3, 0, 0, 0);
    const rolloutLogProb = Float64Array.of(-0.2, -0.1, -0.3, 0, 0, 0);
    const r = rolloutCorrection({ oldLogProb, rolloutLogProb, responseMask }, shape, {
      is: { level: 'token', threshold: 2 },
      rejection: { rolloutRs: 'token_k1', threshold: '0.5_2.0' },
    });
    const applied = Float64Array.from(r.weights as Float32Array, (w, i) => w * (r.mask[i] as number));
    const s = correctionSummary(applied, responseMask, r.mask, shape);
    expect(s.masked_fraction).toBeCloseTo(r.metrics['rollout_corr/rollout_rs_masked_fraction'] as number, 12);
    expect(s.seq_masked_fraction).toBe(r.metrics['rollout_corr/rollout_rs_seq_masked_fraction']);
    expect(s.rejected_tokens).toBe(1); // token (0,1): k1 = 1.9 > log 2
  });

  it('refuses negative or non-finite weights at valid tokens, a kept token off the mask, an empty mask', () => {
    const ok = Float64Array.of(1, 1, 1, 0, 0, 0);
    expectLabError(
      () => correctionSummary(Float64Array.of(1, -1, 1, 0, 0, 0), responseMask, responseMask, shape),
      'BAD_VALUE',
      'row 0, token 1',
    );
    expectLabError(
      () => correctionSummary(Float64Array.of(1, 1, Number.NaN, 0, 0, 0), responseMask, responseMask, shape),
      'NON_FINITE',
      'row 1, token 0',
    );
    expectLabError(
      () => correctionSummary(ok, responseMask, Float32Array.of(1, 1, 1, 1, 0, 0), shape),
      'BAD_VALUE',
      'token 1 of row 1',
    );
    expectLabError(
      () => correctionSummary(ok, new Float32Array(6), new Float32Array(6), shape),
      'EMPTY_MASK',
    );
    expectLabError(
      () => correctionSummary(ok, responseMask, responseMask, { rows: 2, cols: 2 }),
      'SHAPE_MISMATCH',
    );
  });
});
