import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centralDifferences } from '../../test/support/finiteDifference.js';
import { isLabError } from '../core/errors.js';
import type { Action, Outcome, Stage, Task, TaskKind } from '../envs/toolArithmetic.js';
import { createLogits, logProb } from '../policy/tabular.js';
import { Rng } from '../random.js';
import type { Episode } from './episode.js';
import { rolloutEpisode } from './episode.js';
import {
  ascend,
  collectGroups,
  type GroupBatch,
  reinforceGradient,
  reinforceGroupAdvantages,
  updateDiagnostics,
} from './groupReinforce.js';

/** A hand-made episode: read -> tool -> submit on an add task with the given reward. */
function handEpisode(reward: 0 | 1): Episode {
  const task: Task = { kind: 0, a: 2, b: 3 };
  const tool: Action = reward === 1 ? 1 : 2;
  const outcome: Outcome = reward === 1 ? 'success' : 'wrong_answer';
  return {
    task,
    steps: [
      { kind: 0, stage: 0, action: 0, logProb: Math.log(0.25) },
      { kind: 0, stage: 1, action: tool, logProb: Math.log(0.25) },
      { kind: 0, stage: 2, action: 3, logProb: Math.log(0.25) },
    ],
    reward,
    outcome,
    tool,
    coincidental: false,
  };
}

/** Hand-made batch: groups all-wrong (4), all-right (4), mixed 1 of 4 right, and a singleton right. */
function handBatch(): GroupBatch {
  const rewards = [0, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 0, 1] as const;
  const index = Int32Array.from([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3]);
  return {
    episodes: rewards.map((r) => handEpisode(r)),
    rewards: Float64Array.from(rewards),
    index,
    groups: 4,
    groupSize: 4,
  };
}

