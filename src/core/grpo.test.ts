import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import {
  GRPO_DEFAULTS,
  grpoAdvantage,
  grpoScalarAdvantages,
  grpoVectorizedAdvantage,
  resolveGroupNormOptions,
} from './grpo.js';

const F32_ONE_PLUS_EPS = Math.fround(1 + 1e-6); // float32(1 + 1e-6), verl's singleton std + eps

describe('grpoScalarAdvantages (verl loop semantics)', () => {
  it('defaults are verl: unbiased std, eps 1e-6, singleton verl', () => {
    expect(GRPO_DEFAULTS).toEqual({ std: 'unbiased', epsilon: 1e-6, singleton: 'verl' });
  });

  it('mixed group [1,0,0,0]: mean 1/4, torch.std = 1/2 by hand', () => {
    // Σ(s-mean)^2 = 9/16 + 3/16 = 12/16; /(n-1)=3 -> 1/4; sqrt -> 1/2
    const a = grpoScalarAdvantages([1, 0, 0, 0], ['g', 'g', 'g', 'g']);
    expect(a[0]).toBeCloseTo(0.75 / (0.5 + 1e-6), 12);
    expect(a[1]).toBeCloseTo(-0.25 / (0.5 + 1e-6), 12);
  });

  it('all-wrong and all-right groups are exactly 0; singleton is s/float32(1+1e-6), not 0', () => {
    const a = grpoScalarAdvantages([0, 0, 0, 1, 1, 1, 1], ['w', 'w', 'w', 'r', 'r', 'r', 's']);
    expect(Array.from(a.subarray(0, 6))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(a[6]).toBe(1 / F32_ONE_PLUS_EPS);
  });

  it('population std divides by n: [1,0] -> ±1/(0.5+eps)', () => {
    const a = grpoScalarAdvantages([1, 0], [7, 7], { std: 'population' });
    expect(a[0]).toBeCloseTo(0.5 / (0.5 + 1e-6), 12);
    const u = grpoScalarAdvantages([1, 0], [7, 7]);
    // unbiased: std = sqrt(0.5/1) = 0.7071...
    expect(u[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 12);
  });

  it("std 'none' is s - mean (Dr.GRPO), singleton keeps s", () => {
    const a = grpoScalarAdvantages([3, 1, 5], ['a', 'a', 'b'], { std: 'none' });
    expect(Array.from(a)).toEqual([1, -1, 5]);
  });

  it("singleton rules: 'zero' gives 0, 'error' names the group", () => {
    expect(Array.from(grpoScalarAdvantages([2, 4, 9], ['a', 'a', 'b'], { singleton: 'zero' }))).toEqual([
      -1 / (Math.SQRT2 + 1e-6),
      1 / (Math.SQRT2 + 1e-6),
      0,
    ]);
    expectLabError(
      () => grpoScalarAdvantages([2, 4, 9], ['a', 'a', 'b'], { singleton: 'error' }),
      'SINGLETON_GROUP',
      'index',
    );
  });

  it('labels group by exact equality: "1" and 1 and "01" are three groups', () => {
    const a = grpoScalarAdvantages([1, 2, 3], ['1', 1, '01']);
    expect(Array.from(a)).toEqual([1, 2, 3].map((s) => s / F32_ONE_PLUS_EPS));
  });

  it('epsilon 0 on an all-equal group gives 0, not 0/0', () => {
    expect(Array.from(grpoScalarAdvantages([0.1, 0.1, 0.1], [1, 1, 1], { epsilon: 0 }))).toEqual([0, 0, 0]);
  });

  it('bad inputs are LabErrors naming the field', () => {
    expectLabError(() => grpoScalarAdvantages([1, Number.NaN], [1, 1]), 'NON_FINITE', 'scores');
    expectLabError(() => grpoScalarAdvantages([1, 2], [1]), 'SHAPE_MISMATCH', 'index');
    expectLabError(() => grpoScalarAdvantages([1, 2], [1, Number.POSITIVE_INFINITY]), 'BAD_VALUE', 'index');
    expectLabError(() => resolveGroupNormOptions({ epsilon: -1 }), 'BAD_ARGUMENT', 'epsilon');
    expectLabError(() => resolveGroupNormOptions({ std: 'sample' as never }), 'UNKNOWN_MODE', 'std');
    expectLabError(
      () => resolveGroupNormOptions({ singleton: 'drop' as never }),
      'UNKNOWN_MODE',
      'singleton',
    );
  });
});

/** Arbitrary batch of groups: sizes 1..6, scores from a small grid (ties likely), shuffled rows. */
const groupedScores = fc
  .array(
    fc.record({
      size: fc.integer({ min: 1, max: 6 }),
      values: fc.array(fc.integer({ min: -4, max: 4 }), { minLength: 6, maxLength: 6 }),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .map((groups) => {
    const scores: number[] = [];
    const labels: string[] = [];
    groups.forEach((g, gi) => {
      for (let k = 0; k < g.size; k++) {
        scores.push((g.values[k] as number) / 4);
        labels.push(`g${gi}`);
      }
    });
    return { scores, labels, groups };
  });

describe('grpoScalarAdvantages properties', () => {
  it('centred advantages sum to 0 within every group of size >= 2 (every std kind)', () => {
    fc.assert(
      fc.property(
        groupedScores,
        fc.constantFrom('unbiased', 'population', 'none'),
        ({ scores, labels }, std) => {
          const a = grpoScalarAdvantages(scores, labels, { std: std as 'unbiased' });
          const sums = new Map<string, { s: number; n: number; scale: number }>();
          labels.forEach((l, i) => {
            const e = sums.get(l) ?? { s: 0, n: 0, scale: 0 };
            e.s += a[i] as number;
            e.n += 1;
            e.scale = Math.max(e.scale, Math.abs(a[i] as number));
            sums.set(l, e);
          });
          for (const e of sums.values())
            if (e.n >= 2) expect(Math.abs(e.s)).toBeLessThanOrEqual(1e-9 * (1 + e.scale));
        },
      ),
    );
  });

  it('groups of >= 2 identical rewards get exactly 0', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e6, max: 1e6, noNaN: true }),
        fc.integer({ min: 2, max: 9 }),
        fc.constantFrom('unbiased', 'population', 'none'),
        (v, n, std) => {
          const a = grpoScalarAdvantages(new Array(n).fill(v), new Array(n).fill('p'), {
            std: std as 'none',
          });
          for (const x of a) expect(Object.is(x, 0)).toBe(true);
        },
      ),
    );
  });

  it('results do not depend on the order of groups or rows in the batch', () => {
    fc.assert(
      fc.property(groupedScores, fc.integer({ min: 0, max: 1000 }), ({ scores, labels }, seed) => {
        const n = scores.length;
        const perm = Array.from({ length: n }, (_, i) => i);
        let x = seed + 1;
        for (let i = n - 1; i > 0; i--) {
          x = (x * 1103515245 + 12345) % 2147483648;
          const j = x % (i + 1);
          [perm[i], perm[j]] = [perm[j] as number, perm[i] as number];
        }
        const a = grpoScalarAdvantages(scores, labels);
        const b = grpoScalarAdvantages(
          perm.map((p) => scores[p] as number),
          perm.map((p) => labels[p] as string),
        );
        perm.forEach((p, k) => {
          expect(b[k]).toBeCloseTo(a[p] as number, 12);
        });
      }),
    );
  });
});

