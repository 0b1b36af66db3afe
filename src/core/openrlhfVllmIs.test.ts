import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  expectMatchesGolden,
  GOLDEN_META,
  goldenBatch,
  goldenCases,
} from '../../test/support/frameworkIsGolden.js';
import { expectLabError } from '../../test/support/labError.js';
import {
  OPENRLHF_IS_CORRECTION_TYPES,
  OPENRLHF_IS_DEFAULTS,
  type OpenRlhfIsCorrectionType,
  openrlhfVllmImportanceSampling,
} from './openrlhfVllmIs.js';
import { offPolicyMetrics } from './rolloutCorrection.js';

describe('openrlhfVllmImportanceSampling: golden cases (numpy transcription of OpenRLHF 3c3be623)', () => {
  const cases = goldenCases('openrlhf');
  it('the golden file cites the OpenRLHF commit the kernel reproduces and covers every type', () => {
    expect((GOLDEN_META.openrlhf as { commit: string }).commit).toBe(
      '3c3be6234e0cb353e76bb8019947db9dfe99fca7',
    );
    expect(new Set(cases.map((c) => c.mode))).toEqual(new Set(OPENRLHF_IS_CORRECTION_TYPES));
    expect(cases.length).toBe(36);
    expect(cases.some((c) => c.mode === 'icepop' && c.outputs.summary.rejected_tokens > 0)).toBe(true);
    expect(cases.some((c) => c.mode === 'seq-mask-tis' && c.outputs.summary.rejected_sequences > 0)).toBe(
      true,
    );
  });
  for (const c of cases) {
    it(c.name, () => {
      const { inputs, shape } = goldenBatch(c.batch);
      const r = openrlhfVllmImportanceSampling(inputs, shape, {
        type: c.mode as OpenRlhfIsCorrectionType,
        low: c.params.is_correction_threshold_low as number,
        high: c.params.is_correction_threshold_high as number,
      });
      expectMatchesGolden(r, c);
    });
  }
});

