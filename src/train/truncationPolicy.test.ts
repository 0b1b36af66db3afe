import { describe, expect, it } from 'vitest';
import { episode } from '../../test/support/tokenEpisode.js';
import { maskTruncatedRows, overlongPenalty, shapeBatch, type TruncationPolicy } from './truncationPolicy.js';

describe('overlongPenalty (DAPO soft overlong punishment)', () => {
  it('is 0 up to Lmax - Lcache, ramps linearly to -1 at Lmax, -1 beyond', () => {
    // Lmax 25, Lcache 5: free up to 20
    expect(overlongPenalty(12, 25, 5)).toBe(0);
    expect(overlongPenalty(20, 25, 5)).toBe(0);
    expect(overlongPenalty(21, 25, 5)).toBeCloseTo(-0.2, 12);
    expect(overlongPenalty(23, 25, 5)).toBeCloseTo(-0.6, 12);
    expect(overlongPenalty(25, 25, 5)).toBeCloseTo(-1, 12);
    expect(overlongPenalty(30, 25, 5)).toBe(-1);
  });

  it('refuses a ramp of length 0 (it would divide by zero)', () => {
    expect(() => overlongPenalty(25, 25, 0)).toThrow(/overlong_buffer: expected a number > 0, got 0/);
  });
});

describe('shapeBatch and maskTruncatedRows', () => {
  // two groups of G = 2: group 0 = (success len 10, truncated len 25), group 1 = (failure len 22, success len 12)
  const len = (n: number) => Array.from({ length: n }, () => 0);
  const all = [
    episode({ tokens: len(10), score: 1 }),
    episode({ tokens: len(25), score: 0, status: 'truncated' }),
    episode({ tokens: len(22), score: 0, status: 'wrong_answer' }),
    episode({ tokens: len(12), score: 1 }),
  ];
  const shape = (policy: TruncationPolicy) => shapeBatch(all, policy, 2, 25, 5);

  it('zero_score and mask keep every row, group and score', () => {
    for (const policy of ['zero_score', 'mask'] as const) {
      expect(shape(policy)).toMatchObject({ group: [0, 0, 1, 1], scores: [1, 0, 0, 1], dropped: 0 });
    }
  });

  it('drop removes the truncated row; its group gets smaller', () => {
    const s = shape('drop');
    expect(s.rows).toHaveLength(3);
    expect(s).toMatchObject({ group: [0, 1, 1], scores: [1, 0, 1], dropped: 1 });
  });

  it('soft_penalty adds the DAPO ramp to every score (free up to 20 tokens here)', () => {
    const s = shape('soft_penalty');
    expect(s.scores[0]).toBe(1);
    expect(s.scores[1]).toBeCloseTo(-1, 12); // truncated at the budget: 0 - 1
    expect(s.scores[2]).toBeCloseTo(-0.4, 12); // 22 tokens: (20 - 22) / 5
    expect(s.scores[3]).toBe(1);
    expect(() => shapeBatch(all, 'soft_penalty', 2, 25, undefined)).toThrow(/overlong_buffer/);
  });

  it('refuses an unknown policy naming it', () => {
    expect(() => shapeBatch(all, 'zero-score' as TruncationPolicy, 2, 25, 5)).toThrow(
      /truncation policy 'zero-score' is not one of zero_score, drop, mask, soft_penalty/,
    );
  });

  it('maskTruncatedRows zeroes exactly the truncated rows of the loss mask', () => {
    const mask = new Float32Array(4 * 3).fill(1);
    expect(maskTruncatedRows(all, mask, 3)).toBe(1);
    expect([...mask]).toEqual([1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1]);
  });
});