describe('grpoAdvantage ([B,T] compute_grpo_outcome_advantage)', () => {
  const shape = { rows: 3, cols: 4 };
  // Rewards on the last valid token; row 1 has a reward under a 0 mask entry, which verl still counts.
  const rewards = Float32Array.from([0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
  const mask = Float32Array.from([1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0]);

  it('sums rewards over ALL positions, broadcasts x mask, returns the same object twice', () => {
    const { advantages, returns } = grpoAdvantage(
      { tokenLevelRewards: rewards, responseMask: mask, index: ['p', 'p', 'p'] },
      shape,
    );
    expect(returns).toBe(advantages);
    // scores [1,1,0]: verl's float32 mean fl32(2/3); torch.std sums squared deviations from it in
    // float64, then fl32; a = fl32(fl32(s - mean) / fl32(std + fl32(1e-6))).
    const f = Math.fround;
    const mean = f(2 / 3);
    const std = f(Math.sqrt((2 * (1 - mean) ** 2 + mean ** 2) / 2));
    const den = f(std + f(1e-6));
    const hi = f(f(1 - mean) / den);
    const lo = f(f(0 - mean) / den);
    expect(Array.from(advantages)).toEqual([hi, hi, hi, 0, hi, hi, 0, 0, lo, 0, 0, 0]);
  });

  it("near-constant group: verl's float32 mean/std, not float64 (golden s_grpo_near_constant_float32)", () => {
    // Scores 2, 2+u, 2, 2+2u with u = 2^-21 (one float32 ulp at 2). float32 sum 8+2^-19 (a tie
    // rounded to even), mean 2+u: deviations -u, 0, -u, +u, std = u; verl gives -0.3228773 where the
    // float64 statistics (mean 2+0.75u) give -0.2455.
    const u = 2 ** -21;
    const r = Float32Array.from([2, 2 + u, 2, 2 + 2 * u]);
    const m = Float32Array.from([1, 1, 1, 1]);
    const { advantages } = grpoAdvantage(
      { tokenLevelRewards: r, responseMask: m, index: ['g', 'g', 'g', 'g'] },
      { rows: 4, cols: 1 },
    );
    expect(Array.from(advantages)).toEqual([-0.3228773, 0, -0.3228773, 0.3228773].map(Math.fround));
    const f64 = grpoScalarAdvantages(Array.from(r), ['g', 'g', 'g', 'g']);
    expect(f64[0]).toBeCloseTo(-0.245533, 5);
  });

  it('a zero mask entry gives +0 (never -0), even for a negative advantage', () => {
    const { advantages } = grpoAdvantage(
      { tokenLevelRewards: rewards, responseMask: mask, index: ['p', 'p', 'p'] },
      shape,
    );
    for (let i = 9; i < 12; i++) expect(Object.is(advantages[i], 0)).toBe(true);
  });

  it('property: zero mask -> exactly +0; identical groups -> exactly 0 everywhere', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: -3, max: 3 }),
            fc.integer({ min: 0, max: 5 }),
            fc.integer({ min: 0, max: 2 }),
          ),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        (rowsSpec) => {
          const T = 5;
          const B = rowsSpec.length;
          const r = new Float32Array(B * T);
          const m = new Uint8Array(B * T);
          rowsSpec.forEach(([score, len], b) => {
            r[b * T + T - 1] = score / 2;
            for (let t = 0; t < len; t++) m[b * T + t] = 1;
          });
          const labels = rowsSpec.map(([, , g]) => g);
          const { advantages } = grpoAdvantage(
            { tokenLevelRewards: r, responseMask: m, index: labels },
            { rows: B, cols: T },
          );
          for (let i = 0; i < B * T; i++) if (m[i] === 0) expect(Object.is(advantages[i], 0)).toBe(true);
        },
      ),
    );
  });

  it('bad inputs: shape, lengths, non-finite reward, bad mask, labels', () => {
    expectLabError(
      () =>
        grpoAdvantage(
          { tokenLevelRewards: rewards, responseMask: mask, index: ['p', 'p', 'p'] },
          { rows: 0, cols: 4 },
        ),
      'SHAPE_MISMATCH',
      'shape',
    );
    expectLabError(
      () =>
        grpoAdvantage(
          { tokenLevelRewards: rewards.subarray(1), responseMask: mask, index: ['p', 'p', 'p'] },
          shape,
        ),
      'SHAPE_MISMATCH',
      'token_level_rewards',
    );
    expectLabError(
      () =>
        grpoAdvantage(
          { tokenLevelRewards: rewards, responseMask: mask.subarray(1), index: ['p', 'p', 'p'] },
          shape,
        ),
      'SHAPE_MISMATCH',
      'response_mask',
    );
    expectLabError(
      () => grpoAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index: ['p', 'p'] }, shape),
      'SHAPE_MISMATCH',
      'index',
    );
    const nan = rewards.slice();
    nan[6] = Number.NaN;
    expectLabError(
      () => grpoAdvantage({ tokenLevelRewards: nan, responseMask: mask, index: ['p', 'p', 'p'] }, shape),
      'NON_FINITE',
      'row 1, token 2',
    );
    const bad = mask.slice();
    bad[5] = 0.5;
    expectLabError(
      () => grpoAdvantage({ tokenLevelRewards: rewards, responseMask: bad, index: ['p', 'p', 'p'] }, shape),
      'BAD_MASK',
      'row 1, token 1',
    );
  });
});

