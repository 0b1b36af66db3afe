import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import {
  AGG_SUM_SLOTS,
  type AggOptions,
  addAggSums,
  aggLoss,
  aggLossDenominator,
  aggLossGrad,
  aggSumsOf,
  LOSS_AGG_MODES,
  type LossAggMode,
} from './aggLoss.js';
import { LabError } from './errors.js';

const shape = { rows: 3, cols: 4 };
// row 0: 4 valid tokens, row 1: 2 valid (with a hole), row 2: fully masked
const x = Float32Array.from([1, 2, 3, 4, 10, 100, 20, 1000, 7, 7, 7, 7]);
const m = Uint8Array.from([1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0]);

describe('aggLoss: hand-computed values', () => {
  // row sums: 10, 30, (0, invalid); valid tokens 6, valid rows 2; T = 4
  it('token-mean = Σ x·m / Σ m', () => {
    expect(aggLoss({ lossMat: x, lossMask: m }, shape, 'token-mean')).toBeCloseTo(40 / 6, 12);
  });
  it('seq-mean-token-sum averages row sums over valid rows only', () => {
    expect(aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-sum')).toBeCloseTo(40 / 2, 12);
  });
  it('seq-mean-token-mean averages per-row token means (with the 1e-8 of verl)', () => {
    expect(aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-mean')).toBeCloseTo(
      (10 / (4 + 1e-8) + 30 / (2 + 1e-8)) / 2,
      12,
    );
  });
  it('seq-mean-token-sum-norm sums over rows and divides by T, ignoring dp and global sizes', () => {
    expect(aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-sum-norm')).toBeCloseTo(40 / 4, 12);
    expect(
      aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-sum-norm', {
        dpSize: 8,
        globalBatchSize: 3,
        batchNumTokens: 99,
      }),
    ).toBeCloseTo(40 / 4, 12);
    expect(
      aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-sum-norm', { lossScaleFactor: 16 }),
    ).toBeCloseTo(40 / 16, 12);
  });
  it('dp_size multiplies, batch_num_tokens and global_batch_size replace the counts', () => {
    expect(
      aggLoss({ lossMat: x, lossMask: m }, shape, 'token-mean', { dpSize: 4, batchNumTokens: 40 }),
    ).toBeCloseTo((40 / 40) * 4, 12);
    expect(
      aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-sum', { dpSize: 2, globalBatchSize: 8 }),
    ).toBeCloseTo((40 / 8) * 2, 12);
    // global_batch_size does not affect token-mean
    expect(aggLoss({ lossMat: x, lossMask: m }, shape, 'token-mean', { globalBatchSize: 8 })).toBeCloseTo(
      40 / 6,
      12,
    );
  });
  it('a float mask and a Uint8 mask give the same value', () => {
    for (const mode of LOSS_AGG_MODES) {
      expect(aggLoss({ lossMat: x, lossMask: Float32Array.from(m) }, shape, mode)).toBe(
        aggLoss({ lossMat: x, lossMask: m }, shape, mode),
      );
    }
  });
});

