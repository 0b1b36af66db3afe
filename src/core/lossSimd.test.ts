import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { aggLossOn, LOSS_AGG_MODES, type LossAggMode } from './aggLoss.js';
import { isLabError } from './errors.js';
import {
  LossSimdKernel,
  lossSimdFallbackReason,
  lossSimdKernel,
  lossSimdModule,
  wasmSimdSupported,
} from './lossSimd.js';
import { policyLossVanillaOn, type VanillaEngine, type VanillaLossOptions } from './vanillaPolicyLoss.js';

/** Deterministic stream in [0, 1) (a test-local LCG: the cases are reproducible from the fast-check seed). */
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 4294967296;
  };
}

/** Log-ratios that sit on or next to the decision boundaries, the clamp and the exp table's range. */
const SPECIAL_LOG_RATIOS = [
  0,
  -0,
  1e-9,
  -1e-9,
  Math.log(0.8),
  Math.log(1.2),
  Math.log(1.28),
  Math.log(3),
  Math.log(0.9),
  19.999,
  20,
  -20,
  25,
  -25,
  31.9,
  -33,
];
const SPECIAL_ADVANTAGES = [0, -0, 1, -1, 0.5, -0.5, 1e-30, -1e-30, 1e30, -1e30, 3.4e38];

interface Case {
  rows: number;
  cols: number;
  seed: number;
  mode: LossAggMode;
  weights: boolean;
  uint8: boolean;
  /** 0: clean; 1: a non-finite input somewhere; 2: a mask entry other than 0/1. */
  corrupt: number;
  options: VanillaLossOptions;
}

function batch(c: Case) {
  const next = lcg(c.seed);
  const n = c.rows * c.cols;
  const old = new Float32Array(n);
  const lp = new Float32Array(n);
  const adv = new Float32Array(n);
  const maskF = new Float32Array(n);
  const w = new Float32Array(n);
  for (let b = 0; b < c.rows; b++) {
    const len = next() < 0.15 ? 0 : Math.floor(next() * (c.cols + 1));
    const hole = next() < 0.3 ? Math.floor(next() * c.cols) : -1;
    const a =
      next() < 0.3
        ? (SPECIAL_ADVANTAGES[Math.floor(next() * SPECIAL_ADVANTAGES.length)] as number)
        : next() * 4 - 2;
    for (let t = 0; t < c.cols; t++) {
      const i = b * c.cols + t;
      const o = -5 * next();
      const d =
        next() < 0.25
          ? (SPECIAL_LOG_RATIOS[Math.floor(next() * SPECIAL_LOG_RATIOS.length)] as number)
          : (next() - 0.5) * (next() < 0.2 ? 3 : 0.4);
      old[i] = o;
      lp[i] = o + d;
      adv[i] = next() < 0.1 ? next() - 0.5 : a;
      w[i] = next() * 2;
      if (t < len && !(hole >= 0 && t >= hole && t < hole + 3)) maskF[i] = 1;
    }
  }
  if (c.corrupt === 1) {
    const arrays = [old, lp, adv, ...(c.weights ? [w] : [])];
    const target = arrays[Math.floor(next() * arrays.length)] as Float32Array;
    target[Math.floor(next() * n)] = [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY][
      Math.floor(next() * 3)
    ] as number;
  }
  if (c.corrupt === 2)
    maskF[Math.floor(next() * n)] = [0.5, 2, -1, Number.NaN][Math.floor(next() * 4)] as number;
  const mask = c.uint8 && c.corrupt !== 2 ? Uint8Array.from(maskF) : maskF;
  return { old, lp, adv, mask, w: c.weights ? w : null };
}