describe('openrlhfVllmImportanceSampling', () => {
  // row 0: log-ratios ln 8, ln 0.25, 0 (geometric mean (8·0.25·1)^(1/3) = 2^(1/3)); row 1: ln 0.125, padding
  const shape = { rows: 2, cols: 3 };
  const inputs = {
    oldLogProb: Float64Array.of(Math.log(8) - 3, Math.log(0.25) - 1, -2, Math.log(0.125) - 0.5, 4, 4),
    rolloutLogProb: Float64Array.of(-3, -1, -2, -0.5, Number.NaN, 9),
    responseMask: Float32Array.of(1, 1, 1, 1, 0, 0),
  };

  it("defaults are OpenRLHF's: tis with threshold 0.5 5.0", () => {
    expect(OPENRLHF_IS_DEFAULTS).toEqual({ type: 'tis', low: 0.5, high: 5.0 });
    expect(Object.isFrozen(OPENRLHF_IS_DEFAULTS)).toBe(true);
    const r = openrlhfVllmImportanceSampling(inputs, shape);
    const expected = [5, 0.5, 1, 0.5, 0, 0];
    for (const [i, v] of expected.entries()) expect(r.weights[i]).toBeCloseTo(v, 12);
    expect(Array.from(r.mask)).toEqual([1, 1, 1, 1, 0, 0]);
  });

  it('icepop zeroes ratios outside [L, H] (inclusive) and keeps the others unclamped', () => {
    const r = openrlhfVllmImportanceSampling(inputs, shape, { type: 'icepop', low: 0.2, high: 5 });
    expect(r.weights[0]).toBe(0); // 8 > 5
    expect(r.weights[1]).toBeCloseTo(0.25, 12);
    expect(r.weights[3]).toBe(0); // 0.125 < 0.2
    expect(Array.from(r.mask)).toEqual([0, 1, 1, 0, 0, 0]);
    // a ratio exactly on a bound is kept (>= and <=)
    const one = openrlhfVllmImportanceSampling(inputs, shape, { type: 'icepop', low: 1, high: 1 });
    expect(Array.from(one.weights)).toEqual([0, 0, 1, 0, 0, 0]);
  });

  it('seq-mask-tis filters rows on the geometric mean and keeps the UNCLAMPED token ratios', () => {
    const r = openrlhfVllmImportanceSampling(inputs, shape, { type: 'seq-mask-tis', low: 0.5, high: 2 });
    // row 0: geometric mean 2^(1/3) in [0.5, 2]: kept, token weights 8, 0.25, 1 although 8 > H
    expect(r.weights[0]).toBeCloseTo(8, 12);
    expect(r.weights[1]).toBeCloseTo(0.25, 12);
    // row 1: geometric mean 0.125 < 0.5: rejected
    expect(r.weights[3]).toBe(0);
    expect(Array.from(r.mask)).toEqual([1, 1, 1, 0, 0, 0]);
    expect(r.summary.rejected_sequences).toBe(1);
    expect(r.summary.seq_masked_fraction).toBe(0.5);
  });

  it("vllm_kl is the batch mean of rollout − old over action tokens (verl's rollout_corr/kl up to its 1e-8)", () => {
    const r = openrlhfVllmImportanceSampling(inputs, shape);
    const expected = -(Math.log(8) + Math.log(0.25) + 0 + Math.log(0.125)) / 4;
    expect(r.metrics.vllm_kl).toBeCloseTo(expected, 14);
    const verl = offPolicyMetrics(
      {
        oldLogProb: inputs.oldLogProb,
        rolloutLogProb: inputs.rolloutLogProb,
        responseMask: inputs.responseMask,
      },
      shape,
    );
    expect(Math.abs((r.metrics.vllm_kl as number) - (verl.kl as number))).toBeLessThan(1e-8);
    expect(Object.keys(r.metrics)).toEqual(['vllm_kl']);
  });

  it('a row without action tokens is rejected by seq-mask-tis (0/0 fails both comparisons) and counts nowhere', () => {
    const m = Float32Array.of(1, 1, 1, 0, 0, 0);
    const r = openrlhfVllmImportanceSampling({ ...inputs, responseMask: m }, shape, { type: 'seq-mask-tis' });
    expect(r.summary.rejected_sequences).toBe(0);
    expect(Array.from(r.weights.subarray(3))).toEqual([0, 0, 0]);
  });

  it('an icepop ratio that overflows is rejected (OpenRLHF: inf·0 = NaN in the loss); a kept one is NON_FINITE', () => {
    const big = {
      oldLogProb: Float64Array.of(-0.001, -1, -1),
      rolloutLogProb: Float64Array.of(-800, -1, -1),
      responseMask: Float32Array.of(1, 1, 1),
    };
    const r = openrlhfVllmImportanceSampling(big, { rows: 1, cols: 3 }, { type: 'icepop' });
    expect(Array.from(r.weights)).toEqual([0, 1, 1]);
    expect(Array.from(r.mask)).toEqual([0, 1, 1]);
    // seq-mask-tis with a geometric mean inside [L, H] keeps the inf token ratio: refused
    const keep = { ...big, oldLogProb: Float64Array.of(-0.001, -800, -1) };
    expectLabError(
      () => openrlhfVllmImportanceSampling(keep, { rows: 1, cols: 3 }, { type: 'seq-mask-tis' }),
      'NON_FINITE',
      'row 0, token 0',
    );
    // tis clamps it
    expect(openrlhfVllmImportanceSampling(big, { rows: 1, cols: 3 }).weights[0]).toBe(5);
  });

  it('refuses an unknown type and thresholds OpenRLHF would take without checking', () => {
    expectLabError(
      () => openrlhfVllmImportanceSampling(inputs, shape, { type: 'mis' as OpenRlhfIsCorrectionType }),
      'UNKNOWN_MODE',
      'is_correction_type',
    );
    expectLabError(
      () => openrlhfVllmImportanceSampling(inputs, shape, { low: 3, high: 2 }),
      'BAD_ARGUMENT',
      'must not exceed',
    );
    expectLabError(() => openrlhfVllmImportanceSampling(inputs, shape, { low: -1 }), 'BAD_ARGUMENT', 'low');
    expectLabError(
      () => openrlhfVllmImportanceSampling(inputs, shape, { high: Number.POSITIVE_INFINITY }),
      'BAD_ARGUMENT',
      'high',
    );
    const bad = { ...inputs, rolloutLogProb: Float64Array.of(-3, Number.NaN, -2, -0.5, 0, 0) };
    expectLabError(
      () => openrlhfVllmImportanceSampling(bad, shape),
      'NON_FINITE',
      'rollout_log_prob',
      'row 0, token 1',
    );
    expectLabError(
      () => openrlhfVllmImportanceSampling({ ...inputs, responseMask: new Float32Array(6) }, shape),
      'EMPTY_MASK',
    );
  });
});