describe('[B,T] GRPO: order of groups and rows in the batch does not matter', () => {
  it('property: permuting rows permutes the advantage rows (loop exactly, vectorized within float32)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 4 }),
            fc.integer({ min: 1, max: 4 }),
            fc.integer({ min: 0, max: 3 }),
          ),
          {
            minLength: 2,
            maxLength: 10,
          },
        ),
        fc.integer({ min: 1, max: 10_000 }),
        (rowsSpec, seed) => {
          const T = 4;
          const B = rowsSpec.length;
          const build = (order: number[]) => {
            const r = new Float32Array(B * T);
            const m = new Float32Array(B * T);
            order.forEach((src, b) => {
              const [score, len] = rowsSpec[src] as [number, number, number];
              r[b * T + len - 1] = score / 4;
              m.fill(1, b * T, b * T + len);
            });
            return { r, m, labels: order.map((src) => `g${(rowsSpec[src] as number[])[2]}`) };
          };
          const perm = Array.from({ length: B }, (_, i) => i);
          let x = seed;
          for (let i = B - 1; i > 0; i--) {
            x = (x * 48271) % 2147483647;
            const j = x % (i + 1);
            [perm[i], perm[j]] = [perm[j] as number, perm[i] as number];
          }
          const id = Array.from({ length: B }, (_, i) => i);
          const a = build(id);
          const p = build(perm);
          const shape = { rows: B, cols: T };
          const loopA = grpoAdvantage(
            { tokenLevelRewards: a.r, responseMask: a.m, index: a.labels },
            shape,
          ).advantages;
          const loopP = grpoAdvantage(
            { tokenLevelRewards: p.r, responseMask: p.m, index: p.labels },
            shape,
          ).advantages;
          const vecA = grpoVectorizedAdvantage(
            { tokenLevelRewards: a.r, responseMask: a.m, index: a.labels },
            shape,
          ).advantages;
          const vecP = grpoVectorizedAdvantage(
            { tokenLevelRewards: p.r, responseMask: p.m, index: p.labels },
            shape,
          ).advantages;
          perm.forEach((src, b) => {
            for (let t = 0; t < T; t++) {
              expect(loopP[b * T + t]).toBe(loopA[src * T + t]);
              expect(vecP[b * T + t]).toBeCloseTo(vecA[src * T + t] as number, 4);
            }
          });
        },
      ),
    );
  });
});

