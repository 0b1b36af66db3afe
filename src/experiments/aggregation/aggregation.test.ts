import { beforeAll, describe, expect, it } from 'vitest';
import { LOSS_AGG_MODES } from '../../core/aggLoss.js';
import { resolveConfig } from '../options.js';
import type { JsonValue, RunRecord } from '../types.js';
import { aggregation } from './aggregation.js';

describe('aggregation experiment', () => {
  let r: RunRecord;
  let arms: Record<string, JsonValue>[];
  beforeAll(async () => {
    r = await aggregation.run(resolveConfig(aggregation, ['updates=30', 'eval_tasks=100']), { seed: 7 });
    arms = r.tables.arms ?? [];
  });

  it('has one row per verl mode with eval_success, failed_mean_length and success_mean_length', () => {
    expect(arms.map((a) => a.arm)).toEqual([...LOSS_AGG_MODES]);
    for (const a of arms) {
      for (const k of ['eval_success', 'failed_mean_length', 'success_mean_length'])
        expect(typeof a[k]).toBe('number');
      expect(r.metrics[`failed_mean_length.${a.arm}`]).toBe(a.failed_mean_length);
    }
    expect(r.curves['failed_length.seq-mean-token-mean']).toHaveLength(30);
  });

  it('only seq-mean-token-mean makes the per-token weight depend on the trajectory length', () => {
    const ratio = (mode: string) =>
      arms.find((a) => a.arm === mode)?.failed_long_short_weight_ratio as number;
    // token-mean, seq-mean-token-sum and -norm give every loss token of a batch the same weight
    expect(ratio('token-mean')).toBe(1);
    expect(ratio('seq-mean-token-sum')).toBe(1);
    expect(ratio('seq-mean-token-sum-norm')).toBe(1);
    // weight 1/n_b: longer failed trajectories (more model tokens) get less weight per token
    expect(ratio('seq-mean-token-mean')).toBeLessThan(0.9);
    const rows = r.tables.weight_by_length ?? [];
    for (const row of rows.filter((x) => x.arm === 'token-mean'))
      expect(row.weight_per_token).toBeCloseTo(1, 9);
    const stm = rows.filter((x) => x.arm === 'seq-mean-token-mean').map((x) => x.weight_per_token as number);
    expect(stm[0]).toBeGreaterThan(stm[stm.length - 1] as number);
    // the plot table: one row per length bucket in order, one column per mode
    const wide = r.tables.failed_weight_by_length ?? [];
    expect(wide.map((x) => x.length)).toEqual([...wide.map((x) => x.length)].sort());
    for (const row of wide) if (row['token-mean'] !== undefined) expect(row['token-mean']).toBeCloseTo(1, 9);
    expect(r.plots?.failed_weight_by_length?.yFields).toEqual([...LOSS_AGG_MODES]);
  });

  it('raw weights show the loss scale of each mode: seq-mean-token-sum 1/B, token-mean 1/(loss tokens of the batch)', () => {
    const rows = r.tables.weight_by_length ?? [];
    const raw = (mode: string) =>
      rows.find((x) => x.arm === mode && x.length === '17-24')?.raw_weight_per_token as number;
    // token-mean divides by all loss tokens of the batch (~128 rows x 3-4), seq-mean-token-sum by 128 rows
    expect(raw('seq-mean-token-sum')).toBeCloseTo(1 / 128, 9);
    expect(raw('token-mean')).toBeLessThan(raw('seq-mean-token-sum') / 2);
  });

  it('states its conclusion with the measured ratio', () => {
    const ratio = arms.find((a) => a.arm === 'seq-mean-token-mean')?.failed_long_short_weight_ratio as number;
    expect(r.notes?.[0]).toContain(`${ratio.toFixed(2)}x`);
  });
});
