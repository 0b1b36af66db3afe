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
  const tiny = {
    ...SMALL,
    policy: 'neural',
    init: 'sft',
    d_model: 8,
    sections: ['curriculum'],
    sft_steps: 4,
    sft_batch: 4,
  };

  it('shares the token lab pretraining of the seed (one cache entry), reports it, and starts from it', async () => {
    const { mkdtempSync, readdirSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { mask } = await import('../mask/mask.js');
    const dir = mkdtempSync(join(tmpdir(), 'explore-sft-'));
    const info: string[] = [];
    // mask with explore's model and env options: the same pretraining, so explore reuses its file
    await runExperiment(
      mask,
      {
        policy: 'neural',
        init: 'sft',
        d_model: 8,
        updates: 1,
        tasks_per_update: 2,
        group_size: 2,
        eval_tasks: 3,
        sft_steps: 4,
        sft_batch: 4,
        sft_cache_dir: dir,
      },
      { seed: 5 },
    );
    expect(readdirSync(dir)).toHaveLength(1);
    const file = join(dir, readdirSync(dir)[0] as string);
    const warm = await runExperiment(
      explore,
      { ...tiny, sft_cache_dir: dir },
      { seed: 5, onInfo: (l) => info.push(l) },
    );
    expect(info).toEqual([`checkpoint: reused the cached ${file} (pretraining skipped)`]);
    expect(readdirSync(dir)).toHaveLength(1);
    expect(warm.tables.warm_start?.[0]?.checkpoint).toBe(file);
    expect(warm.config.neural_lr).toBe(0.001);
    // the pretrained pass rate is the curriculum's evaluation at update 0 (same tasks and streams)
    const init = (warm.tables.curriculum_eval_uniform ?? []).find((r) => r.update === 0);
    for (const k of [1, 2, 3]) {
      const x = warm.metrics[`pretrain_pass_rate.level_${k}`];
      expect(typeof x).toBe('number');
      expect(x).toBe(init?.[`level_${k}`]);
    }
    const scratch = await runExperiment(explore, { ...tiny, init: 'scratch' }, { seed: 5 });
    expect(scratch.tables.warm_start).toBeUndefined();
    expect(Object.keys(scratch.metrics).some((k) => k.startsWith('pretrain_pass_rate'))).toBe(false);
    expect(scratch.metrics).not.toEqual(warm.metrics);
  }, 120_000);

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