describe('grpoVectorizedAdvantage (compute_grpo_vectorized_outcome_advantage)', () => {
  it('matches the loop version on a mixed group and floors the std of a constant group', () => {
    const shape = { rows: 4, cols: 1 };
    const mask = new Float32Array([1, 1, 1, 1]);
    const r = Float32Array.from([1, 0, 0.5, 0.5]);
    const { advantages } = grpoVectorizedAdvantage(
      { tokenLevelRewards: r, responseMask: mask, index: ['a', 'a', 'b', 'b'] },
      shape,
    );
    const std = Math.SQRT1_2;
    expect(advantages[0]).toBeCloseTo(0.5 / (std + 1e-6), 6);
    // constant group: (s - mean) = 0 exactly in float32, whatever the floored std
    expect(advantages[2]).toBe(0);
  });

  it('out: writes into the given buffer (padding and stale values overwritten) and returns it', () => {
    const shape = { rows: 3, cols: 3 };
    const batch = {
      tokenLevelRewards: Float32Array.from([0, 1, 0, 0, 0, 0, 0, 0.5, 0]),
      responseMask: Float32Array.from([1, 1, 0, 1, 0, 0, 1, 1, 1]),
      index: ['a', 'a', 'a'],
    };
    const fresh = grpoVectorizedAdvantage(batch, shape);
    const out = new Float32Array(9).fill(7);
    const reused = grpoVectorizedAdvantage(batch, shape, { out });
    expect(reused.advantages).toBe(out);
    expect(reused.returns).toBe(out);
    expect(Array.from(out)).toEqual(Array.from(fresh.advantages));
    expectLabError(
      () => grpoVectorizedAdvantage(batch, shape, { out: new Float32Array(8) }),
      'SHAPE_MISMATCH',
      'out',
    );
  });

  it('numeric-string labels merge ("1" = "01") where the loop version keeps them apart', () => {
    const shape = { rows: 2, cols: 1 };
    const mask = new Float32Array([1, 1]);
    const r = Float32Array.from([1, 0]);
    const vec = grpoVectorizedAdvantage(
      { tokenLevelRewards: r, responseMask: mask, index: ['1', '01'] },
      shape,
    ).advantages;
    const loop = grpoAdvantage(
      { tokenLevelRewards: r, responseMask: mask, index: ['1', '01'] },
      shape,
    ).advantages;
    expect(vec[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-6), 6);
    expect(loop[0]).toBeCloseTo(1 / F32_ONE_PLUS_EPS, 7);
  });

  it('refuses a negative integer label (torch index_add_ would raise)', () => {
    expectLabError(
      () =>
        grpoVectorizedAdvantage(
          { tokenLevelRewards: new Float32Array(2), responseMask: new Float32Array([1, 1]), index: [-1, 2] },
          { rows: 2, cols: 1 },
        ),
      'BAD_VALUE',
      'index',
    );
  });

  it('vectorized: unknown std mode and a bad epsilon are LabErrors naming the option', () => {
    const shape = { rows: 2, cols: 1 };
    expectLabError(
      () =>
        grpoVectorizedAdvantage(
          { tokenLevelRewards: new Float32Array(2), responseMask: new Float32Array([1, 1]), index: [1, 1] },
          shape,
          {
            std: 'population' as never,
          },
        ),
      'UNKNOWN_MODE',
      'std',
    );
    expectLabError(
      () =>
        grpoVectorizedAdvantage(
          { tokenLevelRewards: new Float32Array(2), responseMask: new Float32Array([1, 1]), index: [1, 1] },
          shape,
          {
            epsilon: Number.NaN,
          },
        ),
      'BAD_ARGUMENT',
      'epsilon',
    );
  });
});

