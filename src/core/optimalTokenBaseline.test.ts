import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import type { LabErrorCode } from './errors.js';
import {
  multiTurnOptimalTokenBaselineAdvantage,
  optimalTokenBaselineAdvantage,
} from './optimalTokenBaseline.js';

// pi = exp(log 0.5) = 0.5 and sum_pi_squared = 1 make every per-token weight w = 1 - 2(0.5) + 1 = 1,
// so W_t is the count of valid tokens up to t: the baselines below follow by hand.
const half = (n: number) => new Float32Array(n).fill(Math.log(0.5));
const ones = (n: number) => new Float32Array(n).fill(1);

describe('optimal token baseline (verl compute_optimal_token_baseline_advantage)', () => {
  const shape = { rows: 2, cols: 2 };
  const r = Float32Array.from([0, 1, 0, 0]); // G: row0 [1,1], row1 [0,0]

  it('B_t = Σ G·W / Σ W per position: 0.5 at both positions', () => {
    const { advantages, returns } = optimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: ones(4),
        index: ['p', 'p'],
        oldLogProbs: half(4),
        sumPiSquared: ones(4),
      },
      shape,
    );
    expect(Array.from(returns)).toEqual([1, 1, 0, 0]);
    expect(Array.from(advantages).map((x) => Number(x.toFixed(6)))).toEqual([0.5, 0.5, -0.5, -0.5]);
  });

  it('IS weights scale W by their square: row 0 weight 2 -> W [4, 8], baseline 0.8', () => {
    const isw = Float32Array.from([2, 2, 1, 1]);
    const { advantages } = optimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: ones(4),
        index: ['p', 'p'],
        oldLogProbs: half(4),
        sumPiSquared: ones(4),
      },
      shape,
      {
        rolloutIsWeights: isw,
      },
    );
    expect(Array.from(advantages).map((x) => Number(x.toFixed(6)))).toEqual([0.2, 0.2, -0.8, -0.8]);
  });

  it('zero tail: the unique longest member gets B = 0 beyond the second-longest length', () => {
    const m = Float32Array.from([1, 1, 1, 0]);
    const keep = optimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: m,
        index: ['p', 'p'],
        oldLogProbs: half(4),
        sumPiSquared: ones(4),
      },
      shape,
    ).advantages;
    const zero = optimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: m,
        index: ['p', 'p'],
        oldLogProbs: half(4),
        sumPiSquared: ones(4),
      },
      shape,
      {
        zeroTail: 'zero',
      },
    ).advantages;
    // position 1: only row 0 is valid, B_1 = (1*2)/(2) = 1 -> advantage 0 unless the tail is zeroed
    expect(Array.from(keep).map((x) => Number(x.toFixed(6)))).toEqual([0.5, 0, -0.5, 0]);
    expect(Array.from(zero).map((x) => Number(x.toFixed(6)))).toEqual([0.5, 1, -0.5, 0]);
  });

  it('a group of one has no baseline: advantage = G x mask', () => {
    const { advantages } = optimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: ones(4),
        index: ['a', 'b'],
        oldLogProbs: half(4),
        sumPiSquared: ones(4),
      },
      shape,
    );
    expect(Array.from(advantages)).toEqual([1, 1, 0, 0]);
  });

  it('non-finite old log-probs anywhere are NON_FINITE naming the field', () => {
    const bad = half(4);
    bad[3] = Number.NaN;
    expectLabError(
      () =>
        optimalTokenBaselineAdvantage(
          {
            tokenLevelRewards: r,
            responseMask: ones(4),
            index: ['p', 'p'],
            oldLogProbs: bad,
            sumPiSquared: ones(4),
          },
          shape,
        ),
      'NON_FINITE',
      'old_log_probs: value NaN at row 1, token 1',
    );
  });
});

