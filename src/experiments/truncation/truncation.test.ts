import { beforeAll, describe, expect, it } from 'vitest';
import { overlongPenalty } from '../../train/truncationPolicy.js';
import { resolveConfig, runExperiment } from '../options.js';
import type { JsonValue, RunRecord } from '../types.js';
import { truncation } from './truncation.js';

describe('truncation experiment', () => {
  const config = resolveConfig(truncation, ['updates=30', 'eval_tasks=100']);
  let r: RunRecord;
  let arms: Record<string, JsonValue>[];
  beforeAll(async () => {
    r = await truncation.run(config, { seed: 7 });
    arms = r.tables.arms ?? [];
  });

  it('defaults to a budget of 25 tokens and has one row per truncation policy', () => {
    expect(config.budget).toBe(25);
    expect(arms.map((a) => a.arm)).toEqual(['zero_score', 'drop', 'mask', 'soft_penalty']);
    for (const a of arms) {
      for (const k of ['eval_success', 'truncation_rate', 'verify_rate', 'eval_success_unbounded']) {
        expect(a[k]).toBeGreaterThanOrEqual(0);
        expect(a[k]).toBeLessThanOrEqual(1);
      }
      expect(r.metrics[`truncation_rate.${a.arm}`]).toBe(a.truncation_rate);
    }
  });

  it('drop and mask exclude truncated trajectories from the loss; zero_score and soft_penalty do not', () => {
    const sum = (k: string) => (r.curves[k] ?? []).reduce((s, x) => s + x, 0);
    expect(sum('excluded.zero_score')).toBe(0);
    expect(sum('excluded.soft_penalty')).toBe(0);
    expect(sum('excluded.drop')).toBeGreaterThan(0);
    expect(sum('excluded.mask')).toBeGreaterThan(0);
  });

  it('trains on the score each policy assigns: soft_penalty adds the DAPO penalty, mask zeroes truncated rows', () => {
    const acc = r.tables.trajectory_accounting ?? [];
    const soft = acc.filter((x) => x.arm === 'soft_penalty');
    expect(soft.length).toBeGreaterThan(0);
    for (const row of soft) {
      const base = row.status === 'success' ? 1 : 0;
      expect(row.score).toBeCloseTo(base + overlongPenalty(row.length as number, 25, 5), 12);
    }
    for (const row of acc.filter((x) => x.arm === 'mask' && x.status === 'truncated')) {
      expect(row.loss_tokens).toBe(0);
      expect(row.score).toBe(0);
    }
    for (const row of acc.filter((x) => x.arm === 'drop')) expect(row.status).not.toBe('truncated');
  });

  it('refuses a DAPO buffer longer than the budget and a "budget lifted" budget not above the budget', () => {
    const run = (sets: string[]) => () => truncation.run(resolveConfig(truncation, sets), { seed: 1 });
    expect(run(['overlong_buffer=26'])).toThrow(/overlong_buffer=26 exceeds budget=25/);
    expect(run(['unbounded_budget=25'])).toThrow(/unbounded_budget=25 must exceed budget=25/);
    // budget 500 with the default unbounded_budget (400) used to evaluate "lifted" below the budget.
    expect(run(['budget=500'])).toThrow(/unbounded_budget=400 must exceed budget=500/);
  });

  it('is deterministic per seed', async () => {
    const small = resolveConfig(truncation, ['updates=5', 'eval_tasks=50']);
    const a = await runExperiment(truncation, small, { seed: 2 });
    const b = await runExperiment(truncation, small, { seed: 2 });
    expect(a.metrics).toEqual(b.metrics);
    expect(a.curves).toEqual(b.curves);
  });
});
