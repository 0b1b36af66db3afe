import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { gaeAdvantageReturn } from './gae.js';

describe('GAE (verl compute_gae_advantage_return)', () => {
  it('hand recursion with a multi-turn hole: the hole is skipped, not a step', () => {
    const shape = { rows: 1, cols: 3 };
    const r = Float32Array.from([0, 0, 1]);
    const v = Float32Array.from([0.2, 9, 0.4]);
    const m = Float32Array.from([1, 0, 1]);
    const { advantages, returns } = gaeAdvantageReturn(
      { tokenLevelRewards: r, values: v, responseMask: m },
      shape,
      { gamma: 0.9, lam: 0.8 },
    );
    // t=2: delta = 1 - 0.4 = 0.6 -> l = 0.6. t=1 (hole): l and nextV unchanged, adv_raw = 0.6.
    // t=0: delta = 0.9*0.4 - 0.2 = 0.16, l = 0.16 + 0.72*0.6 = 0.592.
    const raw = [0.592, 0.6, 0.6];
    raw.forEach((a, i) => {
      expect(returns[i]).toBeCloseTo(a + (v[i] as number), 5);
    });
    const mean = (0.592 + 0.6) / 2;
    const variance = (0.592 - mean) ** 2 + (0.6 - mean) ** 2; // unbiased, n = 2
    raw.forEach((a, i) => {
      expect(advantages[i]).toBeCloseTo((a - mean) / Math.sqrt(variance + 1e-8), 4);
    });
    expect(advantages[0]).toBeLessThan(0);
    expect(advantages[2]).toBeGreaterThan(0);
  });

  it('property (verl test): values at mask-0 positions change neither advantages nor masked returns', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: -8, max: 8 }),
            fc.integer({ min: -8, max: 8 }),
            fc.boolean(),
            fc.integer({ min: -50, max: 50 }),
          ),
          {
            minLength: 3,
            maxLength: 12,
          },
        ),
        (cells) => {
          const T = cells.length;
          const mask = Float32Array.from(cells.map(([, , on], i) => (on || i < 2 ? 1 : 0)));
          const r = Float32Array.from(cells.map(([x]) => x / 8));
          const v1 = Float32Array.from(cells.map(([, y]) => y / 8));
          const v2 = Float32Array.from(cells.map(([, y, , z], i) => (mask[i] === 1 ? y / 8 : z)));
          const a = gaeAdvantageReturn(
            { tokenLevelRewards: r, values: v1, responseMask: mask },
            { rows: 1, cols: T },
            { gamma: 0.99, lam: 0.95 },
          );
          const b = gaeAdvantageReturn(
            { tokenLevelRewards: r, values: v2, responseMask: mask },
            { rows: 1, cols: T },
            { gamma: 0.99, lam: 0.95 },
          );
          expect(Array.from(b.advantages)).toEqual(Array.from(a.advantages));
          for (let i = 0; i < T; i++) if (mask[i] === 1) expect(b.returns[i]).toBe(a.returns[i]);
        },
      ),
    );
  });

  it('non-finite values anywhere and missing gamma are LabErrors naming the field', () => {
    const shape = { rows: 1, cols: 2 };
    const m = Float32Array.from([1, 1]);
    expectLabError(
      () => {
        gaeAdvantageReturn(
          {
            tokenLevelRewards: new Float32Array(2),
            values: Float32Array.from([0, Number.NaN]),
            responseMask: Float32Array.from([1, 0]),
          },
          shape,
          { gamma: 1, lam: 1 },
        );
      },
      'NON_FINITE',
      'values: value NaN at row 0, token 1',
    );
    expectLabError(
      () =>
        gaeAdvantageReturn(
          { tokenLevelRewards: new Float32Array(2), values: new Float32Array(2), responseMask: m },
          shape,
          { gamma: Number.NaN, lam: 1 },
        ),
      'BAD_ARGUMENT',
      'gamma',
    );
  });

  it('a mask entry that is not 0/1 is BAD_MASK naming the row and token', () => {
    expect(() =>
      gaeAdvantageReturn(
        {
          tokenLevelRewards: new Float32Array(4),
          values: new Float32Array(4),
          responseMask: Float32Array.from([1, 2, 1, 1]),
        },
        {
          rows: 2,
          cols: 2,
        },
        { gamma: 1, lam: 1 },
      ),
    ).toThrow(/response_mask: value 2 at row 0, token 1 is not 0 or 1/);
  });

  it('large finite values are not refused for what their row sum would be (GAE never sums them)', () => {
    // V constant: delta = r + V_next - V = 0 except the last step (-V), so adv_raw = -V and returns = 0
    const T = 64;
    const v = new Float32Array(T).fill(1e37); // the row sum 6.4e38 is beyond float32, the values are not
    const { returns } = gaeAdvantageReturn(
      { tokenLevelRewards: new Float32Array(T), values: v, responseMask: new Float32Array(T).fill(1) },
      {
        rows: 1,
        cols: T,
      },
      { gamma: 1, lam: 1 },
    );
    expect(Array.from(returns).every((x) => x === 0)).toBe(true);
  });
});
