import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { LOSS_AGG_MODES } from './aggLoss.js';
import {
  policyLossVanilla,
  policyLossVanillaGrad,
  VANILLA_DEFAULTS,
  type VanillaLossOptions,
} from './vanillaPolicyLoss.js';

/** One token per case: old = 0, lp = log(r). */
function single(r: number, a: number, options: VanillaLossOptions = {}) {
  return policyLossVanilla(
    {
      oldLogProb: Float64Array.of(0),
      logProb: Float64Array.of(Math.log(r)),
      advantages: Float64Array.of(a),
      responseMask: Uint8Array.of(1),
    },
    { rows: 1, cols: 1 },
    options,
  );
}

describe('policyLossVanilla: the clipped surrogate token by token', () => {
  it('A > 0: unclipped inside the range, capped at 1 + eps_high above it, not floored below', () => {
    expect(single(1.1, 2).loss).toBeCloseTo(-2.2, 12);
    expect(single(1.1, 2).metrics.pg_clipfrac).toBe(0);
    expect(single(1.5, 2).loss).toBeCloseTo(-2 * 1.2, 12);
    expect(single(1.5, 2).metrics.pg_clipfrac).toBeCloseTo(1, 7);
    expect(single(0.5, 2).loss).toBeCloseTo(-1, 12); // min(r, clip(r)) = r: pessimistic side
    expect(single(0.5, 2).metrics.pg_clipfrac).toBe(0);
  });
  it('A < 0: floored at 1 - eps_low below, unclipped above, dual-clipped at c', () => {
    expect(single(0.5, -1).loss).toBeCloseTo(0.8, 12);
    expect(single(0.5, -1).metrics.pg_clipfrac).toBeCloseTo(1, 7);
    expect(single(2.5, -1).loss).toBeCloseTo(2.5, 12);
    expect(single(2.5, -1).metrics.pg_clipfrac_lower).toBe(0);
    const dual = single(4, -1);
    expect(dual.loss).toBeCloseTo(3, 12);
    expect(dual.metrics.pg_clipfrac_lower).toBeCloseTo(1, 7);
    expect(single(4, -1, { clipRatioC: 10 }).loss).toBeCloseTo(4, 12);
  });
  it('asymmetric clip and the null fallback', () => {
    expect(single(1.5, 1, { clipRatioLow: 0.2, clipRatioHigh: 0.28 }).loss).toBeCloseTo(-1.28, 12);
    expect(single(0.5, -1, { clipRatioLow: 0.1, clipRatioHigh: 0.28 }).loss).toBeCloseTo(0.9, 12);
    expect(single(1.5, 1, { clipRatio: 0.3 }).loss).toBeCloseTo(-1.3, 12);
    expect(single(1.5, 1, { clipRatio: 0.3, clipRatioHigh: 0.1 }).loss).toBeCloseTo(-1.1, 12);
  });
  it('the log-ratio is clamped to ±20 before exp, and ppo_kl uses the clamped value', () => {
    const r = policyLossVanilla(
      {
        oldLogProb: Float64Array.of(0, 0),
        logProb: Float64Array.of(25, -25),
        advantages: Float64Array.of(-1, 1),
        responseMask: Uint8Array.of(1, 1),
      },
      { rows: 1, cols: 2 },
      { clipRatioC: 1e12 },
    );
    expect(r.perTokenLoss[0]).toBeCloseTo(Math.fround(Math.exp(20)), 0);
    expect(r.perTokenLoss[1]).toBeCloseTo(-Math.exp(-20), 12);
    expect(r.metrics.ppo_kl).toBeCloseTo((-20 + 20) / 2, 12);
  });
  it('A = 0 gives loss 0; r == 1 gives -mean(A), no clipping, ppo_kl 0', () => {
    expect(single(3, 0).loss).toBe(0);
    const lp = Float64Array.of(-1, -2, -3, -4);
    const r = policyLossVanilla(
      {
        oldLogProb: lp,
        logProb: lp,
        advantages: Float64Array.of(1, -2, 3, 100),
        responseMask: Uint8Array.of(1, 1, 1, 0),
      },
      {
        rows: 2,
        cols: 2,
      },
    );
    expect(r.loss).toBeCloseTo(-(1 - 2 + 3) / 3, 12);
    expect(r.metrics).toEqual({ pg_clipfrac: 0, ppo_kl: 0, pg_clipfrac_lower: 0 });
  });
  it('IS weights scale the per-token loss after clipping and leave metrics unchanged', () => {
    const inputs = {
      oldLogProb: Float64Array.of(0, 0, 0),
      logProb: Float64Array.of(Math.log(1.5), Math.log(0.5), Math.log(4)),
      advantages: Float64Array.of(1, -1, -1),
      responseMask: Uint8Array.of(1, 1, 1),
    };
    const shape = { rows: 1, cols: 3 };
    const plain = policyLossVanilla(inputs, shape);
    const weighted = policyLossVanilla(inputs, shape, { rolloutIsWeights: Float64Array.of(0.5, 2, 0.25) });
    expect(weighted.loss).toBeCloseTo((-1.2 * 0.5 + 0.8 * 2 + 3 * 0.25) / 3, 6);
    expect(weighted.metrics).toEqual(plain.metrics);
  });
  it('metrics use masked_mean with the 1e-8 epsilon: an all-zero mask gives 0 metrics and EMPTY_MASK loss', () => {
    const inputs = {
      oldLogProb: Float64Array.of(0),
      logProb: Float64Array.of(1),
      advantages: Float64Array.of(1),
      responseMask: Uint8Array.of(0),
    };
    const shape = { rows: 1, cols: 1 };
    expectLabError(() => policyLossVanilla(inputs, shape), 'EMPTY_MASK');
    const r = policyLossVanilla(inputs, shape, { lossAggMode: 'seq-mean-token-sum-norm' });
    expect(r.loss).toBe(0);
    expect(r.metrics).toEqual({ pg_clipfrac: 0, ppo_kl: 0, pg_clipfrac_lower: 0 });
  });
});

