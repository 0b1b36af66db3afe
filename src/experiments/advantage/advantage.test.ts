import { beforeAll, describe, expect, it } from 'vitest';
import { expectLabError } from '../../../test/support/labError.js';
import { resolveConfig, runExperiment } from '../options.js';
import type { JsonValue, RunRecord } from '../types.js';
import { advantage } from './advantage.js';
import { EXERCISE_BATCH, layoutBatch } from './exerciseBatch.js';
import { closedFormAdvantage } from './groupComparison.js';

function run(seed = 7, sets: string[] = []): RunRecord {
  const config = resolveConfig(advantage, sets);
  return advantage.run(config, { seed }) as RunRecord;
}

type Row = Record<string, JsonValue>;

/** Independent closed form from the rewards themselves: mean and std by plain loops. */
function handAdvantages(rewards: number[], std: 'unbiased' | 'population', eps: number): number[] {
  const n = rewards.length;
  if (n === 1) return std === 'unbiased' ? [(rewards[0] as number) / Math.fround(1 + eps)] : [0];
  let mean = 0;
  for (const r of rewards) mean += r / n;
  let ss = 0;
  for (const r of rewards) ss += (r - mean) ** 2;
  const sd = Math.sqrt(ss / (std === 'unbiased' ? n - 1 : n));
  return rewards.map((r) => (r - mean) / (sd + eps));
}

/** Model and tool tokens per trajectory, counted from the turns. */
function tokenCounts() {
  return EXERCISE_BATCH.map((t) => {
    let m = 0;
    let e = 0;
    for (const turn of t.turns) {
      if ('m' in turn) m += turn.m;
      else e += turn.e;
    }
    return { m, e };
  });
}

describe('closedFormAdvantage', () => {
  it('gives the hand-computed numbers for every group kind', () => {
    // 2 of 4 right: std = sqrt(2*2/(4*3)) = sqrt(1/3) = 0.5773502691896258
    const mixed = closedFormAdvantage(2, 4, 'verl', 1e-6);
    expect(mixed.one).toBeCloseTo(0.5 / (0.5773502691896258 + 1e-6), 14);
    expect(mixed.zero).toBeCloseTo(-0.5 / (0.5773502691896258 + 1e-6), 14);
    expect(mixed.formula).toContain('sqrt(2·2/(4·3)) = 0.57735');
    // teaching: population std sqrt(4)/4 = 0.5 -> 0.5/0.500001
    expect(closedFormAdvantage(2, 4, 'teaching', 1e-6).one).toBeCloseTo(0.5 / 0.500001, 14);
    // 2 of 3: mean 2/3, unbiased std sqrt(2/6) = 0.5773502691896258
    expect(closedFormAdvantage(2, 3, 'verl', 1e-6).zero).toBeCloseTo(
      -(2 / 3) / (0.5773502691896258 + 1e-6),
      14,
    );
    expect(closedFormAdvantage(0, 4, 'verl', 1e-6)).toMatchObject({ one: 0, zero: 0 });
    expect(closedFormAdvantage(4, 4, 'teaching', 1e-6)).toMatchObject({ one: 0, zero: 0 });
    // a group of one: verl 1/(1 + 1e-6) with float32(1 + 1e-6) = 1 + 2^-20 (= 1.00000095367431640625)
    expect(closedFormAdvantage(1, 1, 'verl', 1e-6).one).toBe(1 / (1 + 2 ** -20));
    expect(closedFormAdvantage(1, 1, 'teaching', 1e-6).one).toBe(0);
    expect(() => closedFormAdvantage(3, 2, 'verl', 1e-6)).toThrow(/0 <= k <= n/);
  });
});

describe('layoutBatch', () => {
  it('puts model tokens, tool tokens and padding where the turns say, the reward on the last token', () => {
    const l = layoutBatch([
      { task: 't', group: 'g', reward: 1, turns: [{ m: 2 }, { e: 1 }, { m: 1 }] },
      { task: 't', group: 'g', reward: 0, turns: [{ m: 1 }] },
    ]);
    expect([l.rows, l.cols]).toEqual([2, 4]);
    expect([...l.actionMask]).toEqual([1, 1, 0, 1, 1, 0, 0, 0]);
    expect([...l.envMask]).toEqual([0, 0, 1, 0, 0, 0, 0, 0]);
    expect([...l.tokenRewards]).toEqual([0, 0, 0, 1, 0, 0, 0, 0]);
  });
});

