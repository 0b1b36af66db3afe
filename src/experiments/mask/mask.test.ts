import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig, runExperiment } from '../options.js';
import type { RunRecord } from '../types.js';
import { mask } from './mask.js';

const sets = ['updates=40', 'eval_tasks=200'];

async function run(seed: number, extra: string[] = []): Promise<RunRecord> {
  return mask.run(resolveConfig(mask, [...sets, ...extra]), { seed });
}

describe('mask experiment', () => {
  let seven: RunRecord;
  beforeAll(async () => {
    seven = await run(7);
  });

  it('records one row per arm with eval_success and observation_token_action_rate, flat per-arm metrics and curves', async () => {
    const r = seven;
    const arms = r.tables.arms ?? [];
    expect(arms.map((a) => a.arm)).toEqual(['correct', 'flipped']);
    for (const a of arms) {
      expect(typeof a.eval_success).toBe('number');
      expect(typeof a.observation_token_action_rate).toBe('number');
    }
    expect(r.metrics['observation_token_action_rate.flipped']).toBe(arms[1]?.observation_token_action_rate);
    expect(r.curves.update).toHaveLength(40);
    // The caveat names the eval size actually used (it said 400 whatever eval_tasks was).
    expect(r.notes?.join(' ')).toContain('measured on 200 held-out tasks');
    expect(r.curves['success.correct']).toHaveLength(40);
    expect(r.curves['observation_token_action_rate.flipped']).toHaveLength(40);
    for (const family of Object.keys(r.plots ?? {})) {
      expect(Object.keys(r.curves).some((k) => k.startsWith(`${family}.`))).toBe(true);
    }
    // the flipped mask counts environment tokens in the loss: more loss tokens than action tokens
    const f = arms[1] as Record<string, number>;
    const c = arms[0] as Record<string, number>;
    expect(c.loss_tokens_per_trajectory).toBeCloseTo(c.action_tokens_per_trajectory as number, 9);
    expect(f.loss_tokens_per_trajectory).toBeCloseTo(
      (f.action_tokens_per_trajectory as number) + (f.env_tokens_per_trajectory as number),
      3,
    );
    // per-trajectory accounting for both arms
    const acc = r.tables.trajectory_accounting ?? [];
    expect(acc.some((row) => row.arm === 'correct')).toBe(true);
    for (const row of acc.filter((x) => x.arm === 'correct')) expect(row.loss_tokens).toBe(row.action_tokens);
    // the conclusion quotes the measured rates
    expect(r.notes?.[0]).toContain(`${(100 * (f.observation_token_action_rate as number)).toFixed(1)}%`);
  });

  it('training on environment tokens makes the policy emit observation tokens (seed 7, 40 updates)', async () => {
    const r = seven;
    const c = r.metrics['observation_token_action_rate.correct'] as number;
    const f = r.metrics['observation_token_action_rate.flipped'] as number;
    // identical streams: if the mask had no effect the two numbers would be equal
    expect(f).toBeGreaterThan(c + 0.01);
    expect(r.metrics['mean_loss_denominator.flipped']).toBeGreaterThan(
      r.metrics['mean_loss_denominator.correct'] as number,
    );
  });

  it('is deterministic per seed', async () => {
    const a = await run(3, ['updates=10']);
    const b = await run(3, ['updates=10']);
    expect(a.metrics).toEqual(b.metrics);
    expect(a.curves).toEqual(b.curves);
    const c = await run(4, ['updates=10']);
    expect(c.metrics).not.toEqual(a.metrics);
  });

  it('validates a config passed to run() directly (without resolveConfig)', () => {
    expect(() => runExperiment(mask, { updates: 0 }, { seed: 1 })).toThrow(/mask: option updates=0/);
    expect(() => runExperiment(mask, { loss_agg_mode: 'mean' }, { seed: 1 })).toThrow(/loss_agg_mode/);
  });

  it('rejects unknown options and bad values', () => {
    expect(() => resolveConfig(mask, ['nope=1'])).toThrow(/unknown option 'nope'/);
    expect(() => resolveConfig(mask, ['loss_agg_mode=mean'])).toThrow(/loss_agg_mode/);
  });
});
