import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { grpoScalarAdvantages } from './grpo.js';
import { spreadOf, zeroVarianceRows } from './zeroVariance.js';

const idx = (g: number, n: number) => Array.from({ length: g * n }, (_, i) => Math.floor(i / n));

describe('zeroVarianceRows', () => {
  it('exact equality, std and range on a near-constant group (by hand)', () => {
    // group 0: float noise of 1e-7; group 1: exactly equal; group 2: real signal
    const r = [0.5, 0.5 + 1e-7, 0.5, 0.5 - 1e-7, 1, 1, 1, 1, 0, 1, 0, 0];
    const index = idx(3, 4);
    const exact = zeroVarianceRows(r, index, { rule: 'exact' });
    expect(Array.from(exact.groups)).toEqual([0, 1, 0]);
    const range = zeroVarianceRows(r, index, { rule: 'range', tol: 1e-6 });
    expect(Array.from(range.groups)).toEqual([1, 1, 0]);
    expect(range.flaggedRows).toBe(8);
    // population std of group 0: sqrt((1e-14 + 1e-14) / 4) ~ 7.07e-8
    expect(zeroVarianceRows(r, index, { rule: 'std', tol: 7e-8 }).flaggedGroups).toBe(1);
    expect(zeroVarianceRows(r, index, { rule: 'std', tol: 7.1e-8 }).flaggedGroups).toBe(2);
    // range tolerance just below the spread 2e-7 does not flag it
    expect(zeroVarianceRows(r, index, { rule: 'range', tol: 1.9e-7 }).flaggedGroups).toBe(1);
  });

  it('leave-one-out flags the one informative row of [1, 0, 0, 0], group scope does not', () => {
    const r = [1, 0, 0, 0];
    const loo = zeroVarianceRows(r, [0, 0, 0, 0], { rule: 'exact', scope: 'leave_one_out' });
    expect(Array.from(loo.rows)).toEqual([1, 0, 0, 0]);
    expect(loo.flaggedGroups).toBe(0); // not every row is flagged
    const whole = zeroVarianceRows(r, [0, 0, 0, 0], { rule: 'exact' });
    expect(Array.from(whole.rows)).toEqual([0, 0, 0, 0]);
  });

  it('singletons are never flagged; a row with one peer is (a single value is constant)', () => {
    expect(Array.from(zeroVarianceRows([3, 1, 2], [0, 1, 1], { scope: 'group' }).rows)).toEqual([0, 0, 0]);
    expect(Array.from(zeroVarianceRows([3, 1, 2], [0, 1, 1], { scope: 'leave_one_out' }).rows)).toEqual([
      0, 1, 1,
    ]);
  });

  it('property: group-scope range flags exactly the groups with max - min <= tol; exact implies every tol', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
        fc.array(fc.double({ min: -1e-6, max: 1e-6, noNaN: true }), { minLength: 8, maxLength: 8 }),
        fc.double({ min: 0, max: 1e-5, noNaN: true }),
        (base, noise, tol) => {
          const r = base.map((b, i) => b / 3 + (noise[i] as number));
          const index = idx(2, 4);
          const range = zeroVarianceRows(r, index, { rule: 'range', tol });
          const exact = zeroVarianceRows(r, index, { rule: 'exact' });
          const std = zeroVarianceRows(r, index, { rule: 'std', tol });
          for (let g = 0; g < 2; g++) {
            const v = r.slice(4 * g, 4 * g + 4);
            expect(range.groups[g]).toBe(Math.max(...v) - Math.min(...v) <= tol ? 1 : 0);
            if (exact.groups[g]) expect(range.groups[g]).toBe(1);
            // population std <= range / 2, so whatever range flags, std flags too
            if (range.groups[g]) expect(std.groups[g]).toBe(1);
          }
        },
      ),
    );
  });

  it('bad input: negative or NaN tolerance, non-finite reward, unknown rule', () => {
    expectLabError(
      () => zeroVarianceRows([1, 1], [0, 0], { rule: 'range', tol: -1e-9 }),
      'BAD_ARGUMENT',
      'tol',
    );
    expectLabError(() => zeroVarianceRows([1, 1], [0, 0], { tol: Number.NaN }), 'BAD_ARGUMENT', 'tol');
    expectLabError(() => zeroVarianceRows([1, Number.NaN], [0, 0]), 'NON_FINITE', 'rewards');
    expectLabError(() => zeroVarianceRows([1, 1], [0, 0], { rule: 'var' as never }), 'UNKNOWN_MODE', 'rule');
  });

  it('spreadOf: population std and range, skip leaves a row out', () => {
    expect(spreadOf([0, 2, 4], [0, 1, 2], 'std')).toBeCloseTo(Math.sqrt(8 / 3), 14);
    expect(spreadOf([0, 2, 4], [0, 1, 2], 'range')).toBe(4);
    expect(spreadOf([0, 2, 4], [0, 1, 2], 'range', 2)).toBe(2);
    expect(spreadOf([5], [0], 'std')).toBe(0);
  });
});

describe('the conformance supplement near-constant float32 groups', () => {
  // verl's own case: group n2 = [2, 2.000000476837158, 2, 2.0000009536743164] differs only by float32 ulps.
  const gold = JSON.parse(readFileSync('test/golden/verl-core-algos-supplement.json', 'utf8')) as {
    cases: { name: string; inputs: { token_level_rewards: number[][]; index: string[] } }[];
  };
  const c = gold.cases.find((x) => x.name === 's_grpo_near_constant_float32');
  if (!c) throw new Error('supplement case missing');
  const scores = c.inputs.token_level_rewards.map((row) => row.reduce((a, b) => a + b, 0));
  const index = c.inputs.index;

  it('exact equality keeps n2 (and GRPO gives it nonzero advantages); range tol 1e-5 flags it', () => {
    const exact = zeroVarianceRows(scores, index, { rule: 'exact' });
    expect(Array.from(exact.groups)).toEqual([0, 1, 0]); // groups n2, c3, m: only c3 is exactly constant
    const range = zeroVarianceRows(scores, index, { rule: 'range', tol: 1e-5 });
    expect(Array.from(range.groups)).toEqual([1, 1, 0]);
    const adv = grpoScalarAdvantages(scores, index, { std: 'unbiased', epsilon: 1e-6 });
    const n2 = Array.from(adv.slice(0, 4));
    // float64 verl gives -0.2455 / +0.4092 on 4.8e-7 of noise (outputs_f64); with a smaller eps it is +-1 scale
    expect(Math.max(...n2.map(Math.abs))).toBeGreaterThan(0.2);
    const noEps = grpoScalarAdvantages(scores, index, { std: 'unbiased', epsilon: 0 });
    expect(Math.max(...Array.from(noEps.slice(0, 4)).map(Math.abs))).toBeGreaterThan(1);
  });
});
