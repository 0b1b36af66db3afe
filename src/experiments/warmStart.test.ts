import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectLabError, labErrorOf } from '../../test/support/labError.js';
import { toJson } from '../report/records.js';
import { explore } from './explore/explore.js';
import { mask } from './mask/mask.js';
import { configOf, runExperiment } from './options.js';
import type { RunRecord } from './types.js';

/** A warm-started neural mask run small enough for a test (seconds). */
const small = (cacheDir: string, extra: Record<string, unknown> = {}) => ({
  policy: 'neural',
  init: 'sft',
  d_model: 8,
  updates: 2,
  tasks_per_update: 2,
  group_size: 2,
  eval_tasks: 30,
  sft_steps: 6,
  sft_batch: 4,
  sft_cache_dir: cacheDir,
  ...extra,
});

async function run(input: Record<string, unknown>, seed = 7): Promise<{ record: RunRecord; info: string[] }> {
  const info: string[] = [];
  const record = await runExperiment(mask, input, { seed, onInfo: (l) => info.push(l) });
  return { record, info };
}

const withoutTiming = (r: RunRecord) => toJson({ ...r, timing: { wall_ms: 0 } });

describe('warm start (init=sft)', () => {
  it('refuses an unwritable sft_cache_dir before pretraining, naming the option', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sft-cache-')), 'a-file');
    writeFileSync(file, 'not a directory');
    // checked after the pretraining, the write itself fails instead ("checkpoint …: cannot write it")
    await expect(run(small(join(file, 'cache')))).rejects.toMatchObject({
      code: 'IO_ERROR',
      message: expect.stringMatching(/^sft_cache_dir .*a-file\/cache: cannot write checkpoints there/),
    });
  });

  it('pretrains once, caches the checkpoint, and a rerun reuses it with an identical record', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sft-cache-'));
    const first = await run(small(dir));
    expect(first.info).toHaveLength(1);
    expect(first.info[0]).toMatch(/^checkpoint: pretrained \(6 steps x 4 demonstrations\) and saved to /);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    const file = join(dir, files[0] as string);
    const second = await run(small(dir));
    expect(second.info).toEqual([`checkpoint: reused the cached ${file} (pretraining skipped)`]);
    expect(withoutTiming(second.record)).toBe(withoutTiming(first.record));

    const m = first.record.metrics;
    for (const k of [1, 2, 3]) {
      expect(m[`pretrain_pass_rate.level_${k}`]).toBeGreaterThanOrEqual(0);
      expect(m[`eval_success_level_${k}.correct`]).toBeGreaterThanOrEqual(0);
      expect(m[`eval_success_level_${k}.flipped`]).toBeGreaterThanOrEqual(0);
      // the flat key is the reference arm's (mask: correct)
      expect(m[`eval_success_level_${k}`]).toBe(m[`eval_success_level_${k}.correct`]);
    }
    // the record names the checkpoint; the note gives the per-level pass rates
    expect(first.record.tables.warm_start?.[0]?.checkpoint).toBe(file);
    const note = first.record.notes?.find((n) => n.includes(file) && n.includes('before RL: level 1')) ?? '';
    // ... with the number of tasks per level and each pretrained rate's 95% normal half-width
    const levels = (first.record.tables.levels ?? []) as { tasks: number; pretrained: number }[];
    expect(levels).toHaveLength(3);
    const tasks = levels.map((l) => l.tasks).join(' / ');
    const halfWidths = levels
      .map((l) => (1.96 * Math.sqrt((l.pretrained * (1 - l.pretrained)) / l.tasks)).toFixed(3))
      .join(' / ');
    expect(note).toContain(
      `(${tasks} held-out tasks per level, one sample each; before RL each rate ± ${halfWidths},`,
    );
    // the same seed without a cache pretrains the same parameters (same record but the path)
    const uncached = await run(small(''));
    expect(uncached.info[0]).toMatch(/not cached/);
    expect(uncached.record.metrics).toEqual(first.record.metrics);

    // init_checkpoint=PATH reads that file: the same start, so the same results
    const explicit = await run(small(dir, { init_checkpoint: file }));
    expect(explicit.info).toEqual([`checkpoint: loaded ${file} (init_checkpoint; no pretraining)`]);
    expect(explicit.record.metrics).toEqual(first.record.metrics);
  }, 120_000);

  it('changes the cache key with the pretraining config and the seed, and starts from another policy than scratch', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sft-cache-'));
    await run(small(dir));
    await run(small(dir, { sft_weight_verify: 2 }));
    await run(small(dir), 8);
    expect(readdirSync(dir)).toHaveLength(3);
    const scratch = await run(small(dir, { init: 'scratch' }));
    expect(scratch.info).toEqual([]);
    expect(scratch.record.tables.warm_start).toBeUndefined();
    expect(Object.keys(scratch.record.metrics).some((k) => k.startsWith('pretrain_pass_rate'))).toBe(false);
    expect(scratch.record.metrics['eval_success_level_1.correct']).toBeGreaterThanOrEqual(0);
  }, 120_000);

  it('rejects bad warm-start options and a checkpoint of another model, naming the option or file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sft-cache-'));
    expectLabError(() => configOf(mask, small(dir, { sft_steps: -1 })), 'BAD_OPTION_VALUE', 'sft_steps');
    expectLabError(
      () => configOf(mask, small(dir, { sft_weight_think: -1 })),
      'BAD_OPTION_VALUE',
      'sft_weight_think',
    );
    const zero = Object.fromEntries(
      ['direct', 'verify', 'think', 'wrong_tool', 'extra_call', 'missing_call', 'early_submit'].map((b) => [
        `sft_weight_${b}`,
        0,
      ]),
    );
    const err = labErrorOf(() => mask.run(configOf(mask, small(dir, zero)), { seed: 1 }));
    expect(err.code).toBe('BAD_OPTION_VALUE');
    expect(err.message).toContain('sum to a positive number');
    expect(labErrorOf(() => mask.run(configOf(mask, { init: 'sft' }), { seed: 1 })).message).toContain(
      'policy=neural',
    );
    expect(
      labErrorOf(() => mask.run(configOf(mask, { policy: 'neural', init_checkpoint: 'x.ckpt' }), { seed: 1 }))
        .message,
    ).toContain('init_checkpoint');
    // a checkpoint written for d_model 8 read by a d_model 16 run
    await run(small(dir));
    const file = join(dir, readdirSync(dir)[0] as string);
    const other = labErrorOf(() =>
      mask.run(configOf(mask, small(dir, { d_model: 16, init_checkpoint: file })), { seed: 7 }),
    );
    expect(other.code).toBe('BAD_CHECKPOINT');
    expect(other.message).toContain(file);
    expect(other.message).toContain('d_model');
    // a damaged cache entry is an error naming it, and is left as it was
    const bytes = readFileSync(file);
    writeFileSync(file, bytes.subarray(0, 100));
    const damaged = labErrorOf(() => mask.run(configOf(mask, small(dir)), { seed: 7 }));
    expect(damaged.code).toBe('BAD_CHECKPOINT');
    expect(damaged.message).toContain(file);
    expect(readFileSync(file).length).toBe(100);
  }, 120_000);
});

