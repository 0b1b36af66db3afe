import { beforeAll, describe, expect, it } from 'vitest';
import { LabError } from '../../core/errors.js';
import { samplePromptedTask } from '../../envs/promptedArithmetic.js';
import { Rng } from '../../random.js';
import { createExploreLearner } from '../../train/exploreLearner.js';
import { configOf, runExperiment } from '../options.js';
import type { RunRecord } from '../types.js';
import { explore } from './explore.js';

const SMALL = {
  updates: 3,
  tasks_per_update: 2,
  group_size: 3,
  eval_per_level: 4,
  pool_per_level: 1,
  class_samples: 4,
  eval_every: 2,
  temperatures: [1, 2],
  entropy_coefs: [0, 0.05],
  replay_fractions: [0.3],
};

describe('explore experiment', () => {
  let rec: RunRecord;
  let again: RunRecord;
  beforeAll(async () => {
    rec = await runExperiment(explore, SMALL, { seed: 3 });
    again = await runExperiment(explore, { ...SMALL, sections: ['levers'] }, { seed: 3 });
  });

  it('has the three tables with the documented columns', () => {
    const levers = rec.tables.levers ?? [];
    expect(levers).toHaveLength(2 * 2 * 2);
    for (const key of [
      'temperature',
      'entropy_coef',
      'is_correction',
      'valid_action_rate',
      'train_success',
      'tokens_per_success',
      'entropy',
      'eval_success',
    ])
      expect(levers[0]).toHaveProperty(key);
    expect((rec.tables.task_classes ?? []).map((r) => r.arm)).toEqual([
      'uniform',
      'uniform',
      'more_candidates',
      'more_candidates',
      'temperature_up',
      'temperature_up',
      'demonstrations',
      'demonstrations',
    ]);
    expect((rec.tables.curriculum ?? []).map((r) => [r.arm, r.replay])).toEqual([
      ['uniform', null],
      ['staged', 0],
      ['staged_replay_0p3', 0.3],
      ['hardest_variance_first', null],
    ]);
    for (const r of rec.tables.curriculum ?? []) expect(r.forgetting_easy).toBeGreaterThanOrEqual(0);
    for (const [k, v] of Object.entries(rec.curves)) expect(v, k).toHaveLength(3);
  });

  it('at tau = 1 the IS correction is the identity (weights exactly 1): on and off rows are equal', () => {
    const rows = (rec.tables.levers ?? []).filter((r) => r.temperature === 1 && r.entropy_coef === 0);
    const { arm: _a, is_correction: _i, ...on } = rows.find((r) => r.is_correction === 'on') ?? {};
    const { arm: _b, is_correction: _j, ...off } = rows.find((r) => r.is_correction === 'off') ?? {};
    expect(on).toEqual(off);
    // at tau = 2 the correction changes the update (same rows, half of them rewarded)
    const cfg = configOf(explore, SMALL);
    const entropyAfter = (isCorrection: boolean) => {
      const learner = createExploreLearner(cfg, new Rng(1));
      const tasks = [samplePromptedTask(new Rng(2), 99, 1, 1)];
      const rows = learner
        .rollout(tasks, 6, 2, new Rng(4), new Rng(5))
        .map((e, i) => ({ ...e, score: i % 2 }));
      const terms = {
        temperature: 2,
        entropyCoef: 0,
        isCorrection,
        lossAggMode: 'token-mean' as const,
        demonstrations: [],
        sftCoef: 0,
      };
      const group = new Int32Array(rows.length);
      let h = 0;
      for (let k = 0; k < 4; k++) h = learner.update(rows, group, terms).entropy;
      return h;
    };
    expect(entropyAfter(true)).not.toBeCloseTo(entropyAfter(false), 9);
  });

  it('the entropy bonus raises the tau = 1 entropy; sections are independent and seeded', () => {
    const at = (beta: number) =>
      (rec.tables.levers ?? []).find(
        (r) => r.temperature === 1 && r.entropy_coef === beta && r.is_correction === 'off',
      )?.entropy as number;
    expect(at(0.05)).toBeGreaterThan(at(0));
    expect(again.tables.levers).toEqual(rec.tables.levers);
  });

  it.each([
    ['temperatures', [0]],
    ['temperatures', [-1]],
    ['temperatures', [Number.POSITIVE_INFINITY]],
    ['entropy_coefs', [-0.01]],
    ['replay_fractions', [1.5]],
    ['replay_fractions', [-0.1]],
    ['schedule', [1, 4]],
    ['schedule', [0, 1]],
    ['hot_temperature', 0],
    ['hot_temperature', -1],
  ])('refuses %s=%j as a usage error naming the option', (key, value) => {
    let err: unknown;
    try {
      configOf(explore, { [key]: value });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).code).toBe('BAD_OPTION_VALUE');
    expect((err as LabError).message).toContain(`option ${key}`);
  });
});

describe('explore from the warm start (policy=neural, init=sft)', () => {
  // the pretraining it shares with the token lab: src/experiments/warmStart.test.ts
  it('refuses init=sft for the table policy, naming the option', async () => {
    // run() throws before returning a promise: wrap it so the rejection is awaited
    await expect(
      (async () => runExperiment(explore, { ...SMALL, policy: 'table', init: 'sft' }, { seed: 1 }))(),
    ).rejects.toMatchObject({
      code: 'BAD_OPTION_VALUE',
      message: expect.stringMatching(/^option init: .*policy=neural/),
    });
  });
});
