import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { redistributeAdvantages } from './advantageRedistribution.js';
import { grpoScalarAdvantages } from './grpo.js';

/** A random batch of groups: per row a group label, a 0/1 pass and an integer quality (ties likely). */
const batchArb = fc
  .array(
    fc.record({
      size: fc.integer({ min: 1, max: 6 }),
      passRate: fc.constantFrom(0, 0.5, 1, 1, 1),
      seed: fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 4 })), { minLength: 6, maxLength: 6 }),
    }),
    { minLength: 1, maxLength: 6 },
  )
  .map((groups) => {
    const index: number[] = [];
    const passed: number[] = [];
    const quality: number[] = [];
    groups.forEach((g, k) => {
      for (let i = 0; i < g.size; i++) {
        const [coin, q] = g.seed[i] as [boolean, number];
        index.push(k);
        passed.push(g.passRate === 1 ? 1 : g.passRate === 0 ? 0 : coin ? 1 : 0);
        quality.push(q);
      }
    });
    return { index, passed, quality };
  });

const lambdaArb = fc.double({ min: 0, max: 5, noNaN: true });

describe('advantage redistribution', () => {
  it('by hand: an all-right group of 4 with quality [1,2,3,4], lambda 0.5, unbiased std', () => {
    const r = redistributeAdvantages([1, 1, 1, 1, 0, 1], [1, 2, 3, 4, 9, 9], ['a', 'a', 'a', 'a', 'b', 'b'], {
      lambda: 0.5,
    });
    const std = Math.sqrt(5 / 3); // deviations -1.5,-0.5,0.5,1.5: Σd² = 5, n−1 = 3
    const expected = [-1.5, -0.5, 0.5, 1.5].map((d) => (0.5 * d) / (std + 1e-6));
    for (let i = 0; i < 4; i++) expect(r.advantages[i]).toBeCloseTo(expected[i] as number, 12);
    expect(Array.from(r.advantages.slice(4))).toEqual([0, 0]); // the mixed group 'b' is not touched
    expect([r.allRightGroups, r.redistributedGroups, r.tiedGroups]).toEqual([1, 1, 0]);
  });

  it('population std divides by n', () => {
    const r = redistributeAdvantages([1, 1], [0, 2], [0, 0], { lambda: 1, std: 'population', epsilon: 0 });
    expect(Array.from(r.advantages)).toEqual([-1, 1]);
  });

  it('property: zero mean in every group (GRPO outcome advantage + redistribution)', () => {
    fc.assert(
      fc.property(batchArb, lambdaArb, ({ index, passed, quality }, lambda) => {
        const total = grpoAdvantagesPlus(passed, quality, index, lambda);
        for (const g of new Set(index)) {
          const rows = index.map((x, i) => (x === g ? i : -1)).filter((i) => i >= 0);
          const sum = rows.reduce((s, i) => s + (total[i] as number), 0);
          if (Math.abs(sum) > 1e-9 * (1 + lambda) * rows.length) return false;
        }
        return true;
      }),
    );
  });

  it('property: within a group a pass is never below a fail', () => {
    fc.assert(
      fc.property(batchArb, lambdaArb, ({ index, passed, quality }, lambda) => {
        const total = grpoAdvantagesPlus(passed, quality, index, lambda);
        for (const g of new Set(index)) {
          const rows = index.map((x, i) => (x === g ? i : -1)).filter((i) => i >= 0);
          const pass = rows.filter((i) => passed[i] === 1).map((i) => total[i] as number);
          const fail = rows.filter((i) => passed[i] === 0).map((i) => total[i] as number);
          if (pass.length && fail.length && Math.min(...pass) < Math.max(...fail)) return false;
        }
        return true;
      }),
    );
  });

  it('property: redistribution touches only all-right groups, and tied quality gives exactly 0 (counted)', () => {
    fc.assert(
      fc.property(batchArb, lambdaArb, ({ index, passed, quality }, lambda) => {
        const r = redistributeAdvantages(passed, quality, index, { lambda });
        let allRight = 0;
        let tied = 0;
        for (const g of new Set(index)) {
          const rows = index.map((x, i) => (x === g ? i : -1)).filter((i) => i >= 0);
          const isAllRight = rows.every((i) => passed[i] === 1);
          const qs = rows.map((i) => quality[i] as number);
          const isTied = Math.min(...qs) === Math.max(...qs);
          if (isAllRight) allRight++;
          if (isAllRight && isTied) tied++;
          if (!isAllRight || isTied) {
            if (!rows.every((i) => Object.is(r.advantages[i], 0))) return false;
          }
        }
        return r.allRightGroups === allRight && r.tiedGroups === tied;
      }),
    );
  });

  it('lambda 0 gives 0 everywhere (plain binary GRPO)', () => {
    const r = redistributeAdvantages([1, 1, 1], [1, 2, 3], [0, 0, 0], { lambda: 0 });
    expect(Array.from(r.advantages)).toEqual([0, 0, 0]);
    expect(r.redistributedGroups).toBe(0);
  });

  it('a fail quality may be NaN (it is never read); an all-right one may not', () => {
    expect(() =>
      redistributeAdvantages([1, 0], [Number.NaN, Number.NaN], [0, 0], { lambda: 1 }),
    ).not.toThrow();
    expectLabError(
      () => redistributeAdvantages([1, 1], [1, Number.NaN], [0, 0], { lambda: 1 }),
      'NON_FINITE',
      'quality',
      'row 1',
    );
  });

  it.each([
    [-1, 'lambda'],
    [Number.NaN, 'lambda'],
    [Number.POSITIVE_INFINITY, 'lambda'],
  ])('lambda %s is a LabError naming lambda', (lambda, field) => {
    expectLabError(() => redistributeAdvantages([1], [1], [0], { lambda }), 'BAD_ARGUMENT', field);
  });

  it('bad shapes and a non-0/1 pass name the field and row', () => {
    expectLabError(
      () => redistributeAdvantages([1, 1], [1], [0, 0], { lambda: 1 }),
      'SHAPE_MISMATCH',
      'quality',
    );
    expectLabError(
      () => redistributeAdvantages([1, 0.5], [1, 1], [0, 0], { lambda: 1 }),
      'BAD_VALUE',
      'passed',
      'row 1',
    );
    expectLabError(() => redistributeAdvantages([1, 1], [1, 1], [0], { lambda: 1 }), 'SHAPE_MISMATCH');
    expectLabError(
      () => redistributeAdvantages([1], [1], [0], { lambda: 1, epsilon: -1 }),
      'BAD_ARGUMENT',
      'epsilon',
    );
  });
});

/** GRPO's outcome advantage of the 0/1 passes (verl defaults) plus the redistribution, per row. */
function grpoAdvantagesPlus(
  passed: number[],
  quality: number[],
  index: number[],
  lambda: number,
): Float64Array {
  const base = grpoScalarAdvantages(passed, index, { singleton: 'zero' });
  const extra = redistributeAdvantages(passed, quality, index, { lambda }).advantages;
  return base.map((a, i) => a + (extra[i] as number));
}