describe('VANILLA_DEFAULTS', () => {
  it('is frozen to the leaves: a stray assignment throws instead of changing every later loss', () => {
    expect(() => {
      (VANILLA_DEFAULTS as { clipRatio: number }).clipRatio = 0.5;
    }).toThrow(TypeError);
    expect(() => {
      (VANILLA_DEFAULTS.agg as { dpSize?: number }).dpSize = 2;
    }).toThrow(TypeError);
    expect(VANILLA_DEFAULTS.clipRatio).toBe(0.2);
  });
});

describe('policyLossVanilla: bad input', () => {
  const shape = { rows: 2, cols: 2 };
  const old = Float32Array.of(-1, -1, -1, -1);
  const lp = Float32Array.of(-0.5, -1.5, -1, -2);
  const adv = Float32Array.of(1, 1, -1, -1);
  const mask = Uint8Array.of(1, 1, 1, 0);
  it('clip_ratio_c <= 1 is BAD_ARGUMENT (verl asserts)', () => {
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          clipRatioC: 1,
        }),
      'BAD_ARGUMENT',
      'clip_ratio_c',
    );
  });
  it('negative clip ratios and unknown modes are rejected', () => {
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          clipRatioLow: -0.1,
        }),
      'BAD_ARGUMENT',
      'clip_ratio_low',
    );
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          lossAggMode: 'mean' as never,
        }),
      'UNKNOWN_MODE',
      'loss_agg_mode',
    );
  });
  it.each([
    { field: 'log_prob', index: 2, value: Number.NaN, position: 'row 1, token 0' },
    { field: 'old_log_prob', index: 1, value: Number.NEGATIVE_INFINITY, position: 'row 0, token 1' },
    { field: 'advantages', index: 0, value: Number.POSITIVE_INFINITY, position: 'row 0, token 0' },
  ] as const)(
    '$value in $field under mask 1 is NON_FINITE naming field, row, token',
    ({ field, index, value, position }) => {
      const inputs = {
        old_log_prob: Float32Array.from(old),
        log_prob: Float32Array.from(lp),
        advantages: Float32Array.from(adv),
      };
      inputs[field][index] = value;
      expectLabError(
        () =>
          policyLossVanilla(
            {
              oldLogProb: inputs.old_log_prob,
              logProb: inputs.log_prob,
              advantages: inputs.advantages,
              responseMask: mask,
            },
            shape,
          ),
        'NON_FINITE',
        field,
        position,
      );
    },
  );
  it('non-finite IS weights under mask 1 are NON_FINITE naming rollout_is_weights', () => {
    const w = Float32Array.of(1, Number.NaN, 1, 1);
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          rolloutIsWeights: w,
        }),
      'NON_FINITE',
      'rollout_is_weights',
    );
  });
  it('NaN log-prob in padding: token-mean ignores it like verl; seq modes raise where verl gives NaN', () => {
    const padded = Float32Array.from(lp);
    padded[3] = Number.NaN;
    const clean = policyLossVanilla(
      { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask },
      shape,
    );
    const r = policyLossVanilla(
      { oldLogProb: old, logProb: padded, advantages: adv, responseMask: mask },
      shape,
    );
    expect(r.loss).toBeCloseTo(clean.loss, 7);
    expect(r.metrics.ppo_kl).toBeCloseTo(clean.metrics.ppo_kl, 7);
    expect(r.metrics.pg_clipfrac).toBeCloseTo(clean.metrics.pg_clipfrac, 7);
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: old, logProb: padded, advantages: adv, responseMask: mask }, shape, {
          lossAggMode: 'seq-mean-token-sum',
        }),
      'NON_FINITE',
      'row 1, token 1',
    );
  });
  it('non-finite padding: ignored by token-mean and in fully masked rows, NON_FINITE where verl multiplies it in', () => {
    const sh = { rows: 2, cols: 2 };
    const o = Float32Array.of(-1, -1, -1, -1);
    const l = Float32Array.of(-1, -1, -1, -1);
    const a = Float32Array.of(1, Number.POSITIVE_INFINITY, Number.NaN, Number.NaN);
    const m = Uint8Array.of(1, 0, 0, 0); // row 1 fully masked
    expect(
      policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a, responseMask: m }, sh).loss,
    ).toBeCloseTo(-1, 12);
    expect(
      policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a, responseMask: m }, sh).perTokenLoss[1],
    ).toBe(0);
    // seq-mean: row 0 counts, so its padded Inf advantage gives Inf·0 = NaN in verl
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a, responseMask: m }, sh, {
          lossAggMode: 'seq-mean-token-mean',
        }),
      'NON_FINITE',
      'row 0, token 1',
    );
    const a2 = Float32Array.of(1, 0, Number.NaN, Number.NaN);
    expect(
      policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a2, responseMask: m }, sh, {
        lossAggMode: 'seq-mean-token-mean',
      }).loss,
    ).toBeCloseTo(-1, 7);
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a2, responseMask: m }, sh, {
          lossAggMode: 'seq-mean-token-sum-norm',
        }),
      'NON_FINITE',
      'row 1, token 0',
    );
    // a non-finite IS weight in padding: token-mean ignores it; seq-mean multiplies it in (verl: NaN)
    const w = Float32Array.of(1, Number.POSITIVE_INFINITY, 1, 1);
    const a3 = Float32Array.of(1, 0, 0, 0);
    expect(
      policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a3, responseMask: m }, sh, {
        rolloutIsWeights: w,
      }).loss,
    ).toBeCloseTo(-1, 12);
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: o, logProb: l, advantages: a3, responseMask: m }, sh, {
          rolloutIsWeights: w,
          lossAggMode: 'seq-mean-token-sum',
        }),
      'NON_FINITE',
      'row 0, token 1',
    );
  });
  it('masks that are not 0/1 are BAD_MASK; shape mismatches are SHAPE_MISMATCH naming the field', () => {
    expectLabError(
      () =>
        policyLossVanilla(
          { oldLogProb: old, logProb: lp, advantages: adv, responseMask: Float32Array.of(1, 2, 1, 0) },
          shape,
        ),
      'BAD_MASK',
      'response_mask',
      'row 0, token 1',
    );
    // two bad entries whose offsets from 1 cancel (0.5 and 1.5) on the float64 (non-SIMD) path
    expectLabError(
      () =>
        policyLossVanilla(
          {
            oldLogProb: Float64Array.from(old),
            logProb: Float64Array.from(lp),
            advantages: Float64Array.from(adv),
            responseMask: Float64Array.of(0.5, 1.5, 1, 0),
          },
          shape,
        ),
      'BAD_MASK',
      'response_mask',
      'row 0, token 0',
    );
    expectLabError(
      () =>
        policyLossVanilla(
          { oldLogProb: old, logProb: lp.subarray(1), advantages: adv, responseMask: mask },
          shape,
        ),
      'SHAPE_MISMATCH',
      'log_prob',
    );
    expectLabError(
      () =>
        policyLossVanilla(
          { oldLogProb: old, logProb: lp, advantages: adv.subarray(1), responseMask: mask },
          shape,
        ),
      'SHAPE_MISMATCH',
      'advantages',
    );
    expectLabError(
      () =>
        policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
          rolloutIsWeights: Float32Array.of(1),
        }),
      'SHAPE_MISMATCH',
      'rollout_is_weights',
    );
  });
});