describe('epsilon 0 with a std that is 0 in floating point (the advantage would be +-Infinity or NaN)', () => {
  it('loop GRPO: scores 1e-200 and 2e-200 differ but their squared deviations underflow to 0', () => {
    // with epsilon > 0 the zero std is harmless: a = (s - mean)/(0 + 1e-6) = -+5e-201/1e-6
    const ok = grpoScalarAdvantages([1e-200, 2e-200], ['a', 'a'], { epsilon: 1e-6 });
    expect((ok[0] as number) / (-5e-201 / 1e-6)).toBeCloseTo(1, 12);
    expect((ok[1] as number) / (5e-201 / 1e-6)).toBeCloseTo(1, 12);
    expectLabError(
      () => grpoScalarAdvantages([0, 1, 1e-200, 2e-200], ['ok', 'ok', 'u', 'u'], { epsilon: 0 }),
      'NON_FINITE',
      'epsilon: the advantage of row 2 (group "u") would be -Infinity',
    );
  });

  it('scores whose squared deviations overflow float64 are NON_FINITE, not a silent advantage of 0', () => {
    // (1e200 - 0)^2 = Infinity: the std would be Infinity and both advantages 0 instead of +-0.707
    expectLabError(
      () => grpoScalarAdvantages([1e200, -1e200], ['a', 'a']),
      'NON_FINITE',
      'scores: group "a" is too large for float64 statistics',
    );
    expect(Array.from(grpoScalarAdvantages([1e150, -1e150], ['a', 'a'], { epsilon: 0 }))).toEqual([
      Math.SQRT1_2,
      -Math.SQRT1_2,
    ]);
  });

  it('vectorized GRPO: a float32 group variance that rounds to 0 gives 0/0 or x/0', () => {
    const r = Float32Array.from([1, 1.0000001, 1, 1]);
    const m = new Float32Array(4).fill(1);
    expectLabError(
      () =>
        grpoVectorizedAdvantage(
          { tokenLevelRewards: r, responseMask: m, index: ['g', 'g', 'g', 'g'] },
          { rows: 4, cols: 1 },
          { epsilon: 0 },
        ),
      'NON_FINITE',
      'epsilon: the advantage of row 0 (group "g") would be NaN',
    );
  });
});
