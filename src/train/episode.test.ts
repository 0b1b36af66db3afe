import { describe, expect, it } from 'vitest';
import { sampleTasks, type Task } from '../envs/toolArithmetic.js';
import { createLogits, logProb, rowOffset } from '../policy/tabular.js';
import { Rng } from '../random.js';
import { rolloutEpisode } from './episode.js';

/** Logits that put almost all mass on read -> matching tool -> submit. */
function expertLogits(): Float64Array {
  const z = createLogits();
  for (const kind of [0, 1] as const) {
    z[rowOffset(kind, 0) + 0] = 30; // fresh: read
    z[rowOffset(kind, 1) + (kind === 0 ? 1 : 2)] = 30; // read: matching tool
    z[rowOffset(kind, 2) + 3] = 30; // computed: submit
  }
  return z;
}

describe('rolloutEpisode', () => {
  it('an expert policy succeeds in 3 steps and records its observations and log-probs', () => {
    const z = expertLogits();
    const task: Task = { kind: 1, a: 4, b: 9 };
    const ep = rolloutEpisode(z, task, new Rng(1));
    expect(ep.outcome).toBe('success');
    expect(ep.reward).toBe(1);
    expect(ep.tool).toBe(2);
    expect(ep.coincidental).toBe(false);
    expect(ep.steps.map((s) => [s.kind, s.stage, s.action])).toEqual([
      [1, 0, 0],
      [1, 1, 2],
      [1, 2, 3],
    ]);
    for (const s of ep.steps) expect(s.logProb).toBeCloseTo(logProb(z, s.kind, s.stage, s.action), 15);
    expect(ep.steps[0]?.logProb).toBeCloseTo(-3 * Math.exp(-30), 20);
  });

  it('greedy rollout draws nothing and records log-prob 0', () => {
    const rng = new Rng(9);
    const ep = rolloutEpisode(expertLogits(), { kind: 0, a: 1, b: 2 }, rng, 'greedy');
    expect(ep.outcome).toBe('success');
    expect(ep.steps.every((s) => s.logProb === 0)).toBe(true);
    expect(rng.next()).toBe(new Rng(9).next());
  });

  it('greedy on the uniform policy picks read then read: a read_twice protocol error', () => {
    const ep = rolloutEpisode(createLogits(), { kind: 0, a: 1, b: 2 }, new Rng(1), 'greedy');
    expect(ep.outcome).toBe('read_twice');
    expect(ep.steps.length).toBe(2);
  });

  it('the uniform policy succeeds with probability 1/64 (operands without 0)', () => {
    const tasks = sampleTasks(new Rng(11), 20000, { operandMin: 1, operandMax: 99 });
    const rng = new Rng(12);
    const z = createLogits();
    let wins = 0;
    let lengthSum = 0;
    let logProbsOk = true;
    for (const t of tasks) {
      const ep = rolloutEpisode(z, t, rng);
      wins += ep.reward;
      lengthSum += ep.steps.length;
      for (const s of ep.steps) logProbsOk &&= Math.abs(s.logProb - Math.log(0.25)) < 1e-15;
    }
    expect(logProbsOk).toBe(true);
    const p = 1 / 64;
    const sd = Math.sqrt((p * (1 - p)) / tasks.length);
    expect(Math.abs(wins / tasks.length - p)).toBeLessThan(5 * sd);
    // Expected length: 1 + P(read at fresh)(1 + P(tool at read)) = 1 + 1/4 (1 + 1/2) = 1.375
    expect(Math.abs(lengthSum / tasks.length - 1.375)).toBeLessThan(0.02);
  });

  it('same rng seed gives the same episode', () => {
    const t: Task = { kind: 0, a: 3, b: 0 };
    const a = rolloutEpisode(createLogits(), t, new Rng(5));
    const b = rolloutEpisode(createLogits(), t, new Rng(5));
    expect(a).toEqual(b);
  });
});
