import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedAudit, type PlainRow } from '../../test/support/auditExpected.js';
import { aggLossDenominator, LOSS_AGG_MODES } from '../core/aggLoss.js';
import type { JsonValue } from '../experiments/types.js';
import { tokenDenominators } from './aggregate.js';
import { runAudit } from './audit.js';

let dir: string;
let count = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labs-groupstats-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Audits plain rows written as a generic JSONL file (the SQL aggregation end to end). */
async function audit(rows: readonly PlainRow[]) {
  const file = join(dir, `rows-${count++}.jsonl`);
  await writeFile(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return runAudit(file, { preset: 'generic' });
}

type Row = Record<string, JsonValue>;

describe('groupStats (the SQL aggregation)', () => {
  it('classifies a hand-made batch: one group of each kind', async () => {
    const rec = await audit([
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
    ]);
    expect(rec.metrics).toMatchObject({
      groups: 5,
      all_wrong_groups: 1,
      all_right_groups: 1,
      all_equal_other_groups: 1,
      mixed_groups: 1,
      singleton_groups: 1,
      zero_variance_groups: 3,
    });
    // step 2's "wrong" is a different group (groups are (step, label)), a singleton
    expect((rec.tables.steps as Row[]).map((s) => [s.step, s.groups, s.singleton_groups])).toEqual([
      [1, 4, 0],
      [2, 1, 1],
    ]);
    const taskA = (rec.tables.per_task as Row[]).find((t) => t.task === 'a');
    expect(taskA).toMatchObject({
      groups: 2,
      samples: 3,
      all_wrong_groups: 1,
      singleton_groups: 1,
      wasted_samples: 2,
    });
    expect(rec.tables.group_sizes).toEqual([
      { size: 1, groups: 1 },
      { size: 2, groups: 3 },
      { size: 3, groups: 1 },
    ]);
  });

  it('flags a group label shared by two tasks', async () => {
    const rec = await audit([
      { step: 1, group: 'x', task: 'easy', reward: 1 },
      { step: 1, group: 'x', task: 'hard', reward: 0 },
      { step: 1, group: 'y', task: 'hard', reward: 0 },
      { step: 1, group: 'y', task: 'hard', reward: 0 },
    ]);
    expect(rec.metrics.mixed_task_groups).toBe(1);
    const groups = Object.fromEntries((rec.tables.per_task as Row[]).map((t) => [t.task, t.groups]));
    expect(groups).toEqual({ easy: 1, hard: 2 });
  });

  it('token denominators equal aggLossDenominator on the corresponding [B,T] mask', async () => {
    const rows: PlainRow[] = [
      { step: 1, group: 'g', task: 't', reward: 1, action_tokens: 3, env_tokens: 2 },
      { step: 1, group: 'g', task: 't', reward: 1, action_tokens: 0, env_tokens: 4 },
      { step: 1, group: 'h', task: 'u', reward: 0, action_tokens: 6, env_tokens: 0 },
      { step: 1, group: 'h', task: 'u', reward: 1, action_tokens: 1, env_tokens: 1 },
    ];
    const rec = await audit(rows);
    const T = 6; // the longest response: 6 tokens
    const mask = new Float32Array(rows.length * T);
    rows.forEach((r, b) => {
      for (let t = 0; t < (r.action_tokens as number); t++) mask[b * T + t] = 1;
    });
    const d = rec.metrics.denominators as Record<string, number>;
    for (const mode of LOSS_AGG_MODES) {
      expect(d[mode]).toBe(aggLossDenominator(mask, { rows: rows.length, cols: T }, mode).denominator);
    }
    // group g is all-right: its 3 action tokens have advantage 0 but sit in the token-mean denominator
    expect(rec.metrics.zero_advantage_action_tokens).toBe(3);
    expect(
      tokenDenominators({
        rows: 4,
        action: 10,
        env: 7,
        rowsWithAction: 3,
        maxLength: 6,
        zeroAdvantageAction: 3,
      }),
    ).toEqual(d);
  });

  it('matches an independent groupby on random batches', async () => {
    const rowArb = fc.record({
      step: fc.integer({ min: 1, max: 3 }),
      group: fc.constantFrom('g1', 'g2', 'g3', 'g4'),
      task: fc.constantFrom('t1', 't2', 't3'),
      reward: fc.constantFrom(0, 0.5, 1, -1),
      action_tokens: fc.integer({ min: 0, max: 9 }),
      env_tokens: fc.integer({ min: 0, max: 5 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(rowArb, { minLength: 1, maxLength: 60 }), async (rows) => {
        const rec = await audit(rows);
        const e = expectedAudit(rows);
        expect(rec.metrics).toMatchObject({
          rows: e.rows,
          groups: e.groups,
          all_wrong_groups: e.all_wrong_groups,
          all_right_groups: e.all_right_groups,
          singleton_groups: e.singleton_groups,
          zero_variance_groups: e.zero_variance_groups,
          zero_advantage_action_tokens: e.zero_advantage_action_tokens,
        });
        expect(rec.metrics.denominators).toEqual(e.denominators);
        for (const t of rec.tables.per_task as Row[]) {
          const exp = e.per_task.get(t.task as string);
          expect(t.groups).toBe(exp?.groups);
          expect(t.samples).toBe(exp?.samples);
          expect(t.zero_variance_groups).toBe(exp?.zero_variance_groups);
          expect(t.mean_reward as number).toBeCloseTo(exp?.mean_reward as number, 12);
        }
      }),
      { numRuns: 12 },
    );
  });
});