/** The observable outcome of one call: the exact bits of every result, or the error. */
function vanillaOutcome(engine: VanillaEngine, c: Case): unknown {
  const { old, lp, adv, mask, w } = batch(c);
  try {
    const r = policyLossVanillaOn(
      engine,
      { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask },
      { rows: c.rows, cols: c.cols },
      { ...c.options, lossAggMode: c.mode, rolloutIsWeights: w },
    );
    return {
      loss: Object.is(r.loss, -0) ? '-0' : r.loss,
      metrics: r.metrics,
      perTokenLoss: Array.from(new Uint32Array(r.perTokenLoss.buffer)),
    };
  } catch (e) {
    if (!isLabError(e)) throw e;
    return { error: e.code, message: e.message };
  }
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  rows: fc.integer({ min: 1, max: 9 }),
  cols: fc.integer({ min: 1, max: 37 }),
  seed: fc.integer(),
  mode: fc.constantFrom(...LOSS_AGG_MODES),
  weights: fc.boolean(),
  uint8: fc.boolean(),
  corrupt: fc.constantFrom(0, 0, 0, 1, 2),
  options: fc.record({
    clipRatio: fc.constantFrom(0, 0.2, 0.28, 1, 1.5),
    clipRatioHigh: fc.constantFrom(null, 0.28, 5),
    clipRatioC: fc.constantFrom(1.0001, 3, 1e6),
    logRatioClamp: fc.constantFrom(20, 1, 0.01, 32),
  }),
});

describe('lossSimd: the WebAssembly SIMD kernels', () => {
  it('assemble from source and instantiate on this Node (so the SIMD path is the one tested below)', () => {
    const bytes = lossSimdModule();
    expect(Array.from(bytes.subarray(0, 8))).toEqual([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00]);
    expect(lossSimdModule()).toEqual(bytes); // deterministic
    expect(lossSimdKernel()).not.toBeNull();
  });

  it('vanilla loss: SIMD and JavaScript passes give the same bits, errors included (property)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        expect(vanillaOutcome('auto', c)).toEqual(vanillaOutcome('js', c));
      }),
      { numRuns: 400 },
    );
  });

  it('vanilla loss: bad input never becomes NaN on the SIMD path (NaN/Inf under mask 1, bad mask)', () => {
    const base = { rows: 3, cols: 5, seed: 11, weights: true, uint8: false, options: {} } as const;
    for (const mode of LOSS_AGG_MODES) {
      for (const corrupt of [1, 2]) {
        for (let seed = 0; seed < 40; seed++) {
          const out = vanillaOutcome('auto', { ...base, seed, mode, corrupt }) as {
            error?: string;
            loss?: number | string;
          };
          if (out.error === undefined) expect(Number.isFinite(out.loss as number)).toBe(true);
          else expect(['NON_FINITE', 'BAD_MASK', 'EMPTY_MASK']).toContain(out.error);
        }
      }
    }
    // a NaN log-prob under mask 1 in the middle of a long row: named, not NaN
    const n = 40;
    const lp = new Float32Array(n).fill(-1);
    lp[17] = Number.NaN;
    expect(() =>
      policyLossVanillaOn(
        'auto',
        {
          oldLogProb: new Float32Array(n).fill(-1),
          logProb: lp,
          advantages: new Float32Array(n).fill(1),
          responseMask: new Float32Array(n).fill(1),
        },
        { rows: 2, cols: 20 },
      ),
    ).toThrow(/log_prob.*row 0, token 17/);
  });

  it('aggLoss: SIMD and JavaScript row sums give the same bits (property)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { lp, mask } = batch(c);
        // wide magnitudes, so that float64 sums round and a changed summation order shows
        const next = lcg(c.seed ^ 0x5bd1e995);
        const lossMat = Float32Array.from(lp, (x) => (next() < 0.9 ? x * 10 ** (next() * 40 - 20) : x));
        const run = (engine: 'auto' | 'js') => {
          try {
            return aggLossOn(engine, { lossMat, lossMask: mask }, { rows: c.rows, cols: c.cols }, c.mode);
          } catch (e) {
            if (!isLabError(e)) throw e;
            return `${e.code}: ${e.message}`;
          }
        };
        expect(run('auto')).toEqual(run('js'));
      }),
      { numRuns: 400 },
    );
  });

  it('clean inputs stay on the fast path: the chunk check is exactly 0, and non-zero for bad input', () => {
    const kernel = lossSimdKernel();
    if (kernel === null) throw new Error('no WebAssembly SIMD');
    const c: Case = {
      rows: 6,
      cols: 33,
      seed: 3,
      mode: 'token-mean',
      weights: true,
      uint8: false,
      corrupt: 0,
      options: {},
    };
    const bounds = Float64Array.of(0.8, 1.2, 3, 20, Math.log(0.8), Math.log(1.2), Math.log(3));
    const out = new Float32Array(c.rows * c.cols);
    for (const padCheck of [false, true]) {
      for (const weights of [false, true]) {
        const { old, lp, adv, mask, w } = batch({ ...c, weights });
        const clean = kernel.run(old, lp, adv, mask, w, 0, c.rows, c.cols, bounds, padCheck, out);
        expect(clean.check).toBe(0);
        const badAt = mask.indexOf(1);
        lp[badAt] = Number.POSITIVE_INFINITY;
        expect(kernel.run(old, lp, adv, mask, w, 0, c.rows, c.cols, bounds, padCheck, out).check).not.toBe(0);
        lp[badAt] = -1;
        mask[badAt] = 0.5;
        expect(kernel.run(old, lp, adv, mask, w, 0, c.rows, c.cols, bounds, padCheck, out).check).not.toBe(0);
      }
      const { lp, mask } = batch(c);
      expect(kernel.runAgg(lp, mask, 0, c.rows, c.cols, padCheck).bad).toBe(0);
      mask[0] = 2;
      expect(kernel.runAgg(lp, mask, 0, c.rows, c.cols, padCheck).bad).not.toBe(0);
    }
  });

  it('rows longer than the kernel buffers grow its memory', () => {
    const cols = 40000;
    const n = 2 * cols;
    const next = lcg(5);
    const old = Float32Array.from({ length: n }, () => -next());
    const lp = Float32Array.from(old, (o) => o + (next() - 0.5) * 0.5);
    const adv = Float32Array.from({ length: n }, (_, i) => (i < cols ? 1 : -1));
    const mask = Float32Array.from({ length: n }, (_, i) => (i % cols < cols - 7 ? 1 : 0));
    const inputs = { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask };
    const a = policyLossVanillaOn('auto', inputs, { rows: 2, cols }, { lossAggMode: 'seq-mean-token-mean' });
    const b = policyLossVanillaOn('js', inputs, { rows: 2, cols }, { lossAggMode: 'seq-mean-token-mean' });
    expect(a.loss).toBe(b.loss);
    expect(a.perTokenLoss).toEqual(b.perTokenLoss);
    expect(aggLossOn('auto', { lossMat: lp, lossMask: mask }, { rows: 2, cols }, 'token-mean')).toBe(
      aggLossOn('js', { lossMat: lp, lossMask: mask }, { rows: 2, cols }, 'token-mean'),
    );
  });
});

