import { beforeAll, describe, expect, it } from 'vitest';
import { expectLabError } from '../../../test/support/labError.js';
import { LAB_ERROR_KIND } from '../../core/errors.js';
import { runSeeds } from '../multiSeed.js';
import { configOf, resolveConfig } from '../options.js';
import type { RunRecord } from '../types.js';
import { FILTER_ARMS, filter, successPerGeneratedAuc } from './filter.js';

const ARM_COLUMNS = [
  'arm',
  'success_per_update_auc',
  'success_per_generated_auc',
  'generated_per_update',
  'gradient_sample_fraction',
  'denominator_mean',
  'kl_ref',
];

const small = ['updates=12', 'groups_per_update=8', 'group_size=4', 'eval_tasks=50'];

describe.each(['agent', 'token'])('filter experiment, env=%s', (env) => {
  const cfg = resolveConfig(filter, [...small, `env=${env}`]);
  const K = cfg.groups_per_update;
  const G = cfg.group_size;
  let r: RunRecord;
  beforeAll(async () => {
    r = await filter.run(cfg, { seed: 3 });
  });
  const arm = (name: string) => (r.tables.arms ?? []).find((a) => a.arm === name) as Record<string, number>;

  it('tables.arms has exactly the documented columns, one row per arm', () => {
    expect((r.tables.arms ?? []).map((a) => a.arm)).toEqual([...FILTER_ARMS]);
    for (const a of r.tables.arms ?? []) expect(Object.keys(a)).toEqual(ARM_COLUMNS);
  });

  it('the arms share the first batch (common random numbers); exclude_from_denominator drops zero-variance tokens', () => {
    const first = (k: string) => (r.curves[k] ?? [])[0] as number;
    for (const a of FILTER_ARMS) expect(first(`success.${a}`)).toBe(first('success.keep'));
    expect(first('denominator.exclude_from_denominator')).toBeLessThanOrEqual(first('denominator.keep'));
    expect(first('denominator.kl')).toBe(first('denominator.keep'));
  });

  it('generation: one batch per update except dynamic_sampling, which stays within its cap', () => {
    for (const a of ['keep', 'exclude_from_denominator', 'kl', 'kl_masked']) {
      expect(arm(a).generated_per_update).toBe(K * G);
      // the whole budget is theirs, so the two AUCs coincide
      expect(arm(a).success_per_generated_auc).toBeCloseTo(arm(a).success_per_update_auc as number, 5);
    }
    const ds = arm('dynamic_sampling');
    expect(ds.generated_per_update).toBeGreaterThanOrEqual(K * G);
    expect(ds.generated_per_update).toBeLessThanOrEqual((cfg.max_extra_gen_batches + 1) * K * G);
    expect(r.metrics['cap_hit_updates.dynamic_sampling']).toBeGreaterThanOrEqual(0);
  });

  it('fractions are fractions; the KL to the reference starts at 0', () => {
    for (const a of r.tables.arms ?? []) {
      expect(a.gradient_sample_fraction).toBeGreaterThanOrEqual(0);
      expect(a.gradient_sample_fraction).toBeLessThanOrEqual(1);
      expect(a.kl_ref).toBeGreaterThanOrEqual(0);
    }
    // the KL curve starts at the reference: the first batch is sampled by the initial policy
    for (const a of FILTER_ARMS) expect((r.curves[`kl_ref.${a}`] ?? [])[0]).toBe(0);
  });

  it('zero_variance_rules: exact misses every noise-only group; range at tol flags them; leave-one-out zeroes signal', () => {
    const rows = r.tables.zero_variance_rules ?? [];
    expect(rows.map((x) => `${x.rule}/${x.scope}`)).toEqual([
      'exact/group',
      'exact/leave_one_out',
      'std/group',
      'std/leave_one_out',
      'range/group',
      'range/leave_one_out',
    ]);
    const get = (rule: string, scope: string) =>
      rows.find((x) => x.rule === rule && x.scope === scope) as Record<string, number>;
    const noise = get('exact', 'group').noise_only_groups;
    expect(noise).toBeGreaterThan(0);
    expect(get('exact', 'group').noise_only_groups_with_advantage).toBe(noise);
    expect(get('exact', 'group').noise_only_max_abs_advantage).toBeGreaterThan(0.5); // noise standardised into O(1)
    expect(get('range', 'group').zero_variance_groups).toBe(noise); // tol 1e-3 >> 2e-4 noise, << 0.5 signal
    expect(get('range', 'group').signal_rows_zeroed).toBe(0);
    expect(get('range', 'group').noise_only_max_abs_advantage).toBe(0);
    expect(get('range', 'leave_one_out').zeroed_rows).toBeGreaterThanOrEqual(
      get('range', 'group').zeroed_rows as number,
    );
    expect(rows.every((x) => x.groups === cfg.updates * K)).toBe(true);
  });
});

describe('filter experiment options', () => {
  it('cap 0: dynamic_sampling generates exactly one batch per update', async () => {
    const r = await filter.run(resolveConfig(filter, [...small, 'max_extra_gen_batches=0']), { seed: 3 });
    const ds = (r.tables.arms ?? []).find((a) => a.arm === 'dynamic_sampling');
    expect(ds?.generated_per_update).toBe(8 * 4);
  });

  it('bad input names the option and is a usage error', () => {
    for (const [key, value] of [
      ['zero_variance_tol', -1e-9],
      ['max_extra_gen_batches', -1],
      ['kl_beta', -0.1],
      ['reward_noise', -1],
    ] as const) {
      const e = expectLabError(
        () => configOf(filter, { [key]: value }),
        'BAD_OPTION_VALUE',
        `option ${key}=${value}`,
      );
      expect(LAB_ERROR_KIND[e.code]).toBe('usage');
    }
    expectLabError(() => resolveConfig(filter, ['policy=neural']), 'BAD_OPTION_VALUE', 'policy');
  });

  it('successPerGeneratedAuc: step function over generation, cut at the budget', () => {
    // success 0 over [0, 10], 1 over [10, 40]; budget 20 -> (0 x 10 + 1 x 10) / 20
    expect(successPerGeneratedAuc([0, 1], [10, 40], 20)).toBe(0.5);
    expect(successPerGeneratedAuc([0.5, 1], [10, 20], 20)).toBe(0.75);
  });
});

describe('filter --seeds', () => {
  it('carries comparisons: every arm vs keep on the paired measures, as the per-seed _minus_keep pairs', async () => {
    const rec = await runSeeds(filter, resolveConfig(filter, [...small, 'updates=4']), [1, 2, 3]);
    const comparisons = rec.comparisons ?? [];
    const measures = ['success_per_update_auc', 'success_per_generated_auc', 'eval_success', 'kl_ref'];
    expect(comparisons.map((c) => `${c.metric}.${c.arm}`)).toEqual(
      measures.flatMap((m) => FILTER_ARMS.filter((a) => a !== 'keep').map((a) => `${m}.${a}`)),
    );
    for (const c of comparisons) {
      expect(c.baseline).toBe('keep');
      const perSeed = rec.runs.map((r) => r.metrics[`${c.metric}.${c.arm}_minus_keep`] as number);
      expect(c.diff).toBeCloseTo(perSeed.reduce((a, b) => a + b, 0) / perSeed.length, 5);
    }
  });
});
