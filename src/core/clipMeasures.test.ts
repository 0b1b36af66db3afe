import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import {
  categoricalKl,
  clippedMovedFurther,
  l2Distance,
  ratioHistogram,
  ratioStats,
  trueKlAtPositions,
} from './clipMeasures.js';

/** log-softmax of each row of `logits` `[R, V]`, computed directly (the reference implementation). */
function logSoftmax(logits: number[][]): Float64Array {
  const out: number[] = [];
  for (const row of logits) {
    const z = Math.log(row.reduce((s, x) => s + Math.exp(x), 0));
    for (const x of row) out.push(x - z);
  }
  return Float64Array.from(out);
}

// A tiny policy: 2 contexts x 3 tokens, before and after an update.
const oldLogits = [
  [0, 0, 0],
  [1, 0, -1],
];
const newLogits = [
  [0.5, 0, -0.5],
  [1, 0.2, -1.4],
];
const oldLog = logSoftmax(oldLogits);
const newLog = logSoftmax(newLogits);

/** KL(p || q) written out from the probabilities themselves. */
function directKl(pLogits: number[], qLogits: number[]): number {
  const p = pLogits.map(Math.exp);
  const q = qLogits.map(Math.exp);
  const sp = p.reduce((s, x) => s + x, 0);
  const sq = q.reduce((s, x) => s + x, 0);
  return p.reduce((s, pi, v) => s + (pi / sp) * Math.log(pi / sp / ((q[v] as number) / sq)), 0);
}

describe('categoricalKl / trueKlAtPositions', () => {
  it('equals the KL computed directly from the probabilities on a tiny policy', () => {
    const k0 = directKl(oldLogits[0] as number[], newLogits[0] as number[]);
    const k1 = directKl(oldLogits[1] as number[], newLogits[1] as number[]);
    expect(categoricalKl(oldLog, newLog, 0, 3)).toBeCloseTo(k0, 14);
    expect(categoricalKl(oldLog, newLog, 3, 3)).toBeCloseTo(k1, 14);
    // batch [2,3]: row 0 visits contexts 0,1,1 (last masked), row 1 visits 1,0 then padding
    const rowOf = Int32Array.of(0, 1, 1, 1, 0, 0);
    const mask = Float32Array.of(1, 1, 0, 1, 1, 0);
    const kl = trueKlAtPositions(oldLog, newLog, 3, rowOf, mask, { rows: 2, cols: 3 });
    expect(kl.positions).toBe(4);
    expect(kl.mean).toBeCloseTo((2 * k0 + 2 * k1) / 4, 14);
    expect(kl.max).toBeCloseTo(Math.max(k0, k1), 14);
  });

  it('is 0 for identical policies and > 0 otherwise (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -4, max: 4, noNaN: true }), { minLength: 4, maxLength: 4 }),
        fc.array(fc.double({ min: -4, max: 4, noNaN: true }), { minLength: 4, maxLength: 4 }),
        (a, b) => {
          const la = logSoftmax([a]);
          const lb = logSoftmax([b]);
          expect(categoricalKl(la, la, 0, 4)).toBe(0);
          const kl = categoricalKl(la, lb, 0, 4);
          expect(kl).toBeGreaterThanOrEqual(0);
          expect(kl).toBeCloseTo(directKl(a, b), 9);
        },
      ),
    );
  });

  it('names bad rows, shapes and empty masks', () => {
    const shape = { rows: 1, cols: 2 };
    expectLabError(
      () => trueKlAtPositions(oldLog, newLog, 3, Int32Array.of(0, 2), Float32Array.of(1, 1), shape),
      'BAD_ARGUMENT',
      'row_of',
      'row 0, token 1',
    );
    expectLabError(
      () =>
        trueKlAtPositions(
          oldLog,
          newLog.subarray(0, 3),
          3,
          Int32Array.of(0, 1),
          Float32Array.of(1, 1),
          shape,
        ),
      'SHAPE_MISMATCH',
      'new_log_probs',
    );
    expectLabError(
      () => trueKlAtPositions(oldLog, newLog, 3, Int32Array.of(0, 1), Float32Array.of(0, 0), shape),
      'EMPTY_MASK',
    );
    expectLabError(
      () => trueKlAtPositions(oldLog, newLog, 3, Int32Array.of(0, 1), Float32Array.of(1, 2), shape),
      'BAD_MASK',
    );
    const dead = Float64Array.from(newLog);
    dead[0] = Number.NEGATIVE_INFINITY;
    expectLabError(
      () => trueKlAtPositions(oldLog, dead, 3, Int32Array.of(0, 1), Float32Array.of(1, 1), shape),
      'NON_FINITE',
      'row 0',
    );
  });
});