describe('lossSimd: no silent fallback to JavaScript', () => {
  // lossSimdKernel() catches any error while assembling or instantiating the module and falls back to
  // the JavaScript pass (right on an engine without SIMD). These tests make that fallback loud where
  // SIMD exists: a module this code assembles wrongly fails here instead of only running slower.
  it('Node 20 supports WebAssembly SIMD (the probe is a hand-written module, not the assembler)', () => {
    expect(wasmSimdSupported()).toBe(true);
  });

  it('where SIMD is supported, the kernel is built and there is no fallback reason', () => {
    if (!wasmSimdSupported()) return; // no SIMD: the fallback is the intended path
    expect(lossSimdFallbackReason()).toBeNull();
    expect(lossSimdKernel()).toBeInstanceOf(LossSimdKernel);
  });

  it('where SIMD is supported, the default (auto) loss and aggregation run through the kernel', () => {
    if (!wasmSimdSupported()) return;
    const run = vi.spyOn(LossSimdKernel.prototype, 'run');
    const runAgg = vi.spyOn(LossSimdKernel.prototype, 'runAgg');
    try {
      const { old, lp, adv, mask } = batch({
        rows: 4,
        cols: 9,
        seed: 11,
        mode: 'token-mean',
        weights: false,
        uint8: false,
        corrupt: 0,
        options: {},
      });
      const shape = { rows: 4, cols: 9 };
      const inputs = { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask };
      policyLossVanillaOn('auto', inputs, shape, {});
      expect(run).toHaveBeenCalled();
      aggLossOn('auto', { lossMat: lp, lossMask: mask }, shape, 'seq-mean-token-mean');
      expect(runAgg).toHaveBeenCalled();
      // the JavaScript engine, asked for, does not touch it
      run.mockClear();
      policyLossVanillaOn('js', inputs, shape, {});
      expect(run).not.toHaveBeenCalled();
    } finally {
      run.mockRestore();
      runAgg.mockRestore();
    }
  });
});
