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
  TRL_VLLM_IS_DEFAULTS,
  TRL_VLLM_IS_MODES,
  type TrlVllmIsMode,
  trlVllmImportanceSampling,
} from './trlVllmIs.js';

const opts = (c: { mode: string; params: Record<string, number | null> }) => ({
  mode: c.mode as TrlVllmIsMode,
  clipMin: c.params.vllm_importance_sampling_clip_min ?? null,
  clipMax: c.params.vllm_importance_sampling_clip_max ?? null,
});

describe('trlVllmImportanceSampling: golden cases (numpy transcription of TRL f2cd5771)', () => {
  const cases = goldenCases('trl');
  it('the golden file cites the TRL commit the kernel reproduces and covers every mode', () => {
    expect((GOLDEN_META.trl as { commit: string }).commit).toBe('f2cd57710ae345ea6428ae95363267fcf38a3dc8');
    expect(new Set(cases.map((c) => c.mode))).toEqual(new Set(TRL_VLLM_IS_MODES));
    expect(cases.length).toBe(72);
    // the cases exercise rejection, truncation at both bounds and empty rows
    expect(cases.some((c) => c.outputs.summary.rejected_tokens > 0 && c.mode === 'sequence_mask')).toBe(true);
    expect(cases.some((c) => c.outputs.summary.rejected_tokens > 0 && c.mode === 'token_mask')).toBe(true);
  });
  for (const c of cases) {
    it(c.name, () => {
      const { inputs, shape } = goldenBatch(c.batch);
      expectMatchesGolden(trlVllmImportanceSampling(inputs, shape, opts(c)), c);
    });
  }
});