describe('ratioStats / ratioHistogram', () => {
  // ratios 1.5, 0.7, 1.1, (masked 9), 1.0
  const old = Float64Array.of(-1, -1, -1, -1, -1);
  const lp = Float64Array.of(
    -1 + Math.log(1.5),
    -1 + Math.log(0.7),
    -1 + Math.log(1.1),
    -1 + Math.log(9),
    -1,
  );
  const mask = Uint8Array.of(1, 1, 1, 0, 1);
  const shape = { rows: 1, cols: 5 };

  it('max, min, p99 and the fraction outside the band by hand', () => {
    const s = ratioStats(old, lp, mask, shape, { low: 0.2, high: 0.2 });
    expect(s.tokens).toBe(4);
    expect(s.max).toBeCloseTo(1.5, 12);
    expect(s.min).toBeCloseTo(0.7, 12);
    // sorted 0.7, 1.0, 1.1, 1.5: pos 2.97 -> 1.1 + 0.97 * 0.4
    expect(s.p99).toBeCloseTo(1.1 + 0.97 * 0.4, 12);
    expect(s.fracOutside).toBe(0.5); // 1.5 and 0.7
    // clip-higher: 1.5 still above 1.28; 0.7 below 0.8
    expect(ratioStats(old, lp, mask, shape, { low: 0.2, high: 0.28 }).fracOutside).toBe(0.5);
    expect(ratioStats(old, lp, mask, shape, { low: 0.05, high: 0.05 }).fracOutside).toBe(0.75);
  });

  it('histogram fractions sum to 1 with open outer edges and fall in the right bins', () => {
    const h = ratioHistogram(old, lp, mask, shape, [0, 0.8, 1.2, Number.POSITIVE_INFINITY]);
    expect(h).toEqual([0.25, 0.5, 0.25]);
    expectLabError(() => ratioHistogram(old, lp, mask, shape, [1, 1]), 'BAD_ARGUMENT', 'edges');
  });

  it('errors: empty mask, shapes, negative band', () => {
    expectLabError(
      () => ratioStats(old, lp, new Uint8Array(5), shape, { low: 0.2, high: 0.2 }),
      'EMPTY_MASK',
    );
    expectLabError(
      () => ratioStats(old, lp.subarray(0, 4), mask, shape, { low: 0.2, high: 0.2 }),
      'SHAPE_MISMATCH',
      'log_prob',
    );
    expectLabError(() => ratioStats(old, lp, mask, shape, { low: -1, high: 0.2 }), 'BAD_ARGUMENT', 'band');
  });
});

describe('clippedMovedFurther', () => {
  const clip = { low: 0.2, high: 0.2, c: 3 };
  const l = Math.log;
  // token: (A, ratio before, ratio after)
  const cases: [number, number, number, 'clipped-further' | 'clipped-back' | 'live'][] = [
    [1, 1.5, 1.7, 'clipped-further'], // A>0 above 1.2, went up
    [1, 1.5, 1.3, 'clipped-back'], // A>0 above 1.2, came back
    [1, 1.1, 1.6, 'live'], // inside the band before the step
    [-1, 0.5, 0.4, 'clipped-further'], // A<0 below 0.8, went down
    [-1, 0.5, 0.6, 'clipped-back'],
    [-1, 4, 5, 'clipped-further'], // dual clip: A<0 above c = 3, went up
    [-1, 2, 5, 'live'], // A<0 at 2: live (gradient pushes down)
    [0, 9, 10, 'live'], // zero advantage: never clipped
  ];
  const n = cases.length;
  const old = new Float64Array(n).fill(-2);
  const before = Float64Array.from(cases.map(([, r]) => -2 + l(r)));
  const after = Float64Array.from(cases.map(([, , r]) => -2 + l(r)));
  const adv = Float32Array.from(cases.map(([a]) => a));
  const shape = { rows: 1, cols: n };

  it('counts clipped tokens by verl region and the ones that moved further out', () => {
    const r = clippedMovedFurther(old, before, after, adv, new Float32Array(n).fill(1), shape, clip);
    expect(r.clipped).toBe(cases.filter((c) => c[3] !== 'live').length);
    expect(r.movedFurther).toBe(cases.filter((c) => c[3] === 'clipped-further').length);
    // masked tokens are not counted
    const mask = new Float32Array(n).fill(1);
    mask[0] = 0;
    expect(clippedMovedFurther(old, before, after, adv, mask, shape, clip)).toEqual({
      clipped: r.clipped - 1,
      movedFurther: r.movedFurther - 1,
    });
  });

  it('counts the same tokens as pg_clipfrac + pg_clipfrac_lower of the core kernel', async () => {
    const { policyLossVanilla } = await import('./vanillaPolicyLoss.js');
    const mask = new Float32Array(n).fill(1);
    const m = policyLossVanilla(
      { oldLogProb: old, logProb: before, advantages: adv, responseMask: mask },
      shape,
      { clipRatio: 0.2, clipRatioC: 3 },
    ).metrics;
    const r = clippedMovedFurther(old, before, after, adv, mask, shape, clip);
    expect(r.clipped / n).toBeCloseTo(m.pg_clipfrac + m.pg_clipfrac_lower, 6);
  });

  it('rejects a dual-clip bound <= 1', () => {
    const mask = new Float32Array(n).fill(1);
    expectLabError(
      () => clippedMovedFurther(old, before, after, adv, mask, shape, { ...clip, c: 1 }),
      'BAD_ARGUMENT',
      'clip',
    );
  });
});

describe('l2Distance', () => {
  it('is the Euclidean norm of the difference', () => {
    expect(l2Distance(Float64Array.of(1, 2, 3), Float64Array.of(1, 5, 7))).toBe(5);
    expectLabError(() => l2Distance(Float64Array.of(1), Float64Array.of(1, 2)), 'SHAPE_MISMATCH');
  });
});
