import { describe, expect, it } from 'vitest';
import { runExperiment } from '../options.js';
import type { JsonValue, RunRecord } from '../types.js';
import { parseRows, rollout } from './rollout.js';

const small = {
  workers: 12,
  groups_per_update: 4,
  group_size: 4,
  updates: 30,
  train_step_s: 1,
  publish_delay_s: 0.25,
  eval_tasks: 50,
};
const run = (seed: number, extra: Record<string, unknown> = {}) =>
  Promise.resolve().then(
    () => runExperiment(rollout, { ...small, ...extra }, { seed }) as Promise<RunRecord>,
  );

const REQUIRED = [
  'mode',
  'eta',
  'correction',
  'throughput',
  'trainer_idle',
  'worker_idle',
  'lag_mean',
  'lag_max',
  'ratio_p99',
  'ess_fraction',
  'lag_logratio_corr',
  'consumed_mean_length',
  'generated_mean_length',
  'eval_success',
];

describe('rollout experiment', () => {
  it('one row per (mode, correction) with the required fields; sync has lag 0 and ratio exactly 1', async () => {
    const r = await run(7);
    const rows = r.tables.modes as Record<string, JsonValue>[];
    expect(rows.map((x) => x.run)).toEqual([
      'sync',
      'bounded_none',
      'bounded_is',
      'bounded_tis',
      'admission_none',
      'unbounded_none',
      'unbounded_is',
      'unbounded_tis',
      'unbounded_drop',
    ]);
    for (const row of rows) for (const k of REQUIRED) expect(row).toHaveProperty(k);
    const sync = rows[0] as Record<string, JsonValue>;
    expect([sync.lag_mean, sync.lag_max, sync.ratio_p99, sync.ratio_max, sync.ess_fraction]).toEqual([
      0, 0, 1, 1, 1,
    ]);
    expect(sync.lag_logratio_corr).toBeNull(); // undefined with a constant lag, not 0 or NaN
    expect(sync.eta).toBe(0);
    // Every lag histogram column of sync is all at lag 0.
    expect((r.tables.lag_histogram as Record<string, JsonValue>[])[0]?.sync).toBe(1);
    for (const row of rows) {
      if (row.mode === 'unbounded') expect(row.eta).toBeNull();
      else expect(typeof row.eta).toBe('number');
      if (row.mode === 'bounded' || row.correction === 'drop')
        expect(row.lag_max as number).toBeLessThanOrEqual(2);
      expect(row.trainer_idle as number).toBeGreaterThanOrEqual(0);
      expect(row.trainer_idle as number).toBeLessThan(1);
    }
    // Async really is stale somewhere, and faster than sync.
    const unb = rows.find((x) => x.run === 'unbounded_none') as Record<string, JsonValue>;
    expect(unb.lag_max as number).toBeGreaterThan(2);
    expect(unb.throughput as number).toBeGreaterThan(sync.throughput as number);
  });

  it('tables: lag histogram columns sum to 1; ratio_by_lag has sync only at lag 0; plots point at real tables', async () => {
    const r = await run(3, { rows: 'sync,unbounded:none,bounded:tis' });
    const hist = r.tables.lag_histogram as Record<string, JsonValue>[];
    for (const key of ['sync', 'unbounded_none', 'bounded_tis']) {
      const total = hist.reduce((s, row) => s + (row[key] as number), 0);
      expect(total).toBeCloseTo(1, 12);
    }
    const syncBuckets = (r.tables.ratio_by_lag as Record<string, JsonValue>[]).filter(
      (x) => x.run === 'sync',
    );
    expect(syncBuckets.map((x) => x.lag_bucket)).toEqual(['0']);
    for (const hint of Object.values(r.plots ?? {})) {
      if (hint.table) {
        expect(r.tables[hint.table]).toBeDefined();
        for (const f of hint.yFields ?? []) expect(r.tables[hint.table]?.[0]).toHaveProperty(f);
      }
    }
    for (const [k, v] of Object.entries(r.curves)) expect(v.length, k).toBe(30);
  });

  it('is deterministic for a seed and differs across seeds', async () => {
    const a = await run(11, { rows: 'unbounded:is' });
    const b = await run(11, { rows: 'unbounded:is' });
    const c = await run(12, { rows: 'unbounded:is' });
    expect(JSON.stringify([b.metrics, b.curves, b.tables])).toBe(
      JSON.stringify([a.metrics, a.curves, a.tables]),
    );
    expect(JSON.stringify(c.curves)).not.toBe(JSON.stringify(a.curves));
  });

  it('parseRows: defaults, shorthand, and errors that name the entry', () => {
    expect(parseRows('sync, bounded:tis')).toEqual([
      { key: 'sync', mode: 'sync', correction: 'none' },
      { key: 'bounded_tis', mode: 'bounded', correction: 'tis' },
    ]);
    expect(() => parseRows('sync,async:none')).toThrow(/entry 2 'async:none': mode must be/);
    expect(() => parseRows('bounded:clip')).toThrow(/entry 1 'bounded:clip': correction must be/);
    expect(() => parseRows('sync,sync')).toThrow(/listed twice/);
  });

  it('rejects unknown and invalid options', async () => {
    await expect(run(1, { nope: 1 })).rejects.toThrow(/nope/);
    await expect(run(1, { tis_cap: 0 })).rejects.toThrow(/tis_cap/);
  });

  it('refuses more episodes in flight than memory holds, naming the options', async () => {
    await expect(run(1, { workers: 100_000, group_size: 16 })).rejects.toThrow(
      /\(workers \+ groups_per_update\) x group_size = \(100000 \+ 4\) x 16 = 1600064/,
    );
    await expect(run(1, { updates: 1e9 })).rejects.toThrow(/updates/);
  });

  it('states the eval sampling noise for the eval size used (50 tasks: sd 0.024 at 0.97)', async () => {
    const r = await run(1, { rows: 'sync', updates: 2 });
    // sqrt(0.97 x 0.03 / 50) = 0.0241
    expect(r.notes?.join(' ')).toContain(
      'each of the 50 held-out tasks (sampling sd 0.024 at a success of 0.97)',
    );
  });

  it('eval=greedy evaluates the argmax policy and says so (an option added by one declaration)', async () => {
    const sampled = await run(1, { rows: 'sync' });
    const greedy = await run(1, { rows: 'sync', eval: 'greedy' });
    expect(sampled.config.eval).toBe('sample');
    expect(greedy.config.eval).toBe('greedy');
    expect(greedy.notes?.join(' ')).toContain(
      'takes the greedy action of the final policy on each of the 50',
    );
    // Same trained table (same protocol_prob), evaluated two ways: the success differs.
    expect(greedy.metrics['eval_success.sync']).not.toBe(sampled.metrics['eval_success.sync']);
    expect(greedy.metrics['protocol_prob.sync']).toBe(sampled.metrics['protocol_prob.sync']);
  });

  it('names length_max when it is below the 4-token floor per action (was an error about "min (4)")', async () => {
    await expect(run(1, { length_max: 3 })).rejects.toThrow(/length_max/);
    expect(rollout.options.shape.length_max.safeParse(4).success).toBe(true);
  });
});
