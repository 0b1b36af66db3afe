import { describe, expect, it } from 'vitest';
import { ROLE_ENV, ROLE_MODEL, type TokenEpisode, type TokenRole } from '../envs/tokenArithmetic.js';
import { Rng } from '../random.js';
import { Rubric, rankerScores, trajectoryFeatures } from './rankers.js';

/** A hand-made episode: `modelTokens` model tokens (ids), `envTokens` env tokens, verified flag, thinks. */
function episode(model: number[], envTokens: number, verified: boolean, success: boolean): TokenEpisode {
  const tokens = [...model, ...Array(envTokens).fill(17)];
  const roles: TokenRole[] = [...model.map(() => ROLE_MODEL), ...Array(envTokens).fill(ROLE_ENV)];
  return {
    task: { kind: 'add', a: 1, b: 2, answer: 3 },
    tokens,
    contexts: tokens.map(() => 0),
    roles,
    status: success ? 'success' : 'wrong_answer',
    score: success ? 1 : 0,
    errorKind: null,
    modelTokens: model.length,
    envTokens,
    thinkTokens: model.filter((t) => t === 5).length,
    verified,
    toolWasWrong: false,
  };
}

// token ids: read 0, add 1, sub 2, verify 3, submit 4, think 5
const VERIFIED_PASS = episode([0, 1, 3, 4], 14, true, true); // length 18: 3 tool calls, 0 thinks
const THINK_PASS = episode([5, 0, 1, 3, 4], 14, true, true); // length 19: 3 tool calls, 1 think
const PLAIN_PASS = episode([0, 1, 4], 6, false, true); // length 9: 2 tool calls
const PLAIN_FAIL = episode([0, 1, 4], 6, false, false); // length 9: 2 tool calls

describe('rankers', () => {
  it('features: verified, tool calls (read/add/sub/verify), thinks, length', () => {
    expect(Array.from(trajectoryFeatures(THINK_PASS))).toEqual([1, 3, 1, 19]);
    expect(Array.from(trajectoryFeatures(PLAIN_FAIL))).toEqual([0, 2, 0, 9]);
  });

  it('rubric separation weights on a hand-made batch', () => {
    const rubric = new Rubric();
    // mixed group 1: two verified passes and two plain fails; group 2: a verified pass, a plain pass, a plain fail
    rubric.observeGroup(
      'add',
      [true, true, false, false],
      [VERIFIED_PASS, THINK_PASS, PLAIN_FAIL, PLAIN_FAIL].map(trajectoryFeatures),
    );
    rubric.observeGroup(
      'add',
      [true, true, false],
      [VERIFIED_PASS, PLAIN_PASS, PLAIN_FAIL].map(trajectoryFeatures),
    );
    rubric.observeGroup('add', [true, true], [VERIFIED_PASS, PLAIN_PASS].map(trajectoryFeatures)); // all right: ignored
    expect(rubric.groupsSeen('add')).toBe(2);
    expect(rubric.groupsSeen('sub')).toBe(0);
    // contrasts: verified (1 − 0) and (0.5 − 0) -> d = 0.75; tool calls (3 − 2), (2.5 − 2) -> 0.75;
    // thinks (0.5 − 0), (0 − 0) -> 0.25; length (18.5 − 9), (13.5 − 9) -> 7
    // population stds over the 7 trajectories: verified [1,1,0,0,1,0,0]: mean 3/7, sd sqrt(12/49)
    // tool calls = verified + 2: same sd; thinks [0,1,0,0,0,0,0]: sd sqrt(6/49);
    // length [18,19,9,9,18,9,9]: mean 13, Σd² = 25+36+16+16+25+16+16 = 150, sd sqrt(150/7)
    const { weight, scale } = rubric.weights('add');
    const sdV = Math.sqrt(12 / 49);
    const sdT = Math.sqrt(6 / 49);
    const sdL = Math.sqrt(150 / 7);
    const expectedScale = [sdV, sdV, sdT, sdL];
    const expectedWeight = [0.75 / sdV, 0.75 / sdV, 0.25 / sdT, 7 / sdL];
    for (let f = 0; f < 4; f++) {
      expect(scale[f]).toBeCloseTo(expectedScale[f] as number, 12);
      expect(weight[f]).toBeCloseTo(expectedWeight[f] as number, 12);
    }
    // the verified pass outranks the shorter unverified pass
    const q = rankerScores('rubric', [VERIFIED_PASS, PLAIN_PASS], new Rng(1), rubric);
    expect(q[0]).toBeGreaterThan(q[1] as number);
    const manual = [1, 3, 0, 18].reduce(
      (s, v, f) => s + ((expectedWeight[f] as number) * v) / (expectedScale[f] as number),
      0,
    );
    expect(q[0]).toBeCloseTo(manual, 10);
  });

  it('a rubric with no mixed group yet scores every trajectory 0 (a tie)', () => {
    const q = rankerScores('rubric', [VERIFIED_PASS, PLAIN_PASS], new Rng(1), new Rubric());
    expect(Array.from(q)).toEqual([0, 0]);
  });

  it('a clone continues on its own', () => {
    const a = new Rubric();
    a.observeGroup('sub', [true, false], [VERIFIED_PASS, PLAIN_FAIL].map(trajectoryFeatures));
    const b = a.clone();
    b.observeGroup('sub', [true, false], [PLAIN_PASS, PLAIN_FAIL].map(trajectoryFeatures));
    expect(a.groupsSeen('sub')).toBe(1);
    expect(b.groupsSeen('sub')).toBe(2);
  });

  it('shorter, verified and random (seeded) by hand', () => {
    const eps = [VERIFIED_PASS, PLAIN_PASS];
    expect(Array.from(rankerScores('shorter', eps, new Rng(1), new Rubric()))).toEqual([-18, -9]);
    expect(Array.from(rankerScores('verified', eps, new Rng(1), new Rubric()))).toEqual([1, 0]);
    const r1 = rankerScores('random', eps, new Rng(9), new Rubric());
    expect(Array.from(rankerScores('random', eps, new Rng(9), new Rubric()))).toEqual(Array.from(r1));
    expect(r1[0]).not.toBe(r1[1]);
  });
});
