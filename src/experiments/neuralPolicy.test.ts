/**
 * `--set policy=neural` on the three token experiments: they run end to end with the GRU sequence
 * model on the prompted env, say which policy and model size trained them, and are deterministic
 * per seed. Small configs (a few updates): learning itself is measured in docs/experiments/neural.md.
 */
import { describe, expect, it } from 'vitest';
import { aggregation } from './aggregation/aggregation.js';
import { mask } from './mask/mask.js';
import { resolveConfig } from './options.js';
import { truncation } from './truncation/truncation.js';
import type { Experiment, RunRecord } from './types.js';

const small = ['policy=neural', 'updates=3', 'tasks_per_update=4', 'group_size=4', 'eval_tasks=20'];

async function run(e: Experiment, seed: number, extra: string[] = []): Promise<RunRecord> {
  const extraSets = e.name === 'truncation' ? ['unbounded_budget=80'] : [];
  return e.run(resolveConfig(e, [...small, ...extraSets, ...extra]), { seed });
}

const strip = (r: RunRecord) => JSON.stringify({ ...r, timing: null });

describe.each([mask, aggregation, truncation] as unknown as Experiment[])('$name with policy=neural', (e) => {
  it('records the policy and model size, and gives the same record for the same seed', async () => {
    const a = await run(e, 7);
    expect(a.config.policy).toBe('neural');
    expect(a.tables.policy?.[0]).toMatchObject({ policy: 'neural', model: 'gru', d_model: 32, vocab: 23 });
    expect(a.tables.policy?.[0]?.parameters).toBeGreaterThan(1000);
    expect(strip(await run(e, 7))).toBe(strip(a));
    expect(strip(await run(e, 8))).not.toBe(strip(a));
  });
});

describe('policy options', () => {
  it('takes d_model from --set and rejects one out of range', async () => {
    const r = await run(mask, 7, ['d_model=8']);
    expect(r.tables.policy?.[0]).toMatchObject({ d_model: 8 });
    expect(() => resolveConfig(mask, ['d_model=2'])).toThrow(/d_model/);
    expect(() => resolveConfig(mask, ['policy=lstm'])).toThrow(/policy/);
  });

  it('keeps the tabular policy the default', async () => {
    const r = await mask.run(resolveConfig(mask, ['updates=2', 'eval_tasks=10']), {
      seed: 7,
    });
    expect(r.tables.policy?.[0]).toMatchObject({ policy: 'table', contexts: 36 });
  });
});