describe('aggLoss: degenerate input and bad input', () => {
  const zero = new Uint8Array(12);
  it('all-zero mask: EMPTY_MASK under token-mean and seq-mean-*, 0 under sum-norm', () => {
    for (const mode of ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const) {
      expectLabError(() => aggLoss({ lossMat: x, lossMask: zero }, shape, mode), 'EMPTY_MASK', 'loss_mask');
    }
    expect(aggLoss({ lossMat: x, lossMask: zero }, shape, 'seq-mean-token-sum-norm')).toBe(0);
    // with an explicit global count, an empty micro-batch is a legal 0
    expect(aggLoss({ lossMat: x, lossMask: zero }, shape, 'token-mean', { batchNumTokens: 10 })).toBe(0);
  });
  it('invalid mode is UNKNOWN_MODE naming loss_agg_mode', () => {
    expectLabError(
      () => aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean' as LossAggMode),
      'UNKNOWN_MODE',
      'loss_agg_mode',
    );
  });
  it('a mask that is not 0/1 is BAD_MASK naming field and position', () => {
    const bad = Float32Array.from(m);
    bad[6] = 0.5;
    const err = expectLabError(
      () => aggLoss({ lossMat: x, lossMask: bad }, shape, 'token-mean'),
      'BAD_MASK',
      'loss_mask',
    );
    expect(err.message).toContain('row 1, token 2');
  });
  it('length mismatch is SHAPE_MISMATCH naming the field', () => {
    expectLabError(
      () => aggLoss({ lossMat: x.subarray(0, 11), lossMask: m }, shape, 'token-mean'),
      'SHAPE_MISMATCH',
      'loss_mat',
    );
    expectLabError(
      () => aggLoss({ lossMat: x, lossMask: m.subarray(1) }, shape, 'token-mean'),
      'SHAPE_MISMATCH',
      'loss_mask',
    );
  });
  it('bad global batch info is BAD_ARGUMENT', () => {
    expectLabError(
      () => aggLoss({ lossMat: x, lossMask: m }, shape, 'token-mean', { dpSize: 0 }),
      'BAD_ARGUMENT',
      'dp_size',
    );
    expectLabError(
      () => aggLoss({ lossMat: x, lossMask: m }, shape, 'token-mean', { batchNumTokens: -1 }),
      'BAD_ARGUMENT',
      'batch_num_tokens',
    );
    expectLabError(
      () => aggLoss({ lossMat: x, lossMask: m }, shape, 'seq-mean-token-sum-norm', { lossScaleFactor: 0 }),
      'BAD_ARGUMENT',
      'loss_scale_factor',
    );
  });
  it('non-finite value under mask 1 is NON_FINITE in every mode', () => {
    const y = Float32Array.from(x);
    y[4] = Number.NaN;
    for (const mode of LOSS_AGG_MODES) {
      const err = expectLabError(
        () => aggLoss({ lossMat: y, lossMask: m }, shape, mode),
        'NON_FINITE',
        'loss_mat',
      );
      expect(err.message).toContain('row 1, token 0');
    }
  });
  it('NaN in padding: ignored by token-mean (as verl), NON_FINITE where verl would return NaN', () => {
    const y = Float32Array.from(x);
    y[5] = Number.NaN; // masked position of valid row 1
    expect(aggLoss({ lossMat: y, lossMask: m }, shape, 'token-mean')).toBeCloseTo(40 / 6, 12);
    for (const mode of ['seq-mean-token-sum', 'seq-mean-token-mean', 'seq-mean-token-sum-norm'] as const) {
      expectLabError(() => aggLoss({ lossMat: y, lossMask: m }, shape, mode), 'NON_FINITE', 'row 1, token 1');
    }
  });
  it('NaN in a fully masked row is left out of the seq-mean modes, as in verl', () => {
    const y = Float32Array.from(x);
    y[9] = Number.POSITIVE_INFINITY;
    expect(aggLoss({ lossMat: y, lossMask: m }, shape, 'seq-mean-token-sum')).toBeCloseTo(20, 12);
    expect(aggLoss({ lossMat: y, lossMask: m }, shape, 'token-mean')).toBeCloseTo(40 / 6, 12);
    expectLabError(
      () => aggLoss({ lossMat: y, lossMask: m }, shape, 'seq-mean-token-sum-norm'),
      'NON_FINITE',
      'row 2, token 1',
    );
  });
});

/** Random [B,T] batch with ragged masks and holes; options drawn per mode. */
const batchArb = fc
  .record({ rows: fc.integer({ min: 1, max: 6 }), cols: fc.integer({ min: 1, max: 7 }) })
  .chain(({ rows, cols }) =>
    fc.record({
      rows: fc.constant(rows),
      cols: fc.constant(cols),
      x: fc.array(fc.double({ min: -8, max: 8, noNaN: true }), {
        minLength: rows * cols,
        maxLength: rows * cols,
      }),
      m: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: rows * cols, maxLength: rows * cols }),
      dpSize: fc.integer({ min: 1, max: 8 }),
      batchNumTokens: fc.option(fc.integer({ min: 1, max: 500 }), { nil: null }),
      globalBatchSize: fc.option(fc.integer({ min: 1, max: 64 }), { nil: null }),
      lossScaleFactor: fc.option(fc.integer({ min: 1, max: 4096 }), { nil: null }),
      mode: fc.constantFrom(...LOSS_AGG_MODES),
    }),
  );

