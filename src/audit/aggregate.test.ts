import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectedAudit, type PlainRow } from '../../test/support/auditExpected.js';
import { aggLossDenominator, LOSS_AGG_MODES } from '../core/aggLoss.js';
import { AuditAggregator, type AuditRow, tokenDenominators, zeroVariance } from './aggregate.js';

/** Dense ids as the reader assigns them: gid by (step, group), tid by task; rows ordered by gid. */
function toAuditRows(rows: readonly PlainRow[]): AuditRow[] {
  const groupKeys = [...new Set(rows.map((r) => JSON.stringify([r.step, r.group])))].sort();
  const tasks = [...new Set(rows.map((r) => r.task))].sort();
  return rows
    .map((r) => ({
      gid: groupKeys.indexOf(JSON.stringify([r.step, r.group])),
      tid: tasks.indexOf(r.task),
      step: r.step,
      reward: r.reward,
      length: r.action_tokens === undefined ? null : (r.action_tokens ?? 0) + (r.env_tokens ?? 0),
      action: r.action_tokens ?? null,
      env: r.env_tokens ?? null,
      truncated: r.truncated ?? null,
      advantage: null,
    }))
    .sort((a, b) => a.gid - b.gid);
}

function aggregate(rows: readonly PlainRow[], options = {}) {
  const agg = new AuditAggregator(options);
  for (const r of toAuditRows(rows)) agg.push(r);
  return agg.finish();
}

const rowArb = fc.record({
  step: fc.integer({ min: 1, max: 3 }),
  group: fc.constantFrom('g1', 'g2', 'g3', 'g4'),
  task: fc.constantFrom('t1', 't2', 't3'),
  reward: fc.constantFrom(0, 0.5, 1, -1),
  action_tokens: fc.integer({ min: 0, max: 9 }),
  env_tokens: fc.integer({ min: 0, max: 5 }),
});