/** Random batch whose log-ratios stay away from the clip edges (the surrogate is smooth there). */
const gradBatch = fc
  .record({
    rows: fc.integer({ min: 1, max: 4 }),
    cols: fc.integer({ min: 1, max: 5 }),
    mode: fc.constantFrom(...LOSS_AGG_MODES),
    weighted: fc.boolean(),
    low: fc.constantFrom(0.2, 0.1),
    high: fc.constantFrom(0.2, 0.28),
  })
  .chain((s) => {
    const n = s.rows * s.cols;
    return fc.record({
      s: fc.constant(s),
      old: fc.array(fc.double({ min: -5, max: 0, noNaN: true }), { minLength: n, maxLength: n }),
      // log-ratios: inside the trust region, clipped on either side, beyond the dual clip, or clamped
      d: fc.array(fc.constantFrom(-25, -1.2, -0.5, -0.05, 0.03, 0.1, 0.6, 1.5, 24), {
        minLength: n,
        maxLength: n,
      }),
      jitter: fc.array(fc.double({ min: -0.01, max: 0.01, noNaN: true }), { minLength: n, maxLength: n }),
      a: fc.array(fc.constantFrom(-2, -0.5, 0.7, 1.5), { minLength: n, maxLength: n }),
      w: fc.array(fc.double({ min: 0.1, max: 2, noNaN: true }), { minLength: n, maxLength: n }),
      m: fc.array(fc.integer({ min: 0, max: 1 }), { minLength: n, maxLength: n }),
    });
  });