describe('collectGroups', () => {
  it('samples G episodes per task, group-major, with rewards and labels aligned', () => {
    const tasks: Task[] = [
      { kind: 0, a: 1, b: 2 },
      { kind: 1, a: 5, b: 3 },
      { kind: 0, a: 4, b: 4 },
    ];
    const batch = collectGroups(createLogits(), tasks, 5, new Rng(4));
    expect(batch.episodes.length).toBe(15);
    expect(Array.from(batch.index)).toEqual([0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    batch.episodes.forEach((ep, i) => {
      expect(ep.task).toBe(tasks[Math.floor(i / 5)]);
      expect(batch.rewards[i]).toBe(ep.reward);
    });
    const again = collectGroups(createLogits(), tasks, 5, new Rng(4));
    expect(again).toEqual(batch);
  });

  it('rejects a group size below 1', () => {
    expect(() => collectGroups(createLogits(), [{ kind: 0, a: 1, b: 1 }], 0, new Rng(1))).toThrowError(
      /group_size/,
    );
  });
});

describe('reinforceGroupAdvantages (core GRPO kernel, population std)', () => {
  it('matches hand-computed advantages on all-wrong, all-right, mixed and singleton groups', () => {
    const a = reinforceGroupAdvantages(handBatch());
    // all-equal groups: exactly 0
    for (let i = 0; i < 8; i++) expect(a[i]).toBe(0);
    // mixed [1,0,0,0]: mean 1/4, population std sqrt(1/4 * 3/4) = sqrt(3)/4
    const std = Math.sqrt(3) / 4;
    expect(a[8]).toBeCloseTo(0.75 / (std + 1e-6), 12);
    for (let i = 9; i < 12; i++) expect(a[i]).toBeCloseTo(-0.25 / (std + 1e-6), 12);
    // singleton, verl rule: mean 0, std 1 -> r / float32(1 + 1e-6)
    expect(a[12]).toBeCloseTo(1 / Math.fround(1 + 1e-6), 15);
  });

  it('unbiased std divides by sqrt(n-1) instead of sqrt(n); none only centres; singleton zero gives 0', () => {
    const unbiased = reinforceGroupAdvantages(handBatch(), { std: 'unbiased' });
    expect(unbiased[8]).toBeCloseTo(0.75 / (Math.sqrt(0.75 / 3) + 1e-6), 12);
    const none = reinforceGroupAdvantages(handBatch(), { std: 'none' });
    expect(none[8]).toBeCloseTo(0.75, 15);
    expect(none[9]).toBeCloseTo(-0.25, 15);
    expect(reinforceGroupAdvantages(handBatch(), { singleton: 'zero' })[12]).toBe(0);
  });

  it("singleton 'error' refuses a group of one", () => {
    try {
      reinforceGroupAdvantages(handBatch(), { singleton: 'error' });
      expect.unreachable();
    } catch (e) {
      expect(isLabError(e) && e.code).toBe('SINGLETON_GROUP');
    }
  });
});

describe('updateDiagnostics', () => {
  it('counts group kinds and zero advantages on the hand-made batch', () => {
    const batch = handBatch();
    const d = updateDiagnostics(batch, reinforceGroupAdvantages(batch));
    expect(d).toEqual({
      allWrong: 1 / 4,
      allRight: 1 / 4,
      mixed: 1 / 4,
      singleton: 1 / 4,
      zeroAdvantage: 8 / 13, // the 4 + 4 members of the two constant groups
      success: 6 / 13,
    });
    const dz = updateDiagnostics(batch, reinforceGroupAdvantages(batch, { singleton: 'zero' }));
    expect(dz.zeroAdvantage).toBe(9 / 13);
  });
});

/** J(z) = c * sum_i A_i * sum_t log pi_z(a_it | s_it), evaluated independently of the gradient code. */
function objective(z: Float64Array, episodes: Episode[], adv: number[], c: number): number {
  let j = 0;
  episodes.forEach((ep, i) => {
    for (const s of ep.steps)
      j += c * (adv[i] as number) * logProb(z, s.kind as TaskKind, s.stage as Stage, s.action);
  });
  return j;
}

describe('reinforceGradient', () => {
  it('equals central finite differences of J for random tables, episodes and advantages (mean and sum)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { minLength: 24, maxLength: 24 }),
        fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.constantFrom('mean' as const, 'sum' as const),
        (values, adv, seed, reduce) => {
          const z = Float64Array.from(values);
          const rng = new Rng(seed);
          const episodes = adv.map(() =>
            rolloutEpisode(z, { kind: rng.int(0, 1) as TaskKind, a: rng.int(0, 9), b: rng.int(0, 9) }, rng),
          );
          const grad = reinforceGradient(z, episodes, adv, reduce);
          const c = reduce === 'mean' ? 1 / adv.length : 1;
          const fd = centralDifferences(() => objective(z, episodes, adv, c), z, 1e-5);
          for (let i = 0; i < 24; i++)
            expect(Math.abs((grad[i] as number) - (fd[i] as number))).toBeLessThan(1e-6);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('is exactly zero when every group is constant (no signal from all-wrong / all-right groups)', () => {
    const batch = handBatch();
    const episodes = batch.episodes.slice(0, 8);
    const adv = reinforceGroupAdvantages({
      ...batch,
      episodes,
      rewards: batch.rewards.slice(0, 8),
      index: batch.index.slice(0, 8),
    });
    const grad = reinforceGradient(createLogits(), episodes, adv);
    expect(Array.from(grad).every((g) => g === 0)).toBe(true);
  });

  it('a small ascent step increases J (the step goes uphill)', () => {
    const batch = handBatch();
    const adv = Array.from(reinforceGroupAdvantages(batch));
    const z = createLogits();
    const before = objective(z, batch.episodes, adv, 1 / adv.length);
    const grad = reinforceGradient(z, batch.episodes, adv);
    const norm = ascend(z, grad, 1e-3);
    expect(norm).toBeCloseTo(Math.hypot(...grad), 15);
    expect(objective(z, batch.episodes, adv, 1 / adv.length)).toBeGreaterThan(before);
    // at the uniform table the mixed group's success pushes the add tool up at (add, read)
    expect(z[5]).toBeGreaterThan(0);
    expect(z[6]).toBeLessThan(0);
  });

  it('rejects mismatched lengths and non-finite advantages, naming the row', () => {
    const batch = handBatch();
    expect(() => reinforceGradient(createLogits(), batch.episodes, [1, 2])).toThrowError(/one per episode/);
    const adv = new Float64Array(13);
    adv[4] = Number.NaN;
    expect(() => reinforceGradient(createLogits(), batch.episodes, adv)).toThrowError(/row 4/);
  });

  it('ascend refuses a gradient of the wrong length and leaves the table untouched', () => {
    const z = createLogits();
    expect(() => ascend(z, [1, 2, 3], 1)).toThrowError(/grad: expected 24 entries, got 3/);
    expect(Array.from(z).every((v) => v === 0)).toBe(true);
  });
});