describe('openrlhfVllmImportanceSampling: properties', () => {
  const batch = fc
    .record({ rows: fc.integer({ min: 1, max: 4 }), cols: fc.integer({ min: 1, max: 6 }) })
    .chain(({ rows, cols }) =>
      fc.record({
        rows: fc.constant(rows),
        cols: fc.constant(cols),
        rollout: fc.array(fc.double({ min: -12, max: 0, noNaN: true }), {
          minLength: rows * cols,
          maxLength: rows * cols,
        }),
        gap: fc.array(fc.double({ min: -3, max: 3, noNaN: true }), {
          minLength: rows * cols,
          maxLength: rows * cols,
        }),
        mask: fc
          .array(fc.integer({ min: 0, max: 1 }), { minLength: rows * cols, maxLength: rows * cols })
          .filter((m) => m.some((v) => v === 1)),
        junk: fc.array(fc.oneof(fc.double(), fc.constant(Number.NaN)), {
          minLength: rows * cols,
          maxLength: rows * cols,
        }),
        type: fc.constantFrom(...OPENRLHF_IS_CORRECTION_TYPES),
        low: fc.double({ min: 0, max: 0.9, noNaN: true }),
        high: fc.double({ min: 1.1, max: 10, noNaN: true }),
      }),
    );

  it('masked positions never affect the output; tis and icepop weights lie in [L, H] or are rejected', () => {
    fc.assert(
      fc.property(batch, (b) => {
        const shape = { rows: b.rows, cols: b.cols };
        const responseMask = Float32Array.from(b.mask);
        const rollout = Float64Array.from(b.rollout);
        const old = Float64Array.from(b.rollout, (v, i) => v + (b.gap[i] as number));
        const options = { type: b.type, low: b.low, high: b.high };
        const clean = openrlhfVllmImportanceSampling(
          { oldLogProb: old, rolloutLogProb: rollout, responseMask },
          shape,
          options,
        );
        const dirty = openrlhfVllmImportanceSampling(
          {
            oldLogProb: Float64Array.from(old, (v, i) => (b.mask[i] ? v : (b.junk[i] as number))),
            rolloutLogProb: Float64Array.from(rollout, (v, i) => (b.mask[i] ? v : -(b.junk[i] as number))),
            responseMask,
          },
          shape,
          options,
        );
        expect(dirty).toEqual(clean);
        for (let i = 0; i < b.mask.length; i++) {
          const w = clean.weights[i] as number;
          if (!b.mask[i]) {
            expect(w).toBe(0);
            continue;
          }
          if (b.type === 'seq-mask-tis') {
            // kept rows carry exp(ℓ) itself, whatever its size
            if (clean.mask[i]) expect(w).toBeCloseTo(Math.exp(b.gap[i] as number), 12);
            else expect(w).toBe(0);
          } else if (clean.mask[i]) {
            expect(w >= b.low && w <= b.high).toBe(true);
          } else {
            expect(w).toBe(0);
          }
        }
        // a seq-mask-tis row is kept or rejected as a whole
        if (b.type === 'seq-mask-tis') {
          for (let r = 0; r < b.rows; r++) {
            const kept = new Set<number>();
            for (let t = 0; t < b.cols; t++)
              if (b.mask[r * b.cols + t]) kept.add(clean.mask[r * b.cols + t] as number);
            expect(kept.size).toBeLessThanOrEqual(1);
          }
        }
      }),
      { numRuns: 300, seed: 28 },
    );
  });
});
