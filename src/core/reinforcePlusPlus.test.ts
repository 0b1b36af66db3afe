import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import type { LabErrorCode } from './errors.js';
import { reinforcePlusPlusAdvantage, reinforcePlusPlusBaselineAdvantage } from './reinforcePlusPlus.js';

/** Whitening written out by hand over the listed valid values (unbiased variance, + 1e-8). */
function whitenRef(all: number[], valid: number[]): number[] {
  const n = valid.length;
  const mean = valid.reduce((a, b) => a + b, 0) / n;
  const v = valid.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  return all.map((x) => (x - mean) / Math.sqrt(v + 1e-8));
}

describe('REINFORCE++', () => {
  const shape = { rows: 2, cols: 3 };
  const r = Float32Array.from([0, 0, 1, 0, 0, 1]);
  const m = Float32Array.from([1, 1, 1, 1, 0, 1]); // row 1 has a hole at token 1

  it('discounted return-to-go, reset at a hole (gamma 0.5), then batch whitening x mask', () => {
    const { advantages, returns } = reinforcePlusPlusAdvantage(
      { tokenLevelRewards: r, responseMask: m },
      shape,
      { gamma: 0.5 },
    );
    // row 0: G2 = 1, G1 = 0.5, G0 = 0.25. row 1: G2 = 1; G1 = 0 + 0.5*1 = 0.5 (returned, unmasked),
    // then carry = G1 * m1 = 0, so G0 = 0.
    expect(Array.from(returns)).toEqual([0.25, 0.5, 1, 0, 0.5, 1]);
    expect(returns).not.toBe(advantages);
    const ref = whitenRef([0.25, 0.5, 1, 0, 0.5, 1], [0.25, 0.5, 1, 0, 1]);
    ref.forEach((v, i) => {
      expect(advantages[i]).toBeCloseTo(m[i] === 1 ? v : 0, 5);
    });
    expect(Object.is(advantages[4], 0)).toBe(true);
  });

  it('fewer than 2 valid tokens is EMPTY_MASK (verl masked_var raises)', () => {
    expectLabError(
      () =>
        reinforcePlusPlusAdvantage(
          { tokenLevelRewards: r, responseMask: Float32Array.from([0, 0, 1, 0, 0, 0]) },
          shape,
          { gamma: 1 },
        ),
      'EMPTY_MASK',
      'returns needs at least 2 valid tokens, the mask has 1',
    );
  });

  it('baseline variant: s - group mean, tiled, whitened over the batch, x mask; same object returned', () => {
    // scores: row0 = 1 (group g), row1 = 1 (group g)... use distinct scores: rows in one group [1, 3]
    const r2 = Float32Array.from([0, 0, 1, 0, 0, 3]);
    const { advantages, returns } = reinforcePlusPlusBaselineAdvantage(
      { tokenLevelRewards: r2, responseMask: m, index: ['g', 'g'] },
      shape,
    );
    expect(returns).toBe(advantages);
    // centred: row0 -1 on 3 tokens, row1 +1 on 2 valid tokens
    const ref = whitenRef([-1, -1, -1, 1, 0, 1], [-1, -1, -1, 1, 1]);
    ref.forEach((v, i) => {
      expect(advantages[i]).toBeCloseTo(m[i] === 1 ? v : 0, 5);
    });
  });

  it('bad gamma, bad mask and a wrong-length index are LabErrors naming the field', () => {
    const cases: [() => unknown, LabErrorCode, string][] = [
      [
        () =>
          reinforcePlusPlusAdvantage({ tokenLevelRewards: r, responseMask: m }, shape, { gamma: Number.NaN }),
        'BAD_ARGUMENT',
        'gamma',
      ],
      [
        () =>
          reinforcePlusPlusAdvantage(
            { tokenLevelRewards: r, responseMask: Float32Array.from([1, 1, 1, 1, 2, 1]) },
            shape,
          ),
        'BAD_MASK',
        'row 1, token 1',
      ],
      [
        () =>
          reinforcePlusPlusBaselineAdvantage({ tokenLevelRewards: r, responseMask: m, index: ['g'] }, shape),
        'SHAPE_MISMATCH',
        'index',
      ],
    ];
    for (const [fn, code, text] of cases) {
      expectLabError(() => fn(), code, text);
    }
  });
});