describe('multi-turn (TIR) optimal token baseline', () => {
  it('aligns the k-th valid token across members, where the plain version aligns positions', () => {
    const shape = { rows: 2, cols: 3 };
    const r = Float32Array.from([0, 0, 1, 0, 0, 0]);
    const m = Float32Array.from([1, 0, 1, 1, 1, 0]); // row 0 has a tool-output hole at t=1
    const tir = multiTurnOptimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: m,
        index: ['p', 'p'],
        oldLogProbs: half(6),
        sumPiSquared: ones(6),
      },
      shape,
    );
    // packed: row0 R [1,1] W [1,2]; row1 R [0,0] W [1,2] -> b* = [0.5, 0.5]
    expect(Array.from(tir.advantages).map((x) => Number(x.toFixed(6)))).toEqual([0.5, 0, 0.5, -0.5, -0.5, 0]);
    const plain = optimalTokenBaselineAdvantage(
      {
        tokenLevelRewards: r,
        responseMask: m,
        index: ['p', 'p'],
        oldLogProbs: half(6),
        sumPiSquared: ones(6),
      },
      shape,
    );
    // by position: t=1 only row1 valid (G=0 -> B=0), t=2 only row0 valid (B=G=1)
    expect(Array.from(plain.advantages).map((x) => Number(x.toFixed(6)))).toEqual([0.5, 0, 0, -0.5, 0, 0]);
  });

  it('bad options and shapes are LabErrors naming the field', () => {
    const shape = { rows: 2, cols: 2 };
    const r = new Float32Array(4);
    const cases: [() => unknown, LabErrorCode, string][] = [
      [
        () =>
          optimalTokenBaselineAdvantage(
            {
              tokenLevelRewards: r,
              responseMask: ones(4),
              index: ['p', 'p'],
              oldLogProbs: half(4),
              sumPiSquared: ones(4),
            },
            shape,
            {
              zeroTail: 'drop' as never,
            },
          ),
        'UNKNOWN_MODE',
        'zeroTail',
      ],
      [
        () =>
          optimalTokenBaselineAdvantage(
            {
              tokenLevelRewards: r,
              responseMask: ones(4),
              index: ['p', 'p'],
              oldLogProbs: half(4),
              sumPiSquared: ones(4),
            },
            shape,
            { epsilon: -1 },
          ),
        'BAD_ARGUMENT',
        'epsilon',
      ],
      [
        () =>
          optimalTokenBaselineAdvantage(
            {
              tokenLevelRewards: r,
              responseMask: ones(4),
              index: ['p', 'p'],
              oldLogProbs: half(4),
              sumPiSquared: ones(3),
            },
            shape,
          ),
        'SHAPE_MISMATCH',
        'sum_pi_squared',
      ],
      [
        () =>
          multiTurnOptimalTokenBaselineAdvantage(
            {
              tokenLevelRewards: r,
              responseMask: ones(4),
              index: ['p', 'p'],
              oldLogProbs: half(4),
              sumPiSquared: ones(4),
            },
            shape,
            {
              rolloutIsWeights: ones(5),
            },
          ),
        'SHAPE_MISMATCH',
        'rollout_is_weights',
      ],
    ];
    for (const [fn, code, text] of cases) {
      expectLabError(() => fn(), code, text);
    }
  });

  it('a mask entry that is not 0/1 is BAD_MASK naming the row and token', () => {
    const z = new Float32Array(4);
    expect(() =>
      optimalTokenBaselineAdvantage(
        {
          tokenLevelRewards: z,
          responseMask: Float32Array.from([1, 0, -1, 0]),
          index: ['a', 'a'],
          oldLogProbs: z,
          sumPiSquared: z,
        },
        {
          rows: 2,
          cols: 2,
        },
      ),
    ).toThrow(/response_mask: value -1 at row 1, token 0 is not 0 or 1/);
  });

  it('epsilon 0 where every member is deterministic (w = 1 − 2·1 + 1 = 0, so Σ W = 0) is NON_FINITE, not NaN', () => {
    const z = new Float32Array(4); // old_log_probs 0: pi = 1
    const one = new Float32Array(4).fill(1); // sum_pi_squared 1
    const r = Float32Array.from([0, 1, 0, 0]);
    expectLabError(
      () =>
        optimalTokenBaselineAdvantage(
          { tokenLevelRewards: r, responseMask: one, index: ['a', 'a'], oldLogProbs: z, sumPiSquared: one },
          { rows: 2, cols: 2 },
          { epsilon: 0 },
        ),
      'NON_FINITE',
      'epsilon: the baseline at position 0 of the group of row 0 is NaN',
    );
    // verl's eps keeps it finite: B = 0/(0 + 1e-8) = 0, so the advantage is the reward-to-go
    const ok = optimalTokenBaselineAdvantage(
      { tokenLevelRewards: r, responseMask: one, index: ['a', 'a'], oldLogProbs: z, sumPiSquared: one },
      { rows: 2, cols: 2 },
    );
    expect(Array.from(ok.advantages)).toEqual([1, 1, 0, 0]);
  });
});
