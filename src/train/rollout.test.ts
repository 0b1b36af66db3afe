import { describe, expect, it } from 'vitest';
import {
  contextCount,
  runTokenEpisode,
  sampleTokenTask,
  type TokenEpisode,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { Rng } from '../random.js';
import {
  groupLabels,
  groupLabelsOfSizes,
  rolloutGroups,
  sampleTaskBatch,
  tokenEnvRollout,
} from './rollout.js';

describe('rolloutGroups', () => {
  it('runs G episodes per task, task-major, in row order', () => {
    const calls: string[] = [];
    const rows = rolloutGroups(['a', 'b', 'c'], 2, (task, k) => {
      calls.push(`${task}${k}`);
      return `${task}:${calls.length}`;
    });
    expect(rows).toEqual(['a:1', 'a:2', 'b:3', 'b:4', 'c:5', 'c:6']);
    expect(calls).toEqual(['a0', 'a0', 'b1', 'b1', 'c2', 'c2']);
    expect(rolloutGroups([], 4, () => 1)).toEqual([]);
    expect(rolloutGroups([1, 2], 0, () => 1)).toEqual([]);
  });

  it('takes a group size per task, still task-major, and labels those rows by task', () => {
    const calls: number[] = [];
    const rows = rolloutGroups(['a', 'b', 'c'], [1, 3, 0], (task, k) => {
      calls.push(k);
      return task;
    });
    expect(rows).toEqual(['a', 'b', 'b', 'b']);
    expect(calls).toEqual([0, 1, 1, 1]);
    expect(Array.from(groupLabelsOfSizes([1, 3, 0, 2]))).toEqual([0, 1, 1, 1, 3, 3]);
    // equal sizes give the same rows and labels as one G
    expect(rolloutGroups([1, 2], [2, 2], (t) => t)).toEqual(rolloutGroups([1, 2], 2, (t) => t));
    expect(Array.from(groupLabelsOfSizes([2, 2]))).toEqual(groupLabels(4, 2));
  });

  it('labels rows by their task: floor(row / G)', () => {
    expect(groupLabels(7, 3)).toEqual([0, 0, 0, 1, 1, 1, 2]);
    expect(groupLabels(4, 1)).toEqual([0, 1, 2, 3]);
  });

  it('draws the K tasks first, one after another, from the task stream', () => {
    const a = sampleTaskBatch(new Rng(5).fork('t'), 6, (r) => sampleTokenTask(r, 9));
    const r = new Rng(5).fork('t');
    const b = [0, 1, 2, 3, 4, 5].map(() => sampleTokenTask(r, 9));
    expect(a).toEqual(b);
  });
});

describe('tokenEnvRollout', () => {
  it('equals the hand-written K x G loop draw for draw (same streams, same episodes)', () => {
    const policy = new ContextPolicy(contextCount(3), VOCAB_SIZE);
    const rng = new Rng(11);
    for (let i = 0; i < policy.logits.length; i++) policy.logits[i] = rng.next() * 2 - 1;
    const probs = policy.probabilities();
    const tasks = sampleTaskBatch(new Rng(3), 4, (r) => sampleTokenTask(r, 20));
    const env = { budget: 24, toolErrorRate: 0.3, thinkBuckets: 3 };
    const got = tokenEnvRollout(probs, tasks, 3, new Rng(1).fork('pick'), new Rng(1).fork('noise'), env);
    const pick = new Rng(1).fork('pick');
    const noise = new Rng(1).fork('noise');
    const want: TokenEpisode[] = [];
    for (const task of tasks)
      for (let g = 0; g < 3; g++)
        want.push(
          runTokenEpisode(task, (ctx) => ContextPolicy.sample(probs, VOCAB_SIZE, ctx, pick), noise, env),
        );
    expect(got).toEqual(want);
    expect(got).toHaveLength(12);
    // a group's samples differ (the sampling stream moves on), so the loop did not reuse draws
    expect(new Set(got.map((e) => e.tokens.join(','))).size).toBeGreaterThan(1);
  });
});