describe('trlVllmImportanceSampling', () => {
  // row 0: log-ratios 0.5, 0.75 (sum 1.25); row 1: -0.25 and padding; row 2: no loss token
  const shape = { rows: 3, cols: 2 };
  const inputs = {
    oldLogProb: Float64Array.of(-0.5, -0.25, -1.25, 7),
    rolloutLogProb: Float64Array.of(-1, -1, -1, Number.NaN),
    responseMask: Uint8Array.of(1, 1, 1, 0),
  };
  const three = {
    oldLogProb: Float64Array.of(-0.5, -0.25, -1.25, 7, -1, -1),
    rolloutLogProb: Float64Array.of(-1, -1, -1, Number.NaN, -1, -1),
    responseMask: Uint8Array.of(1, 1, 1, 0, 0, 0),
  };

  it("defaults are TRL's: sequence_mask, clip_max 3.0, no clip_min", () => {
    expect(TRL_VLLM_IS_DEFAULTS).toEqual({ mode: 'sequence_mask', clipMax: 3.0, clipMin: null });
    expect(Object.isFrozen(TRL_VLLM_IS_DEFAULTS)).toBe(true);
    const a = trlVllmImportanceSampling(inputs, { rows: 2, cols: 2 });
    const b = trlVllmImportanceSampling(inputs, { rows: 2, cols: 2 }, { mode: 'sequence_mask', clipMax: 3 });
    expect(a).toEqual(b);
  });

  it('a sequence ratio is exp of the SUM of log-ratios (a product of token ratios), repeated on the row', () => {
    const r = trlVllmImportanceSampling(
      inputs,
      { rows: 2, cols: 2 },
      { mode: 'sequence_truncate', clipMax: 10 },
    );
    expect(r.weights[0]).toBe(Math.exp(0.5 + 0.75));
    expect(r.weights[1]).toBe(Math.exp(0.5 + 0.75));
    expect(r.weights[2]).toBe(Math.exp(-0.25));
    expect(r.weights[3]).toBe(0); // padding, whatever TRL's tensor holds there
  });

  it('sequence_mask rejects a whole row above C_max; the metrics are taken after masking', () => {
    const r = trlVllmImportanceSampling(inputs, { rows: 2, cols: 2 }, { clipMax: 3 });
    // exp(1.25) = 3.49 > 3: row 0 rejected
    expect(Array.from(r.weights)).toEqual([0, 0, Math.exp(-0.25), 0]);
    expect(Array.from(r.mask)).toEqual([0, 0, 1, 0]);
    expect(r.metrics['sampling/importance_sampling_ratio/min']).toBe(0);
    expect(r.metrics['sampling/importance_sampling_ratio/max']).toBe(Math.exp(-0.25));
    expect(r.summary.rejected_tokens).toBe(2);
    expect(r.summary.rejected_sequences).toBe(1);
    expect(r.summary.seq_masked_fraction).toBe(0.5);
  });

  it('sequence modes count every row in the ratio metrics, a row without loss tokens as ratio 1', () => {
    const r = trlVllmImportanceSampling(three, shape, { mode: 'sequence_truncate', clipMax: 10 });
    const ratios = [Math.exp(1.25), Math.exp(-0.25), 1];
    expect(r.metrics['sampling/importance_sampling_ratio/mean']).toBeCloseTo(
      (ratios[0]! + ratios[1]! + 1) / 3,
      14,
    );
    expect(r.metrics['sampling/importance_sampling_ratio/min']).toBe(Math.exp(-0.25));
    // token modes: loss tokens only
    const tok = trlVllmImportanceSampling(three, shape, { mode: 'token_truncate', clipMax: 10 });
    const tr = [Math.exp(0.5), Math.exp(0.75), Math.exp(-0.25)];
    expect(tok.metrics['sampling/importance_sampling_ratio/mean']).toBeCloseTo(
      (tr[0]! + tr[1]! + tr[2]!) / 3,
      14,
    );
  });

  it('sampling_logp_difference is the plain mean and max of |old - rollout| over loss tokens', () => {
    const r = trlVllmImportanceSampling(three, shape, { mode: 'token_mask' });
    expect(r.metrics['sampling/sampling_logp_difference/mean']).toBeCloseTo(1.5 / 3, 15);
    expect(r.metrics['sampling/sampling_logp_difference/max']).toBe(0.75);
  });

  it('mask modes keep a ratio equal to a bound (TRL rejects only r < C_min or r > C_max)', () => {
    const eq = {
      oldLogProb: Float64Array.of(-1, -1),
      rolloutLogProb: Float64Array.of(-1, -1),
      responseMask: Float32Array.of(1, 1),
    };
    for (const mode of ['token_mask', 'sequence_mask'] as const) {
      const r = trlVllmImportanceSampling(eq, { rows: 1, cols: 2 }, { mode, clipMin: 0.5, clipMax: 1 });
      expect(Array.from(r.weights), mode).toEqual([1, 1]);
      const lo = trlVllmImportanceSampling(eq, { rows: 1, cols: 2 }, { mode, clipMin: 1, clipMax: 2 });
      expect(Array.from(lo.mask), mode).toEqual([1, 1]);
    }
  });

  it('truncate clamps from both sides when both bounds are set, and masks nothing', () => {
    const r = trlVllmImportanceSampling(three, shape, { mode: 'token_truncate', clipMin: 0.9, clipMax: 1.7 });
    expect(Array.from(r.weights)).toEqual([Math.exp(0.5), 1.7, 0.9, 0, 0, 0]);
    expect(r.summary.masked_fraction).toBe(0);
  });

  it('refuses bad configurations as TRL does, and the ones TRL lets through silently', () => {
    const s = { rows: 2, cols: 2 };
    expectLabError(
      () => trlVllmImportanceSampling(inputs, s, { mode: 'seq_mask' as TrlVllmIsMode }),
      'UNKNOWN_MODE',
      'vllm_importance_sampling_mode',
    );
    expectLabError(
      () => trlVllmImportanceSampling(inputs, s, { clipMin: 3, clipMax: 3 }),
      'BAD_ARGUMENT',
      'must be less than',
    );
    expectLabError(
      () => trlVllmImportanceSampling(inputs, s, { mode: 'token_truncate', clipMax: null }),
      'BAD_ARGUMENT',
      'needs vllm_importance_sampling_clip_min or _clip_max',
    );
    expectLabError(() => trlVllmImportanceSampling(inputs, s, { clipMax: -1 }), 'BAD_ARGUMENT', 'clip_max');
    expectLabError(
      () => trlVllmImportanceSampling(inputs, s, { clipMin: Number.NaN }),
      'BAD_ARGUMENT',
      'clip_min',
    );
    // mask modes without any bound are TRL-legal (nothing is masked)
    const r = trlVllmImportanceSampling(inputs, s, { mode: 'token_mask', clipMax: null });
    expect(r.summary.rejected_tokens).toBe(0);
  });

  it('bad inputs: a NaN log-prob at a loss token names it; no loss token at all is EMPTY_MASK', () => {
    const bad = { ...inputs, oldLogProb: Float64Array.of(-0.5, Number.NaN, -1, 0) };
    expectLabError(
      () => trlVllmImportanceSampling(bad, { rows: 2, cols: 2 }),
      'NON_FINITE',
      'old_log_prob',
      'row 0, token 1',
    );
    const empty = { ...inputs, responseMask: new Uint8Array(4) };
    expectLabError(
      () => trlVllmImportanceSampling(empty, { rows: 2, cols: 2 }),
      'EMPTY_MASK',
      'response_mask',
    );
    expectLabError(
      () => trlVllmImportanceSampling(inputs, { rows: 3, cols: 2 }),
      'SHAPE_MISMATCH',
      'old_log_prob',
    );
  });

  it('an overflowing ratio without C_max is NON_FINITE naming row and token, not an Inf weight', () => {
    const big = {
      oldLogProb: Float64Array.of(-1, -0.001, -0.001),
      rolloutLogProb: Float64Array.of(-1, -400, -400),
      responseMask: Float32Array.of(1, 1, 1),
    };
    expectLabError(
      () =>
        trlVllmImportanceSampling(
          big,
          { rows: 1, cols: 3 },
          { mode: 'sequence_truncate', clipMin: 0.1, clipMax: null },
        ),
      'NON_FINITE',
      'row 0, token 0',
      'clip_max',
    );
    // with C_max the same batch is fine: masked (sequence_mask) or capped (sequence_truncate)
    const m = trlVllmImportanceSampling(big, { rows: 1, cols: 3 });
    expect(Array.from(m.weights)).toEqual([0, 0, 0]);
    expect(m.summary.eff_sample_size).toBe(0);
  });

  it('writes into the given buffers and refuses one that aliases an input', () => {
    const outWeights = new Float64Array(4);
    const outMask = new Float32Array(4);
    const r = trlVllmImportanceSampling(inputs, { rows: 2, cols: 2 }, { outWeights, outMask });
    expect(r.weights).toBe(outWeights);
    expect(r.mask).toBe(outMask);
    expectLabError(
      () => trlVllmImportanceSampling(inputs, { rows: 2, cols: 2 }, { outWeights: inputs.oldLogProb }),
      'BAD_ARGUMENT',
      'outWeights',
      'old_log_prob',
    );
  });
});