describe('aggLoss properties', () => {
  it("every mode's denominator equals its documented formula and loss = numerator / denominator", () => {
    fc.assert(
      fc.property(batchArb, (g) => {
        const shape2 = { rows: g.rows, cols: g.cols };
        const mask = Uint8Array.from(g.m);
        const opts: AggOptions = {
          dpSize: g.dpSize,
          batchNumTokens: g.batchNumTokens,
          globalBatchSize: g.globalBatchSize,
          lossScaleFactor: g.lossScaleFactor,
        };
        // independent counts
        let tokens = 0;
        let validRows = 0;
        let sumAll = 0;
        let sumRowMeans = 0;
        for (let b = 0; b < g.rows; b++) {
          let n = 0;
          let s = 0;
          for (let t = 0; t < g.cols; t++) {
            n += g.m[b * g.cols + t] as number;
            s += (g.m[b * g.cols + t] as number) * (g.x[b * g.cols + t] as number);
          }
          tokens += n;
          sumAll += s;
          if (n > 0) {
            validRows++;
            sumRowMeans += s / (n + 1e-8);
          }
        }
        const expectedDen = {
          'token-mean': (g.batchNumTokens ?? tokens) / g.dpSize,
          'seq-mean-token-sum': (g.globalBatchSize ?? validRows) / g.dpSize,
          'seq-mean-token-mean': (g.globalBatchSize ?? validRows) / g.dpSize,
          'seq-mean-token-sum-norm': g.lossScaleFactor ?? g.cols,
        }[g.mode];
        const d = aggLossDenominator(mask, shape2, g.mode, opts);
        expect(d.denominator).toBeCloseTo(expectedDen, 12);
        expect(d.validTokens).toBe(tokens);
        expect(d.validRows).toBe(validRows);
        if (expectedDen === 0) {
          expect(() =>
            aggLoss({ lossMat: Float64Array.from(g.x), lossMask: mask }, shape2, g.mode, opts),
          ).toThrow(LabError);
          return;
        }
        const numerator = g.mode === 'seq-mean-token-mean' ? sumRowMeans : sumAll;
        const loss = aggLoss({ lossMat: Float64Array.from(g.x), lossMask: mask }, shape2, g.mode, opts);
        expect(Math.abs(loss - numerator / expectedDen)).toBeLessThanOrEqual(1e-9 * (1 + Math.abs(loss)));
      }),
      { numRuns: 300 },
    );
  });

  it('values at masked positions never change the loss (token-mean, finite garbage: every mode)', () => {
    fc.assert(
      fc.property(batchArb, fc.double({ min: -1e6, max: 1e6, noNaN: true }), (g, garbage) => {
        const shape2 = { rows: g.rows, cols: g.cols };
        const mask = Uint8Array.from(g.m);
        if (!mask.some((v) => v === 1)) return;
        const a = Float64Array.from(g.x);
        const b2 = Float64Array.from(g.x, (v, i) => (g.m[i] === 0 ? garbage : v));
        expect(aggLoss({ lossMat: b2, lossMask: mask }, shape2, g.mode)).toBeCloseTo(
          aggLoss({ lossMat: a, lossMask: mask }, shape2, g.mode),
          6,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('aggLossGrad matches central finite differences in every mode', () => {
    fc.assert(
      fc.property(batchArb, (g) => {
        const shape2 = { rows: g.rows, cols: g.cols };
        const mask = Uint8Array.from(g.m);
        const opts: AggOptions = { dpSize: g.dpSize, lossScaleFactor: g.lossScaleFactor };
        if (g.mode !== 'seq-mean-token-sum-norm' && !mask.some((v) => v === 1)) return;
        const grad = aggLossGrad(mask, shape2, g.mode, opts);
        const xs = Float64Array.from(g.x);
        const h = 1e-3;
        for (let i = 0; i < xs.length; i++) {
          const v = xs[i] as number;
          xs[i] = v + h;
          const up = aggLoss({ lossMat: xs, lossMask: mask }, shape2, g.mode, opts);
          xs[i] = v - h;
          const down = aggLoss({ lossMat: xs, lossMask: mask }, shape2, g.mode, opts);
          xs[i] = v;
          expect(grad[i]).toBeCloseTo((up - down) / (2 * h), 6);
          if (g.m[i] === 0) expect(grad[i]).toBe(0);
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe('addAggSums / aggSumsOf (the accumulator layout the fused passes share)', () => {
  it('adds each call into the five AggSums slots and leaves the slots after them alone', () => {
    const acc = new Float64Array(AGG_SUM_SLOTS + 1);
    acc[AGG_SUM_SLOTS] = 7; // a pass's own slot
    addAggSums(acc, 1.5, 1, 0.25, 3, 1);
    addAggSums(acc, -0.5, 2, 0.5, 4, 2);
    expect(aggSumsOf(acc)).toEqual({
      sumAll: 1,
      sumValidRows: 3,
      sumRowMeans: 0.75,
      validTokens: 7,
      validRows: 3,
    });
    expect(acc[AGG_SUM_SLOTS]).toBe(7);
  });
});

describe('aggLossDenominator', () => {
  it('reports formula text in verl names', () => {
    expect(aggLossDenominator(m, shape, 'token-mean').formula).toBe('sum(mask)');
    expect(aggLossDenominator(m, shape, 'token-mean', { dpSize: 2, batchNumTokens: 9 })).toEqual({
      mode: 'token-mean',
      denominator: 4.5,
      formula: 'batch_num_tokens / dp_size',
      validTokens: 6,
      validRows: 2,
    });
    expect(aggLossDenominator(m, shape, 'seq-mean-token-mean').formula).toBe(
      'count(rows with sum(mask) > 0)',
    );
    expect(aggLossDenominator(m, shape, 'seq-mean-token-sum-norm').formula).toBe('T (loss_mask.shape[-1])');
  });
});
