import { describe, expect, it } from 'vitest';
import {
  ROLE_ENV,
  ROLE_MODEL,
  TOK_DIGIT0,
  TOK_READ,
  TOK_SUBMIT,
  TOK_THINK,
  type TokenEpisode,
} from '../envs/tokenArithmetic.js';
import { defaultConfig, resolveConfig } from './options.js';
import {
  type ArmResult,
  measureEpisodes,
  overlongPenalty,
  pooledTraining,
  runTokenArm,
  TOKEN_LAB_OPTIONS,
  type TokenLabConfig,
  trajectoryAccounting,
  type UpdateRecord,
} from './tokenLab.js';
import { truncation } from './truncation.js';

const small: TokenLabConfig = TOKEN_LAB_OPTIONS.parse({
  updates: 4,
  tasks_per_update: 4,
  group_size: 4,
  eval_tasks: 30,
});

function episode(partial: Partial<TokenEpisode>): TokenEpisode {
  return {
    task: { kind: 'add', a: 1, b: 2, answer: 3 },
    tokens: [],
    contexts: [],
    roles: [],
    status: 'success',
    score: 1,
    errorKind: null,
    modelTokens: 0,
    envTokens: 0,
    thinkTokens: 0,
    verified: false,
    toolWasWrong: false,
    ...partial,
  };
}

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

describe('runTokenArm', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const spec = {
      arm: 'a',
      maskRule: 'model-tokens',
      lossAggMode: 'token-mean',
      truncation: 'zero-score',
    } as const;
    const a = runTokenArm(spec, small, 3);
    const b = runTokenArm(spec, small, 3);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(runTokenArm(spec, small, 4))).not.toBe(JSON.stringify(a));
  });

  it('drop and mask exclude exactly the truncated trajectories; zero-score excludes none', () => {
    const tight: TokenLabConfig = { ...small, budget: 10, updates: 3 }; // read+tool+submit needs >= 10
    for (const truncation of ['drop', 'mask', 'zero-score'] as const) {
      const r = runTokenArm(
        { arm: truncation, maskRule: 'model-tokens', lossAggMode: 'token-mean', truncation },
        tight,
        5,
      );
      for (const u of r.updates) {
        const truncated = Math.round(u.truncationRate * u.trajectories);
        expect(u.excludedTrajectories).toBe(truncation === 'zero-score' ? 0 : truncated);
      }
      expect(r.updates.some((u) => u.truncationRate > 0)).toBe(true);
    }
  });

  it('the same seed evaluates every arm on the same tasks: an untrained arm equals itself across mask rules', () => {
    // learning rate ~0 (Adam's first step is lr * sign(g)): both arms keep the initial policy
    const tiny: TokenLabConfig = { ...small, updates: 1, lr: 1e-9 };
    const a = runTokenArm(
      { arm: 'c', maskRule: 'model-tokens', lossAggMode: 'token-mean', truncation: 'zero-score' },
      tiny,
      8,
    );
    const b = runTokenArm(
      { arm: 'f', maskRule: 'all-tokens', lossAggMode: 'token-mean', truncation: 'zero-score' },
      tiny,
      8,
    );
    expect(a.evaluation).toEqual(b.evaluation);
    expect(a.updates[0]?.lossTokensPerTrajectory).toBeLessThan(
      b.updates[0]?.lossTokensPerTrajectory as number,
    );
  });

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

  it('pooledTraining on a real arm with equal batches: the success rate is the mean over updates', () => {
    const r = runTokenArm(
      { arm: 'a', maskRule: 'model-tokens', lossAggMode: 'token-mean', truncation: 'zero-score' },
      small,
      2,
    );
    const p = pooledTraining(r);
    const mean = r.updates.reduce((s, u) => s + u.success, 0) / r.updates.length; // equal batch sizes
    expect(p.success).toBeCloseTo(mean, 12);
    expect(p.trajectories).toBe(4 * 16);
  });
});

describe('trajectoryAccounting', () => {
  it("lists every arm's last-group rows in arm order, tagged with the arm", () => {
    const arm = (name: string, lastGroup: Record<string, number | string>[]) =>
      ({ spec: { arm: name }, lastGroup }) as unknown as ArmResult;
    const rows = trajectoryAccounting([
      arm('correct', [
        { trajectory: 0, score: 1 },
        { trajectory: 1, score: 0 },
      ]),
      arm('empty', []),
      arm('flipped', [{ trajectory: 0, score: 0.5 }]),
    ]);
    expect(rows).toEqual([
      { arm: 'correct', trajectory: 0, score: 1 },
      { arm: 'correct', trajectory: 1, score: 0 },
      { arm: 'flipped', trajectory: 0, score: 0.5 },
    ]);
    expect(Object.keys(rows[0] ?? {})[0]).toBe('arm'); // the arm column comes first in the table
  });
});

describe('options', () => {
  it('parses snake_case keys into the config the learner reads, keeping the other defaults', () => {
    expect(defaultConfig(truncation).budget).toBe(25);
    expect(TOKEN_LAB_OPTIONS.parse({}).budget).toBe(48);
    const cfg = TOKEN_LAB_OPTIONS.parse({ lr: 0.2, tool_error_rate: 0.1, budget: 30 });
    expect(cfg).toMatchObject({ lr: 0.2, tool_error_rate: 0.1, budget: 30, group_size: 8 });
    expect(TOKEN_LAB_OPTIONS.shape.optimizer.safeParse('rmsprop').success).toBe(false);
  });

  it('mask and aggregation reject the options only truncation reads instead of ignoring them', async () => {
    const { mask } = await import('./mask.js');
    const { aggregation } = await import('./aggregation.js');
    for (const exp of [mask, aggregation]) {
      for (const key of ['overlong_buffer', 'unbounded_budget']) {
        expect(() => resolveConfig(exp, [`${key}=10`])).toThrow(new RegExp(`unknown option '${key}'`));
      }
    }
    expect(Object.keys(truncation.options.shape)).toEqual(
      expect.arrayContaining(['overlong_buffer', 'unbounded_budget']),
    );
  });
});
