import { describe, expect, it } from 'vitest';
import { pooledTraining } from '../train/tokenMeasures.js';
import { defaultConfig, resolveConfig } from './options.js';
import { runTokenArm, TOKEN_LAB_OPTIONS, type TokenLabConfig } from './tokenLab.js';
import { truncation } from './truncation/truncation.js';

const small: TokenLabConfig = TOKEN_LAB_OPTIONS.parse({
  updates: 4,
  tasks_per_update: 4,
  group_size: 4,
  eval_tasks: 30,
});

describe('runTokenArm', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const spec = {
      arm: 'a',
      maskRule: 'model_tokens',
      lossAggMode: 'token-mean',
      truncation: 'zero_score',
    } as const;
    const a = runTokenArm(spec, small, 3);
    const b = runTokenArm(spec, small, 3);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(JSON.stringify(runTokenArm(spec, small, 4))).not.toBe(JSON.stringify(a));
  });

  it('drop and mask exclude exactly the truncated trajectories; zero_score excludes none', () => {
    const tight: TokenLabConfig = { ...small, budget: 10, updates: 3 }; // read+tool+submit needs >= 10
    for (const truncation of ['drop', 'mask', 'zero_score'] as const) {
      const r = runTokenArm(
        { arm: truncation, maskRule: 'model_tokens', lossAggMode: 'token-mean', truncation },
        tight,
        5,
      );
      for (const u of r.updates) {
        const truncated = Math.round(u.truncationRate * u.trajectories);
        expect(u.excludedTrajectories).toBe(truncation === 'zero_score' ? 0 : truncated);
      }
      expect(r.updates.some((u) => u.truncationRate > 0)).toBe(true);
    }
  });

  it('the same seed evaluates every arm on the same tasks: an untrained arm equals itself across mask rules', () => {
    // learning rate ~0 (Adam's first step is lr * sign(g)): both arms keep the initial policy
    const tiny: TokenLabConfig = { ...small, updates: 1, lr: 1e-9 };
    const a = runTokenArm(
      { arm: 'c', maskRule: 'model_tokens', lossAggMode: 'token-mean', truncation: 'zero_score' },
      tiny,
      8,
    );
    const b = runTokenArm(
      { arm: 'f', maskRule: 'all_tokens', lossAggMode: 'token-mean', truncation: 'zero_score' },
      tiny,
      8,
    );
    expect(a.evaluation).toEqual(b.evaluation);
    expect(a.updates[0]?.lossTokensPerTrajectory).toBeLessThan(
      b.updates[0]?.lossTokensPerTrajectory as number,
    );
  });

  it('pooledTraining on a real arm with equal batches: the success rate is the mean over updates', () => {
    const r = runTokenArm(
      { arm: 'a', maskRule: 'model_tokens', lossAggMode: 'token-mean', truncation: 'zero_score' },
      small,
      2,
    );
    const p = pooledTraining(r);
    const mean = r.updates.reduce((s, u) => s + u.success, 0) / r.updates.length; // equal batch sizes
    expect(p.success).toBeCloseTo(mean, 12);
    expect(p.trajectories).toBe(4 * 16);
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
    const { mask } = await import('./mask/mask.js');
    const { aggregation } = await import('./aggregation/aggregation.js');
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
