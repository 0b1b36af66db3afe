import { beforeAll, describe, expect, it } from 'vitest';
import { expectLabError } from '../../../test/support/labError.js';
import { resolveConfig, runExperiment } from '../options.js';
import type { RunRecord } from '../types.js';
import { saturation } from './saturation.js';

// small: 40 warm-up updates, 12 per arm, 8 tasks x 8 samples, 100 held-out tasks
const sets = ['warmup_updates=40', 'updates=12', 'tasks_per_update=8', 'eval_tasks=100', 'robust_replays=8'];
const W = 40;

async function run(seed: number, extra: string[] = []): Promise<RunRecord> {
  return saturation.run(resolveConfig(saturation, [...sets, ...extra]), { seed });
}

const COLUMNS = [
  'arm',
  'ranker',
  'lambda',
  'gradient_group_fraction_after_saturation',
  'verify_rate',
  'mean_length',
  'eval_success',
  'eval_success_robust',
  'ranker_spearman',
];

describe('saturation experiment', () => {
  let one: RunRecord;
  beforeAll(async () => {
    one = await run(1);
  });

  it('tables.arms has one row per arm with exactly the documented columns', () => {
    const arms = one.tables.arms ?? [];
    expect(arms.map((a) => a.arm)).toEqual(['binary', 'shorter', 'verified', 'random', 'rubric']);
    for (const a of arms) expect(Object.keys(a)).toEqual(COLUMNS);
    expect(arms[0]?.ranker).toBe('none');
    expect(arms[0]?.lambda).toBe(0);
    expect(arms[1]?.lambda).toBe(1);
    expect(Number.isNaN(arms[0]?.ranker_spearman)).toBe(true); // binary has no ranker
    expect(one.metrics['eval_success.shorter']).toBe(arms[1]?.eval_success);
    expect(one.curves.update).toHaveLength(W + 12);
    for (const family of Object.keys(one.plots ?? {})) {
      expect(one.curves[`${family}.binary`]).toHaveLength(W + 12);
    }
  });

  it('arms share the warm-up and their first post-saturation batch; only all-right groups differ', () => {
    const c = one.curves;
    for (const arm of ['shorter', 'verified', 'random', 'rubric']) {
      // the warm-up and the first arm batch are the same draws from the same policy
      expect(c[`success.${arm}`]?.slice(0, W + 1)).toEqual(c['success.binary']?.slice(0, W + 1));
      // on that batch a redistributing arm has every gradient group binary has, plus untied all-right ones
      expect(c[`gradient_group_fraction.${arm}`]?.[W]).toBeGreaterThanOrEqual(
        c['gradient_group_fraction.binary']?.[W] as number,
      );
    }
    // binary: only mixed groups carry a gradient = 1 − all-right − all-wrong, so never above 1 − all-right
    const g = c['gradient_group_fraction.binary'] as number[];
    const a = c['all_right_fraction.binary'] as number[];
    for (const [i, x] of g.entries()) expect(x).toBeLessThanOrEqual(1 - (a[i] as number) + 1e-9);
    // random never ties: every all-right group gets a gradient on the first arm batch
    expect(c['gradient_group_fraction.random']?.[W]).toBeCloseTo(
      (g[W] as number) + (c['all_right_fraction.binary']?.[W] as number),
      5,
    );
  });

  it('the audit: verified agrees with robustness, shorter disagrees (seed 1)', () => {
    expect(one.metrics['ranker_spearman.verified']).toBeGreaterThan(0.5);
    expect(one.metrics['ranker_spearman.shorter']).toBeLessThan(0);
    const audit = one.tables.ranker_audit ?? [];
    const verified = audit.find((r) => r.arm === 'verified') as Record<string, number>;
    expect(verified.tied_groups).toBeGreaterThan(0); // all-verified all-right groups tie
    expect(verified.negative_spearman_groups).toBe(0); // a verified pass is never less robust
    const shorter = audit.find((r) => r.arm === 'shorter') as Record<string, number>;
    expect(shorter.negative_spearman_groups).toBeGreaterThan(0);
    expect(verified.tied_groups).toBeLessThanOrEqual(verified.all_right_groups as number);
  });

  it('records the rubric weights at the branch point, per task kind', () => {
    const w = one.tables.rubric_weights ?? [];
    expect(w.map((r) => r.task_kind)).toEqual(['add', 'sub']);
    for (const r of w) {
      expect(Object.keys(r)).toEqual([
        'task_kind',
        'mixed_groups',
        'verified',
        'tool_calls',
        'thinks',
        'length',
      ]);
      expect(r.mixed_groups).toBeGreaterThan(0);
      expect(r.verified).toBeGreaterThan(0); // verified passes are what separates them from fails here
    }
  });

  it('lambda 0 reproduces binary exactly (the redistribution is the only difference between arms)', async () => {
    const r = await run(3, ['lambda=0', 'ranker=shorter', 'updates=6']);
    const [b, s] = r.tables.arms ?? [];
    for (const k of [
      'gradient_group_fraction_after_saturation',
      'verify_rate',
      'mean_length',
      'eval_success',
    ]) {
      expect(s?.[k]).toBe(b?.[k]);
    }
  });

  it('is deterministic per seed', async () => {
    const a = await run(5, ['updates=4', 'warmup_updates=10']);
    const b = await run(5, ['updates=4', 'warmup_updates=10']);
    expect(JSON.stringify(a.metrics)).toBe(JSON.stringify(b.metrics));
    expect(a.curves).toEqual(b.curves);
  });

  it('bad input names the option (usage errors)', () => {
    expectLabError(() => resolveConfig(saturation, ['ranker=longest']), 'BAD_OPTION_VALUE', 'ranker');
    expectLabError(() => resolveConfig(saturation, ['lambda=-1']), 'BAD_OPTION_VALUE', 'lambda=-1');
    expectLabError(() => resolveConfig(saturation, ['lambda=1e309']), 'BAD_OPTION_VALUE', 'lambda=1e309');
    expectLabError(
      () => resolveConfig(saturation, ['overlong_buffer=3']),
      'UNKNOWN_OPTION',
      'overlong_buffer',
    );
    expectLabError(
      () => runExperiment(saturation, { robust_tool_error_rate: 0.2 }, { seed: 1 }),
      'BAD_OPTION_VALUE',
      'robust_tool_error_rate',
    );
  });
});
