import { beforeAll, describe, expect, it } from 'vitest';
import { isLabError } from '../../core/errors.js';
import { resolveConfig, runExperiment } from '../options.js';
import type { RunRecord } from '../types.js';
import { agent } from './agent.js';

const run = (config: Record<string, unknown>, seed: number) =>
  Promise.resolve().then(() => runExperiment(agent, config, { seed }) as Promise<RunRecord>);

async function codeOf(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return isLabError(e) ? e.code : `not a LabError: ${String(e)}`;
  }
  return undefined;
}

describe('agent experiment: defaults, seed 7 (the course headline)', () => {
  let a: RunRecord;
  beforeAll(async () => {
    a = await run({}, 7);
  });

  it('trains on exactly 19,200 trajectories and evaluates 400 held-out tasks', () => {
    expect(a.metrics.train_trajectories).toBe(19200);
    expect(a.metrics.eval_tasks).toBe(400);
    expect(a.curves.update?.length).toBe(150);
  });

  it('goes from about the uniform 1/64 to >= 0.97 success', () => {
    const before = a.metrics.eval_success_before as number;
    expect(before).toBeGreaterThanOrEqual(0);
    expect(before).toBeLessThanOrEqual(0.04);
    expect(a.metrics.eval_success_after as number).toBeGreaterThanOrEqual(0.97);
  });

  it('same seed -> byte-identical metrics, curves and tables; another seed differs', async () => {
    const again = await run({}, 7);
    expect(JSON.stringify(again.metrics)).toBe(JSON.stringify(a.metrics));
    expect(JSON.stringify(again.curves)).toBe(JSON.stringify(a.curves));
    expect(JSON.stringify(again.tables)).toBe(JSON.stringify(a.tables));
    const other = await run({}, 8);
    expect(JSON.stringify(other.curves)).not.toBe(JSON.stringify(a.curves));
    expect(JSON.stringify(other.metrics)).not.toBe(JSON.stringify(a.metrics));
  });

  it('per update: group kinds sum to 1 and zero-advantage trajectories are exactly the constant groups', () => {
    const wrong = a.curves['group_kind.all_wrong'] as number[];
    const mixed = a.curves['group_kind.mixed'] as number[];
    const right = a.curves['group_kind.all_right'] as number[];
    const zero = a.curves['zero_advantage.fraction'] as number[];
    for (let i = 0; i < 150; i++) {
      const w = wrong[i] as number;
      const r = right[i] as number;
      expect(w + (mixed[i] as number) + r).toBeCloseTo(1, 12);
      // equal-size groups with 0/1 rewards: a member of a constant group has advantage 0, a member of a
      // mixed group never does, so the trajectory fraction equals the constant-group fraction
      expect(zero[i]).toBeCloseTo(w + r, 12);
    }
    // the course's story: mostly all-wrong at the start, mostly all-right at the end
    expect((wrong[0] as number) > 0.5).toBe(true);
    expect((right[149] as number) > 0.5).toBe(true);
    expect(a.curves['group_kind.singleton']).toBeUndefined();
  });

  it('training outcome fractions sum to 1 and success.train equals the success outcome', () => {
    const keys = Object.keys(a.curves).filter((k) => k.startsWith('train_outcome.'));
    expect(keys.length).toBe(6);
    for (let i = 0; i < 150; i++) {
      const total = keys.reduce((acc, k) => acc + ((a.curves[k] as number[])[i] as number), 0);
      expect(total).toBeCloseTo(1, 12);
      expect(a.curves['success.train']?.[i]).toBe(a.curves['train_outcome.success']?.[i]);
    }
  });

  it('tables: outcome rates sum to 1 before and after; learned probabilities are rows of a softmax', () => {
    const outcomes = a.tables.eval_outcomes as { before: number; after: number }[];
    expect(outcomes.length).toBe(6);
    expect(outcomes.reduce((s, r) => s + r.before, 0)).toBeCloseTo(1, 12);
    expect(outcomes.reduce((s, r) => s + r.after, 0)).toBeCloseTo(1, 12);
    const probs = a.tables.learned_probabilities as Record<string, number | string>[];
    expect(probs.length).toBe(6);
    for (const row of probs) {
      const total = (row.read as number) + (row.add as number) + (row.sub as number) + (row.submit as number);
      expect(total).toBeCloseTo(1, 12);
    }
  });

  it('declares what it does not do, and plot hints for the group kinds', () => {
    expect(a.notes?.join(' ')).toMatch(/no PPO clip.*no reference KL, no token mask/);
    expect(a.notes?.join(' ')).toMatch(/not an LLM reasoning gain/);
    expect(a.plots?.group_kind).toMatchObject({ kind: 'stacked-area', y: 'fraction of groups' });
    expect(a.plots?.success?.kind).toBe('line');
  });
});

