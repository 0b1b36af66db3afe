import { describe, expect, it } from 'vitest';
import { episode } from '../../test/support/tokenEpisode.js';
import {
  ROLE_ENV,
  ROLE_MODEL,
  TOK_DIGIT0,
  TOK_READ,
  TOK_SUBMIT,
  TOK_THINK,
} from '../envs/tokenArithmetic.js';
import {
  type ArmResult,
  lateMean,
  measureEpisodes,
  pooledTraining,
  type UpdateRecord,
} from './tokenMeasures.js';

describe('measureEpisodes', () => {
  it('counts observation tokens emitted by the model, per decision, and lengths by outcome', () => {
    const eps = [
      // success: 3 model tokens (one think), 2 env tokens, verified
      episode({
        tokens: [TOK_THINK, TOK_READ, TOK_DIGIT0, TOK_DIGIT0, TOK_SUBMIT],
        roles: [ROLE_MODEL, ROLE_MODEL, ROLE_ENV, ROLE_ENV, ROLE_MODEL],
        modelTokens: 3,
        envTokens: 2,
        thinkTokens: 1,
        verified: true,
      }),
      // observation token emitted as an action: a digit with role model
      episode({
        tokens: [TOK_READ, TOK_DIGIT0, TOK_DIGIT0 + 3],
        roles: [ROLE_MODEL, ROLE_ENV, ROLE_MODEL],
        status: 'protocol_error',
        errorKind: 'observation_token',
        score: 0,
        modelTokens: 2,
        envTokens: 1,
      }),
      episode({
        tokens: [TOK_THINK],
        roles: [ROLE_MODEL],
        status: 'truncated',
        score: 0,
        modelTokens: 1,
        thinkTokens: 1,
      }),
    ];
    const m = measureEpisodes(eps);
    expect(m.success).toBeCloseTo(1 / 3, 12);
    expect(m.observationTokenActionRate).toBeCloseTo(1 / 6, 12); // 1 of 6 model tokens
    expect(m.observationErrorRate).toBeCloseTo(1 / 3, 12);
    expect(m.truncationRate).toBeCloseTo(1 / 3, 12);
    expect(m.verifyRate).toBeCloseTo(1 / 3, 12);
    expect(m.thinkRate).toBeCloseTo(2 / 6, 12);
    expect(m.successMeanLength).toBe(5);
    expect(m.failedMeanLength).toBe(2);
    expect(m.envTokensPerTrajectory).toBe(1);
  });
});

describe('pooledTraining', () => {
  it('pooledTraining weights each update by its trajectories, failures and model tokens (hand-made updates)', () => {
    const u = (over: Partial<UpdateRecord>): UpdateRecord => ({
      trajectories: 10,
      success: 0,
      observationTokenActionRate: 0,
      observationErrorRate: 0,
      protocolErrorRate: 0,
      truncationRate: 0,
      verifyRate: 0,
      thinkRate: 0,
      meanLength: 0,
      successMeanLength: Number.NaN,
      failedMeanLength: Number.NaN,
      modelTokensPerTrajectory: 0,
      envTokensPerTrajectory: 0,
      lossDenominator: 0,
      lossTokensPerTrajectory: 0,
      excludedTrajectories: 0,
      loss: 0,
      clipfrac: 0,
      failedLongShortWeightRatio: Number.NaN,
      ...over,
    });
    const arm = {
      updates: [
        // 10 trajectories: 5 successes of mean length 6, 5 failures of mean length 10, 40 model tokens (20 think)
        u({
          success: 0.5,
          successMeanLength: 6,
          failedMeanLength: 10,
          modelTokensPerTrajectory: 4,
          thinkRate: 0.5,
          lossDenominator: 8,
        }),
        // 30 trajectories: 3 successes of mean length 12, 27 failures of mean length 20, 60 model tokens (6 think)
        u({
          trajectories: 30,
          success: 0.1,
          successMeanLength: 12,
          failedMeanLength: 20,
          modelTokensPerTrajectory: 2,
          thinkRate: 0.1,
          lossDenominator: 0, // a skipped update does not count
        }),
      ],
    } as unknown as ArmResult;
    const p = pooledTraining(arm);
    expect(p.trajectories).toBe(40);
    expect(p.success).toBeCloseTo(8 / 40, 12); // the unweighted mean of the two rates would be 0.3
    expect(p.failedMeanLength).toBeCloseTo((5 * 10 + 27 * 20) / 32, 12);
    expect(p.thinkRate).toBeCloseTo((20 + 6) / 100, 12);
    expect(p.modelTokensPerTrajectory).toBeCloseTo(100 / 40, 12);
    expect(p.meanLossDenominator).toBe(8);
    expect(p.successMeanLength).toBeCloseTo((5 * 6 + 3 * 12) / 8, 12);
  });
  it('lateMean averages the last quarter of updates, skipping NaN', () => {
    const r = {
      updates: [1, 2, 3, 4, 5, 6, Number.NaN, 8].map((x) => ({ loss: x })),
    } as unknown as ArmResult;
    expect(lateMean(r, (u) => u.loss)).toBe(8); // last 2 of 8: NaN left out
    expect(lateMean(r, (u) => u.loss, 0.5)).toBeCloseTo((5 + 6 + 8) / 3, 12);
  });
});