describe('policyLossVanillaGrad', () => {
  it('matches central finite differences in every aggregation mode (with and without IS weights)', () => {
    fc.assert(
      fc.property(gradBatch, ({ s, old, d, jitter, a, w, m }) => {
        const mask = Uint8Array.from(m);
        if (!mask.some((v) => v === 1)) return;
        const shape = { rows: s.rows, cols: s.cols };
        const oldA = Float64Array.from(old);
        const lp = Float64Array.from(old, (v, i) => v + (d[i] as number) + (jitter[i] as number));
        const adv = Float64Array.from(a);
        const options: VanillaLossOptions = {
          lossAggMode: s.mode,
          clipRatioLow: s.low,
          clipRatioHigh: s.high,
          agg: { dpSize: 2 },
          rolloutIsWeights: s.weighted ? Float64Array.from(w) : null,
        };
        const { grad, loss } = policyLossVanillaGrad(
          { oldLogProb: oldA, logProb: lp, advantages: adv, responseMask: mask },
          shape,
          options,
        );
        expect(loss).toBe(
          policyLossVanilla(
            { oldLogProb: oldA, logProb: lp, advantages: adv, responseMask: mask },
            shape,
            options,
          ).loss,
        );
        const h = 1e-6;
        for (let i = 0; i < lp.length; i++) {
          const v = lp[i] as number;
          lp[i] = v + h;
          const up = policyLossVanilla(
            { oldLogProb: oldA, logProb: lp, advantages: adv, responseMask: mask },
            shape,
            options,
          ).loss;
          lp[i] = v - h;
          const down = policyLossVanilla(
            { oldLogProb: oldA, logProb: lp, advantages: adv, responseMask: mask },
            shape,
            options,
          ).loss;
          lp[i] = v;
          const fd = (up - down) / (2 * h);
          expect(Math.abs((grad[i] as number) - fd)).toBeLessThanOrEqual(1e-5 * (1 + Math.abs(fd)));
        }
      }),
      { numRuns: 150 },
    );
  });
  it('is zero where clipping or the clamp cuts the gradient and -A·r/N where the surrogate is live', () => {
    const shape = { rows: 1, cols: 4 };
    const old = Float64Array.of(0, 0, 0, 0);
    const lp = Float64Array.of(Math.log(1.1), Math.log(1.5), Math.log(5), 30);
    const adv = Float64Array.of(2, 2, -1, -1);
    const { grad } = policyLossVanillaGrad(
      { oldLogProb: old, logProb: lp, advantages: adv, responseMask: Uint8Array.of(1, 1, 1, 1) },
      shape,
    );
    expect(grad[0]).toBeCloseTo((-2 * 1.1) / 4, 12);
    expect(Array.from(grad.subarray(1))).toEqual([0, 0, 0]);
    // without the dual clip, the log-ratio clamp alone decides: 19 is live, 25 is clamped (grad 0)
    const big = policyLossVanillaGrad(
      {
        oldLogProb: Float64Array.of(0, 0),
        logProb: Float64Array.of(19, 25),
        advantages: Float64Array.of(-1, -1),
        responseMask: Uint8Array.of(1, 1),
      },
      { rows: 1, cols: 2 },
      { clipRatioC: 1e12 },
    );
    expect((big.grad[0] as number) / (Math.exp(19) / 2)).toBeCloseTo(1, 12);
    expect(big.grad[1]).toBe(0);
  });
});