describe('agent experiment: theory and knobs', () => {
  it('at init the measured all-wrong fraction matches (63/64)^8 (2000 groups, operands without 0)', async () => {
    const r = await run({ operand_min: 1, groups_per_update: 2000, updates: 1, eval_tasks: 1 }, 3);
    const theory = (63 / 64) ** 8;
    expect(r.metrics.all_wrong_fraction_theory_init as number).toBeCloseTo(theory, 14);
    const sd = Math.sqrt((theory * (1 - theory)) / 2000);
    expect(Math.abs((r.metrics.all_wrong_fraction_first_update as number) - theory)).toBeLessThan(4 * sd);
    expect(r.metrics.uniform_success_theory).toBe(1 / 64);
  });

  it('G = 1 with singleton=zero gives every advantage 0: the table never moves', async () => {
    const r = await run({ group_size: 1, singleton: 'zero', updates: 20 }, 1);
    expect(r.metrics.protocol_success_probability_after).toBe(1 / 64);
    expect(r.curves['grad_norm.l2']?.every((g) => g === 0)).toBe(true);
    expect(r.curves['group_kind.singleton']?.every((f) => f === 1)).toBe(true);
    expect(r.curves['zero_advantage.fraction']?.every((f) => f === 1)).toBe(true);
  });

  it('G = 1 with singleton=verl still learns (advantage r/(1+eps)); singleton=error refuses', async () => {
    const r = await run({ group_size: 1, updates: 50 }, 1);
    expect(r.metrics.protocol_success_probability_after as number).toBeGreaterThan(1 / 64);
    expect(await codeOf(run({ group_size: 1, singleton: 'error', updates: 1 }, 1))).toBe('BAD_OPTION_VALUE');
  });

  it('held-out tasks and the before-eval do not depend on the training config', async () => {
    const x = await run({ updates: 3 }, 5);
    const y = await run({ updates: 2, lr: 0.1, groups_per_update: 3 }, 5);
    expect(y.metrics.eval_success_before).toBe(x.metrics.eval_success_before);
    expect(y.tables.eval_outcomes?.map((r) => r.before)).toEqual(
      x.tables.eval_outcomes?.map((r) => r.before),
    );
  });

  it('rejects bad option values, unknown keys and an empty operand range', async () => {
    expect(await codeOf(run({ lr: -1 }, 1))).toBe('BAD_OPTION_VALUE');
    expect(await codeOf(run({ group_size: 2.5 }, 1))).toBe('BAD_OPTION_VALUE');
    expect(await codeOf(run({ bogus: 1 }, 1))).toBe('UNKNOWN_OPTION');
    expect(await codeOf(run({ operand_min: 5, operand_max: 4 }, 1))).toBe('BAD_OPTION_VALUE');
  });

  it('an lr so large that a logit overflows is an error naming lr and the update', async () => {
    // reduce=sum, lr 1e308: the first mixed group's step pushes logits past Number.MAX_VALUE.
    const p = run({ lr: 1e308, reduce: 'sum', updates: 20, eval_tasks: 10 }, 1);
    await expect(p).rejects.toMatchObject({
      code: 'NON_FINITE',
      message: expect.stringMatching(/^update \d+: lr=1e\+308 \(reduce=sum\) pushed logit \d+ to -?Infinity/),
    });
  });

  it('refuses a batch too large to hold (Node used to abort with heap out of memory), naming the options', async () => {
    const p = run({ groups_per_update: 250_000, group_size: 8, updates: 1, eval_tasks: 1 }, 1);
    await expect(p).rejects.toMatchObject({
      code: 'BAD_OPTION_VALUE',
      message: expect.stringContaining('groups_per_update x group_size = 250000 x 8 = 2000000'),
    });
    expect(() => resolveConfig(agent, ['updates=1e9'])).toThrowError(/updates/);
    expect(() => resolveConfig(agent, ['eval_tasks=1e9'])).toThrowError(/eval_tasks/);
  });

  it('every knob is settable through --set and validated there', () => {
    const cfg = resolveConfig(agent, [
      'std=unbiased',
      'singleton=zero',
      'eval=greedy',
      'lr=0.5',
      'groups_per_update=8',
      'updates=300',
    ]);
    expect(cfg).toMatchObject({ std: 'unbiased', singleton: 'zero', eval: 'greedy', lr: 0.5, updates: 300 });
    expect(() => resolveConfig(agent, ['std=sample'])).toThrowError(/std/);
    expect(() => resolveConfig(agent, ['updates=0'])).toThrowError(/updates/);
    const d = resolveConfig(agent, []);
    expect((d.groups_per_update as number) * (d.group_size as number) * (d.updates as number)).toBe(19200);
  });
});
