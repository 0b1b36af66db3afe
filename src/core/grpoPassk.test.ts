import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { grpoPasskAdvantage } from './grpoPassk.js';

describe('GRPO pass@k', () => {
  const shape = { rows: 6, cols: 2 };
  // group a scores [1, 0.5, 0]; group b scores [1, 1, 0] (tie at the top)
  const r = Float32Array.from([0, 1, 0, 0.5, 0, 0, 1, 0, 0, 1, 0, 0]);
  const m = Float32Array.from([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
  const index = ['a', 'a', 'a', 'b', 'b', 'b'];

  it('only the best row gets r1 - r2, divided by the unbiased group std + eps (0.5 here)', () => {
    const { advantages, returns } = grpoPasskAdvantage(
      { tokenLevelRewards: r, responseMask: m, index },
      shape,
    );
    expect(returns).toBe(advantages);
    const best = Math.fround(0.5 / (0.5 + 1e-6));
    expect(Array.from(advantages)).toEqual([best, best, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it("std 'none' keeps the raw gap; ties at the top give 0", () => {
    const { advantages } = grpoPasskAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape, {
      std: 'none',
    });
    expect(advantages[0]).toBe(0.5);
    expect(Array.from(advantages.subarray(6))).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it('a group of one is SINGLETON_GROUP naming index (verl raises ValueError)', () => {
    expectLabError(
      () =>
        grpoPasskAdvantage(
          { tokenLevelRewards: r, responseMask: m, index: ['a', 'a', 'a', 'b', 'b', 'c'] },
          shape,
        ),
      'SINGLETON_GROUP',
      'index',
    );
  });

  it('unknown std mode and a negative epsilon are LabErrors naming the option', () => {
    for (const [opts, code, field] of [
      [{ std: 'population' }, 'UNKNOWN_MODE', 'std'],
      [{ epsilon: -1 }, 'BAD_ARGUMENT', 'epsilon'],
    ] as const) {
      expectLabError(
        () => grpoPasskAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape, opts as never),
        code,
        field,
      );
    }
  });

  it('scores whose squared deviations overflow are NON_FINITE, not a silent advantage of 0', () => {
    const huge = Float64Array.from([1e200, -1e200]);
    expectLabError(
      () =>
        grpoPasskAdvantage(
          { tokenLevelRewards: huge, responseMask: new Float32Array(2).fill(1), index: ['a', 'a'] },
          { rows: 2, cols: 1 },
        ),
      'NON_FINITE',
      'scores: group "a" is too large for float64 statistics',
    );
  });

  it('epsilon 0 and a std that underflows to 0 is NON_FINITE, not an infinite advantage', () => {
    const tiny = Float64Array.from([1e-200, 2e-200]);
    expectLabError(
      () =>
        grpoPasskAdvantage(
          { tokenLevelRewards: tiny, responseMask: new Float32Array(2).fill(1), index: ['a', 'a'] },
          { rows: 2, cols: 1 },
          { epsilon: 0 },
        ),
      'NON_FINITE',
      'the advantage of row 1 (group "a") would be Infinity',
    );
  });
});
