import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { remaxAdvantage } from './remax.js';

describe('ReMax', () => {
  it('returns = reverse cumsum of r*m; advantages = returns - baseline*m (holes keep their return)', () => {
    const shape = { rows: 1, cols: 4 };
    const r = Float32Array.from([0, 1, 5, 2]); // the 5 sits on a mask-0 token and is dropped
    const m = Float32Array.from([1, 1, 0, 1]);
    const { advantages, returns } = remaxAdvantage(
      { tokenLevelRewards: r, rewardBaselines: [1], responseMask: m },
      shape,
    );
    expect(Array.from(returns)).toEqual([3, 3, 2, 2]);
    expect(Array.from(advantages)).toEqual([2, 2, 2, 1]);
    expect(returns).not.toBe(advantages);
  });

  it('baselines of the wrong length or non-finite are LabErrors naming reward_baselines', () => {
    const shape = { rows: 2, cols: 1 };
    for (const [b, code] of [
      [[1], 'SHAPE_MISMATCH'],
      [[1, Number.NaN], 'NON_FINITE'],
    ] as const) {
      expectLabError(
        () =>
          remaxAdvantage(
            {
              tokenLevelRewards: new Float32Array(2),
              rewardBaselines: b,
              responseMask: Float32Array.from([1, 1]),
            },
            shape,
          ),
        code,
        'reward_baselines',
      );
    }
  });

  it('a mask entry that is not 0/1 is BAD_MASK naming the row and token', () => {
    expect(() =>
      remaxAdvantage(
        {
          tokenLevelRewards: new Float32Array(4),
          rewardBaselines: [0, 0],
          responseMask: Float32Array.from([1, 1, 1, 0.5]),
        },
        { rows: 2, cols: 2 },
      ),
    ).toThrow(/response_mask: value 0\.5 at row 1, token 1 is not 0 or 1/);
  });
});
