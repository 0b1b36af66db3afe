import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { opoAdvantage } from './opo.js';

describe('OPO', () => {
  it('length-weighted baseline by hand: lengths 2 and 4, scores 1 and 0 -> b = 1/3', () => {
    const shape = { rows: 3, cols: 4 };
    const r = Float32Array.from([0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0]);
    const m = Float32Array.from([1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 1, 0]);
    const { advantages, returns } = opoAdvantage(
      { tokenLevelRewards: r, responseMask: m, index: ['p', 'p', 'single'] },
      shape,
    );
    expect(returns).toBe(advantages);
    const hi = Math.fround(1 - 1 / 3);
    const lo = Math.fround(-1 / 3);
    expect(Array.from(advantages)).toEqual([hi, hi, 0, 0, lo, lo, lo, lo, 2, 2, 2, 0]);
  });

  it('a group of >= 2 rows without any valid token is EMPTY_MASK (verl: 0/0 = NaN)', () => {
    expectLabError(
      () =>
        opoAdvantage(
          {
            tokenLevelRewards: Float32Array.from([1, 0]),
            responseMask: new Float32Array(2),
            index: ['g', 'g'],
          },
          { rows: 2, cols: 1 },
        ),
      'EMPTY_MASK',
      'response_mask',
    );
  });

  it('a mask entry that is not 0/1 is BAD_MASK even where it would make a group look empty', () => {
    // row 0's mask sums to 0 (1 + -1): read as lengths, the group would be 0/0 (EMPTY_MASK)
    expect(() =>
      opoAdvantage(
        {
          tokenLevelRewards: new Float32Array(4),
          responseMask: Float32Array.from([1, -1, 0, 0]),
          index: ['g', 'g'],
        },
        { rows: 2, cols: 2 },
      ),
    ).toThrow(/response_mask: value -1 at row 0, token 1 is not 0 or 1/);
  });
});