describe('advantage experiment', () => {
  let rec: RunRecord;
  let groups: Row[];
  beforeAll(() => {
    rec = run();
    groups = rec.tables.groups as Row[];
  });

  it('covers all-wrong, all-right, mixed and singleton groups', () => {
    const kinds = new Set(groups.filter((g) => g.batch === 'exercise').map((g) => g.kind));
    expect(kinds).toEqual(new Set(['all_wrong', 'all_right', 'mixed', 'singleton']));
  });

  it("verl's kernel and the teaching preset match the closed form computed here", () => {
    for (const g of groups) {
      const rewards = g.rewards as number[];
      const verl = handAdvantages(rewards, 'unbiased', 1e-6);
      const teaching = handAdvantages(rewards, 'population', 1e-6);
      (g.verl as number[]).forEach((v, j) => {
        expect(Math.abs(v - (verl[j] as number))).toBeLessThan(1e-6); // float32 kernel
      });
      (g.predicted as number[]).forEach((v, j) => {
        expect(v).toBeCloseTo(verl[j] as number, 9);
      });
      (g.teaching as number[]).forEach((v, j) => {
        expect(v).toBeCloseTo(teaching[j] as number, 9);
      });
    }
    expect(rec.metrics.max_abs_verl_minus_predicted as number).toBeLessThan(1e-6);
  });

  it('shows the singleton differences: verl ~1, teaching and nemo-rl 0, trl and openrlhf refuse', () => {
    const single = groups.find((g) => g.kind === 'singleton') as Row;
    expect((single.verl as number[])[0]).toBeCloseTo(1 / (1 + 2 ** -20), 9);
    expect(single.teaching).toEqual([0]);
    expect(single['nemo-rl']).toEqual([0]);
    expect(single.trl).toBeNull();
    expect(single.openrlhf).toBeNull();
    expect((single.differences as string[]).length).toBe(4);
    const allRight = groups.find((g) => g.kind === 'all_right' && g.batch === 'exercise') as Row;
    expect(allRight.differences).toEqual(['all conventions agree: r − mean(r) = 0 for every member']);
  });

  it('a shared group label turns two zero-advantage groups into +-0.935', () => {
    const mis = rec.tables.misindexed as Row[];
    expect(mis.length).toBe(8);
    // one group of 4 zeros and 4 ones: mean 0.5, unbiased std sqrt(8*0.25/7) = sqrt(2/7)
    const expected = 0.5 / (Math.sqrt(2 / 7) + 1e-6);
    for (const r of mis) {
      expect(r.advantage_correct).toBe(0);
      expect(
        Math.abs((r.advantage_misindexed as number) - (r.reward === 1 ? expected : -expected)),
      ).toBeLessThan(1e-6);
    }
    expect(rec.metrics.misindexed_rows_zero_to_nonzero).toBe(8);
    const merged = groups.find((g) => g.batch === 'mis_indexed') as Row;
    expect(merged.tasks).toEqual(['add 17+25', 'sub 40-13']);
  });

  it('mask flip: denominators and on-policy losses match a hand computation', () => {
    const onPolicy = run(7, ['ratio_noise=0']); // ratio 1 everywhere: per-token loss = -A
    const counts = tokenCounts();
    const model = counts.reduce((s, c) => s + c.m, 0);
    const tool = counts.reduce((s, c) => s + c.e, 0);
    const T = Math.max(...counts.map((c) => c.m + c.e));
    const B = counts.length;
    // A per row from the closed form of its group, grouping the batch by its labels here
    const adv: number[] = new Array(B).fill(0);
    for (const label of new Set(EXERCISE_BATCH.map((t) => t.group))) {
      const rows = EXERCISE_BATCH.flatMap((t, b) => (t.group === label ? [b] : []));
      const hand = handAdvantages(
        rows.map((b) => (EXERCISE_BATCH[b] as (typeof EXERCISE_BATCH)[number]).reward),
        'unbiased',
        1e-6,
      );
      rows.forEach((b, j) => {
        adv[b] = hand[j] as number;
      });
    }
    const sumA = (w: (c: { m: number; e: number }) => number) =>
      counts.reduce((s, c, b) => s + (adv[b] as number) * w(c), 0);
    const byMode = new Map((onPolicy.tables.mask_flip as Row[]).map((r) => [r.mode as string, r]));
    const tm = byMode.get('token-mean') as Row;
    expect(tm.denominator_correct_mask).toBe(model);
    expect(tm.denominator_flipped_mask).toBe(model + tool);
    expect(tm.loss_correct_mask as number).toBeCloseTo(-sumA((c) => c.m) / model, 6);
    expect(tm.loss_flipped_mask as number).toBeCloseTo(-sumA((c) => c.m + c.e) / (model + tool), 6);
    const sts = byMode.get('seq-mean-token-sum') as Row;
    expect([sts.denominator_correct_mask, sts.denominator_flipped_mask]).toEqual([B, B]);
    expect(sts.loss_flipped_mask as number).toBeCloseTo(-sumA((c) => c.m + c.e) / B, 6);
    const stm = byMode.get('seq-mean-token-mean') as Row;
    // every token of a row has the same -A, so the per-row token mean is -A whatever the mask
    expect(stm.loss_correct_mask as number).toBeCloseTo(stm.loss_flipped_mask as number, 6);
    const norm = byMode.get('seq-mean-token-sum-norm') as Row;
    expect([norm.denominator_correct_mask, norm.denominator_flipped_mask]).toEqual([T, T]);
    expect(norm.loss_flipped_mask as number).toBeCloseTo(-sumA((c) => c.m + c.e) / T, 6);
    // tool tokens get gradient only with the flipped mask, exactly those of rows with A != 0
    const expectedNew = counts.reduce((s, c, b) => s + ((adv[b] as number) !== 0 ? c.e : 0), 0);
    expect(onPolicy.metrics.tool_tokens_with_gradient_correct_mask).toBe(0);
    expect(onPolicy.metrics.tool_tokens_newly_with_gradient).toBe(expectedNew);
    expect(expectedNew).toBeGreaterThan(0);
  });

  it('per task and per batch accounting', () => {
    const perTask = (rec.tables.per_task as Row[]).filter((r) => r.batch === 'exercise');
    const byTask = new Map(perTask.map((r) => [r.task as string, r]));
    expect(byTask.get('add 17+25')).toMatchObject({
      groups: 2,
      all_wrong_groups: 1,
      zero_variance_groups: 1,
      zero_variance_fraction: 0.5,
    });
    expect(byTask.get('sub 40-13')).toMatchObject({
      groups: 1,
      all_right_groups: 1,
      zero_variance_fraction: 1,
    });
    expect(byTask.get('div 84/4')).toMatchObject({ singleton_groups: 1, zero_variance_groups: 0 });
    const counts = tokenCounts();
    const T = Math.max(...counts.map((c) => c.m + c.e));
    expect(rec.metrics.action_tokens).toBe(counts.reduce((s, c) => s + c.m, 0));
    expect(rec.metrics.env_tokens).toBe(counts.reduce((s, c) => s + c.e, 0));
    expect(rec.metrics.padding_tokens).toBe(counts.reduce((s, c) => s + T - c.m - c.e, 0));
    // zero advantage: the all-wrong u1 and the all-right u2 rows (the first 8)
    expect(rec.metrics.zero_advantage_tokens_in_denominator).toBe(
      counts.slice(0, 8).reduce((s, c) => s + c.m, 0),
    );
    expect(rec.metrics.denominators).toEqual({
      'token-mean': rec.metrics.action_tokens,
      'seq-mean-token-sum': 20,
      'seq-mean-token-mean': 20,
      'seq-mean-token-sum-norm': T,
    });
  });

  it('is deterministic for a seed, and the seed only moves the log-probs', () => {
    const strip = (r: RunRecord) => JSON.stringify({ ...r, timing: null });
    expect(strip(run(7))).toBe(strip(run(7)));
    const other = run(8);
    expect(other.tables.groups).toEqual(rec.tables.groups);
    expect(other.tables.mask_flip).not.toEqual(rec.tables.mask_flip);
  });
});

describe('advantage.run called without the CLI', () => {
  it('refuses an invalid value, naming the option', () => {
    expectLabError(
      () => runExperiment(advantage, { epsilon: -1 }, { seed: 7 }),
      'BAD_OPTION_VALUE',
      'option epsilon=',
    );
  });

  it('refuses an unknown key', () => {
    expectLabError(() => runExperiment(advantage, { eps: 0.1 }, { seed: 7 }), 'UNKNOWN_OPTION', "'eps'");
  });

  it('fills the defaults of a partial config (epsilon 1e-6, clip_ratio 0.2, ratio_noise 0.3)', () => {
    const rec = runExperiment(advantage, { clip_ratio: 0.2 }, { seed: 7 }) as RunRecord;
    expect(rec.config).toEqual({ epsilon: 1e-6, clip_ratio: 0.2, ratio_noise: 0.3 });
  });
});