describe('trlVllmImportanceSampling: properties', () => {
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
        mode: fc.constantFrom(...TRL_VLLM_IS_MODES),
        clipMin: fc.option(fc.double({ min: 0, max: 0.9, noNaN: true }), { nil: null }),
        clipMax: fc.double({ min: 1.1, max: 10, noNaN: true }),
      }),
    );

  it('masked positions never affect the output, and weights lie within the bounds', () => {
    fc.assert(
      fc.property(batch, (b) => {
        const shape = { rows: b.rows, cols: b.cols };
        const responseMask = Float32Array.from(b.mask);
        const rollout = Float64Array.from(b.rollout);
        const old = Float64Array.from(b.rollout, (v, i) => v + (b.gap[i] as number));
        const options = { mode: b.mode, clipMin: b.clipMin, clipMax: b.clipMax };
        const clean = trlVllmImportanceSampling(
          { oldLogProb: old, rolloutLogProb: rollout, responseMask },
          shape,
          options,
        );
        const dirtyOld = Float64Array.from(old, (v, i) => (b.mask[i] ? v : (b.junk[i] as number)));
        const dirtyRollout = Float64Array.from(rollout, (v, i) => (b.mask[i] ? v : -(b.junk[i] as number)));
        const dirty = trlVllmImportanceSampling(
          { oldLogProb: dirtyOld, rolloutLogProb: dirtyRollout, responseMask },
          shape,
          options,
        );
        expect(dirty).toEqual(clean);
        const lo = b.clipMin ?? 0;
        for (let i = 0; i < b.mask.length; i++) {
          const w = clean.weights[i] as number;
          if (!b.mask[i]) {
            expect(w).toBe(0);
            expect(clean.mask[i]).toBe(0);
          } else if (b.mode.endsWith('truncate')) {
            expect(w >= lo && w <= b.clipMax).toBe(true);
            expect(clean.mask[i]).toBe(1);
          } else {
            expect(clean.mask[i] === 0 ? w === 0 : w >= lo && w <= b.clipMax).toBe(true);
          }
        }
        expect(clean.summary.eff_sample_size).toBeGreaterThanOrEqual(0);
        expect(clean.summary.eff_sample_size).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300, seed: 28 },
    );
  });
});