describe('AuditAggregator', () => {
  it('classifies a hand-made batch: one group of each kind', () => {
    const rows: PlainRow[] = [
      { step: 1, group: 'wrong', task: 'a', reward: 0 },
      { step: 1, group: 'wrong', task: 'a', reward: 0 },
      { step: 1, group: 'right', task: 'b', reward: 1 },
      { step: 1, group: 'right', task: 'b', reward: 1 },
      { step: 1, group: 'right', task: 'b', reward: 1 },
      { step: 1, group: 'mixed', task: 'c', reward: 1 },
      { step: 1, group: 'mixed', task: 'c', reward: 0 },
      { step: 1, group: 'half', task: 'd', reward: 0.5 },
      { step: 1, group: 'half', task: 'd', reward: 0.5 },
      { step: 2, group: 'wrong', task: 'a', reward: 1 },
    ];
    const a = aggregate(rows);
    expect(a.kinds).toEqual({
      groups: 5,
      all_wrong: 1,
      all_right: 1,
      all_equal_other: 1,
      mixed: 1,
      singleton: 1,
    });
    expect(zeroVariance(a.kinds)).toBe(3);
    // step 2's "wrong" is a different group (groups are (step, label)), a singleton.
    expect(a.steps.map((s) => [s.step, s.groups, s.singleton])).toEqual([
      [1, 4, 0],
      [2, 1, 1],
    ]);
    const taskA = a.tasks.find((t) => t.tid === 0);
    expect(taskA).toMatchObject({ groups: 2, samples: 3, all_wrong: 1, singleton: 1, wastedSamples: 2 });
    expect(a.groupSizes).toEqual(
      new Map([
        [1, 1],
        [2, 3],
        [3, 1],
      ]),
    );
  });

  it('flags a group label shared by two tasks', () => {
    const a = aggregate([
      { step: 1, group: 'x', task: 'easy', reward: 1 },
      { step: 1, group: 'x', task: 'hard', reward: 0 },
      { step: 1, group: 'y', task: 'hard', reward: 0 },
      { step: 1, group: 'y', task: 'hard', reward: 0 },
    ]);
    expect(a.mixedTaskGroups).toBe(1);
    expect(a.tasks.map((t) => t.groups)).toEqual([1, 2]);
  });

  it('token denominators equal aggLossDenominator on the corresponding [B,T] mask', () => {
    const rows: PlainRow[] = [
      { step: 1, group: 'g', task: 't', reward: 1, action_tokens: 3, env_tokens: 2 },
      { step: 1, group: 'g', task: 't', reward: 1, action_tokens: 0, env_tokens: 4 },
      { step: 1, group: 'h', task: 'u', reward: 0, action_tokens: 6, env_tokens: 0 },
      { step: 1, group: 'h', task: 'u', reward: 1, action_tokens: 1, env_tokens: 1 },
    ];
    const a = aggregate(rows);
    const T = 6; // the longest response: 6 tokens
    const mask = new Float32Array(rows.length * T);
    rows.forEach((r, b) => {
      // action tokens first, then env tokens (mask 0), then padding (mask 0)
      for (let t = 0; t < (r.action_tokens as number); t++) mask[b * T + t] = 1;
    });
    const d = tokenDenominators(a.tokens as NonNullable<typeof a.tokens>);
    for (const mode of LOSS_AGG_MODES) {
      expect(d[mode]).toBe(aggLossDenominator(mask, { rows: rows.length, cols: T }, mode).denominator);
    }
    // group g is all-right: its 3 action tokens have advantage 0 but sit in the token-mean denominator
    expect(a.tokens?.zeroAdvantageAction).toBe(3);
  });

  it('matches an independent groupby on random batches', () => {
    fc.assert(
      fc.property(fc.array(rowArb, { minLength: 1, maxLength: 60 }), (rows) => {
        const a = aggregate(rows);
        const e = expectedAudit(rows);
        expect(a.rows).toBe(e.rows);
        expect(a.kinds.groups).toBe(e.groups);
        expect(a.kinds.all_wrong).toBe(e.all_wrong_groups);
        expect(a.kinds.all_right).toBe(e.all_right_groups);
        expect(a.kinds.singleton).toBe(e.singleton_groups);
        expect(zeroVariance(a.kinds)).toBe(e.zero_variance_groups);
        expect(tokenDenominators(a.tokens as NonNullable<typeof a.tokens>)).toEqual(e.denominators);
        expect(a.tokens?.zeroAdvantageAction).toBe(e.zero_advantage_action_tokens);
        const tasks = [...new Set(rows.map((r) => r.task))].sort();
        for (const t of a.tasks) {
          const exp = e.per_task.get(tasks[t.tid] as string);
          expect(t.groups).toBe(exp?.groups);
          expect(t.samples).toBe(exp?.samples);
          expect(zeroVariance(t)).toBe(exp?.zero_variance_groups);
          expect(t.rewardSum / t.samples).toBeCloseTo(exp?.mean_reward as number, 12);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('recomputes TRL advantages and counts logged values that differ', () => {
    // group of 3 rewards [1, 0, 0]: mean 1/3, unbiased std sqrt(1/3); TRL: (r - mean)/(std + 1e-4)
    const std = Math.sqrt(1 / 3);
    const good = [(1 - 1 / 3) / (std + 1e-4), (0 - 1 / 3) / (std + 1e-4)];
    const agg = new AuditAggregator({ recompute: 'trl' });
    const base = { tid: 0, step: 1, length: null, action: null, env: null, truncated: null };
    agg.push({ ...base, gid: 0, reward: 1, advantage: good[0] as number });
    agg.push({ ...base, gid: 0, reward: 0, advantage: good[1] as number });
    agg.push({ ...base, gid: 0, reward: 0, advantage: 0.5 }); // logged with another convention
    agg.push({ ...base, gid: 1, reward: 1, advantage: 1 }); // singleton: TRL refuses groups of one
    const c = agg.finish().advantageCheck;
    expect(c).toMatchObject({ compared: 3, differing: 1, skippedSingletonRows: 1 });
    expect(c?.maxAbsDiff).toBeCloseTo(0.5 - (0 - 1 / 3) / (std + 1e-4), 9);
  });

  it('refuses rows of one group that arrive in two runs, and fail >= pass', () => {
    const agg = new AuditAggregator();
    const base = { tid: 0, step: 1, length: null, action: null, env: null, truncated: null, advantage: null };
    agg.push({ ...base, gid: 0, reward: 1 });
    agg.push({ ...base, gid: 1, reward: 1 });
    expect(() => agg.push({ ...base, gid: 0, reward: 1 })).toThrow(/two separate runs/);
    expect(() => new AuditAggregator({ failValue: 1, passValue: 1 })).toThrow(/fail value < pass value/);
  });
});