describe('the RL step size from the warm start', () => {
  it('is 0.001 by default with init=sft, 0.01 from scratch, and the value set wins', async () => {
    const { mismatch } = await import('./mismatch/mismatch.js');
    expect(configOf(mask, { policy: 'neural' }).neural_lr).toBe(0.01);
    expect(configOf(mask, { policy: 'neural', init: 'sft' }).neural_lr).toBe(0.001);
    expect(configOf(mask, { policy: 'neural', init: 'sft', neural_lr: 0.01 }).neural_lr).toBe(0.01);
    // mismatch starts from the warm start at 0.01, where its findings were measured
    expect(configOf(mismatch, {}).init).toBe('sft');
    expect(configOf(mismatch, {}).neural_lr).toBe(0.01);
  });
});

describe('explore from the warm start (policy=neural, init=sft)', () => {
  /** A warm-started neural explore run (curriculum only) small enough for a test. */
  const exploreTiny = {
    policy: 'neural',
    init: 'sft',
    d_model: 8,
    sections: ['curriculum'],
    updates: 3,
    tasks_per_update: 2,
    group_size: 3,
    eval_per_level: 4,
    eval_every: 2,
    replay_fractions: [0.3],
    sft_steps: 4,
    sft_batch: 4,
  };

  it('shares the token lab pretraining of the seed (one cache entry), reports it, and starts from it', async () => {
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
      { ...exploreTiny, sft_cache_dir: dir },
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
    const scratch = await runExperiment(explore, { ...exploreTiny, init: 'scratch' }, { seed: 5 });
    expect(scratch.tables.warm_start).toBeUndefined();
    expect(Object.keys(scratch.metrics).some((k) => k.startsWith('pretrain_pass_rate'))).toBe(false);
    expect(scratch.metrics).not.toEqual(warm.metrics);
  }, 120_000);
});
