import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import type { LabErrorCode } from './errors.js';
import { computeRewards } from './klReward.js';

describe('computeRewards (verl compute_rewards)', () => {
  it('scores - (old - ref) * kl_ratio, elementwise, no mask', () => {
    const out = computeRewards(
      {
        tokenLevelScores: Float32Array.from([1, 0, 0.5, 0]),
        oldLogProb: Float32Array.from([-1, -2, -0.5, -3]),
        refLogProb: Float32Array.from([-1.5, -1, -0.5, -2]),
      },
      { rows: 2, cols: 2 },
      0.5,
    );
    expect(Array.from(out)).toEqual([1 - 0.25, 0 + 0.5, 0.5, 0 + 0.5]);
  });

  it('non-finite log-probs and shape mismatches name the field', () => {
    const ok = new Float32Array(4);
    const bad = Float32Array.from([0, 0, Number.NEGATIVE_INFINITY, 0]);
    const cases: [() => unknown, LabErrorCode, string][] = [
      [
        () =>
          computeRewards(
            { tokenLevelScores: ok, oldLogProb: bad, refLogProb: ok },
            { rows: 2, cols: 2 },
            0.1,
          ),
        'NON_FINITE',
        'old_log_prob: value -Infinity at row 1, token 0',
      ],
      [
        () =>
          computeRewards(
            { tokenLevelScores: ok, oldLogProb: ok, refLogProb: ok.subarray(1) },
            { rows: 2, cols: 2 },
            0.1,
          ),
        'SHAPE_MISMATCH',
        'ref_log_prob',
      ],
      [
        () =>
          computeRewards(
            { tokenLevelScores: ok, oldLogProb: ok, refLogProb: ok },
            { rows: 2, cols: 2 },
            Number.NaN,
          ),
        'BAD_ARGUMENT',
        'kl_ratio',
      ],
    ];
    for (const [fn, code, text] of cases) {
      expectLabError(() => fn(), code, text);
    }
  });
});
