import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rlooAdvantage, rlooVectorizedAdvantage } from './rloo.js';

// rows: group a scores [3, 1, 2], group b (singleton) score 5; reward on token 1; row 1 has mask [1,0]
const shape = { rows: 4, cols: 2 };
const r = Float32Array.from([0, 3, 0, 1, 0, 2, 0, 5]);
const m = Float32Array.from([1, 1, 1, 0, 1, 1, 1, 1]);
const index = ['a', 'a', 'a', 'b'];

describe('RLOO', () => {
  it('loop: score minus the mean of the other members; a singleton keeps its score', () => {
    const { advantages, returns } = rlooAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape);
    expect(returns).toBe(advantages);
    // 3 - (1+2)/2 = 1.5; 1 - (3+2)/2 = -1.5 (token 1 masked); 2 - 2 = 0; singleton 5
    expect(Array.from(advantages)).toEqual([1.5, 1.5, -1.5, 0, 0, 0, 5, 5]);
  });

  it('vectorized: same for groups >= 2, but a singleton gets 0', () => {
    const { advantages } = rlooVectorizedAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape);
    expect(Array.from(advantages)).toEqual([1.5, 1.5, -1.5, 0, 0, 0, 0, 0]);
  });

  it('property: leave-one-out advantages of a group sum to 0 and all-equal groups give 0', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -8, max: 8 }), { minLength: 2, maxLength: 9 }), (scores) => {
        const n = scores.length;
        const rew = Float32Array.from(scores.map((s) => s / 4));
        const res = rlooAdvantage(
          { tokenLevelRewards: rew, responseMask: new Uint8Array(n).fill(1), index: new Array(n).fill('g') },
          {
            rows: n,
            cols: 1,
          },
        );
        const sum = Array.from(res.advantages).reduce((a, b) => a + b, 0);
        expect(Math.abs(sum)).toBeLessThan(1e-4);
        for (let i = 0; i < n; i++) {
          const others = (scores.reduce((a, b) => a + b, 0) - (scores[i] as number)) / 4 / (n - 1);
          expect(res.advantages[i]).toBeCloseTo((scores[i] as number) / 4 - others, 5);
        }
      }),
    );
    const same = rlooAdvantage(
      {
        tokenLevelRewards: Float32Array.from([0.3, 0.3, 0.3]),
        responseMask: new Uint8Array(3).fill(1),
        index: [1, 1, 1],
      },
      {
        rows: 3,
        cols: 1,
      },
    );
    expect(Array.from(same.advantages)).toEqual([0, 0, 0]);
  });
});