describe('policyLossVanilla equals a literal transcription of verl (property)', () => {
  it('per-token loss, pg_loss and all three metrics, with random clip settings and log-ratios', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(0.1, 0.2, 0.28, 1.5),
        fc.constantFrom(0.2, 0.28, 0.5),
        fc.constantFrom(1.1, 3, 10),
        fc.integer({ min: 0, max: 2 ** 30 }),
        (n, low, high, c, seed) => {
          let x = seed;
          const next = () => {
            x = (Math.imul(x, 1103515245) + 12345) >>> 0;
            return x / 4294967296;
          };
          const old = Float64Array.from({ length: n }, () => -4 * next());
          const lp = Float64Array.from(old, (v) => v + (next() - 0.5) * (next() < 0.2 ? 60 : 2));
          const adv = Float64Array.from({ length: n }, () => (next() < 0.2 ? 0 : (next() - 0.5) * 4));
          const mask = Uint8Array.from({ length: n }, () => (next() < 0.8 ? 1 : 0));
          mask[0] = 1;
          const r = policyLossVanilla(
            { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask },
            { rows: 1, cols: n },
            {
              clipRatioLow: low,
              clipRatioHigh: high,
              clipRatioC: c,
            },
          );
          let sum = 0;
          let cnt = 0;
          let kl = 0;
          let clip = 0;
          let lower = 0;
          for (let i = 0; i < n; i++) {
            const a = adv[i] as number;
            const l = Math.min(Math.max((lp[i] as number) - (old[i] as number), -20), 20);
            const ratio = Math.exp(l);
            const p1 = -a * ratio;
            const p2 = -a * Math.min(Math.max(ratio, 1 - low), 1 + high);
            const q = Math.max(p1, p2);
            const p3 = -a * c;
            const loss = a < 0 ? Math.min(p3, q) : q;
            expect(r.perTokenLoss[i]).toBeCloseTo(mask[i] === 0 ? 0 : Math.fround(loss), 5);
            if (mask[i] === 0) continue;
            sum += loss;
            cnt++;
            kl -= l;
            if (p2 > p1) clip++;
            if (q > p3 && a < 0) lower++;
          }
          expect(r.loss).toBeCloseTo(sum / cnt, 9);
          expect(r.metrics.ppo_kl).toBeCloseTo(kl / (cnt + 1e-8), 9);
          expect(r.metrics.pg_clipfrac).toBeCloseTo(clip / (cnt + 1e-8), 9);
          expect(r.metrics.pg_clipfrac_lower).toBeCloseTo(lower / (cnt + 1e-8), 9);
        },
      ),
      { numRuns: 300 },
    );
  });
});
