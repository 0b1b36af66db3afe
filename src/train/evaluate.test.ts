import { describe, expect, it } from 'vitest';
import { sampleTasks, type Task } from '../envs/toolArithmetic.js';
import { createLogits, rowOffset } from '../policy/tabular.js';
import { Rng } from '../random.js';
import { evaluatePolicy, protocolSuccessProbability } from './evaluate.js';

describe('evaluatePolicy', () => {
  it('uniform policy: outcome rates match the hand-derived protocol-error probabilities', () => {
    // fresh: read 1/4, add/sub 1/2 -> compute_before_read, submit 1/4 -> submit_without_result
    // read (1/4): read 1/4 -> read_twice, submit 1/4 -> submit_without_result, tool 1/2
    // computed (1/8): read 1/4 -> read_twice, add/sub 1/2 -> compute_twice, submit 1/4 (right tool half the time)
    const want = {
      compute_before_read: 1 / 2,
      submit_without_result: 1 / 4 + 1 / 16,
      read_twice: 1 / 16 + 1 / 32,
      compute_twice: 1 / 16,
      success: 1 / 64,
      wrong_answer: 1 / 64,
    };
    const n = 16000;
    const tasks = sampleTasks(new Rng(21), n, { operandMin: 1, operandMax: 50 });
    const r = evaluatePolicy(createLogits(), tasks, new Rng(22));
    expect(Object.values(r.counts).reduce((a, b) => a + b, 0)).toBe(n);
    for (const [k, p] of Object.entries(want)) {
      const sd = Math.sqrt((p * (1 - p)) / n);
      expect(Math.abs(r.counts[k as keyof typeof want] / n - p)).toBeLessThan(5 * sd);
    }
    expect(r.success).toBe(r.counts.success / n);
    expect(r.coincidental).toBe(0);
  });

  it('counts successes from the wrong tool on b = 0 tasks as coincidental', () => {
    const z = createLogits();
    for (const kind of [0, 1] as const) {
      z[rowOffset(kind, 0) + 0] = 40;
      z[rowOffset(kind, 1) + (kind === 0 ? 2 : 1)] = 40; // always the WRONG tool
      z[rowOffset(kind, 2) + 3] = 40;
    }
    const zeroB: Task[] = [
      { kind: 0, a: 3, b: 0 },
      { kind: 1, a: 8, b: 0 },
    ];
    const r = evaluatePolicy(z, zeroB, new Rng(1));
    expect(r.success).toBe(1);
    expect(r.coincidental).toBe(2);
    const r2 = evaluatePolicy(z, [{ kind: 0, a: 3, b: 1 }], new Rng(1));
    expect(r2.counts.wrong_answer).toBe(1);
  });

  it('greedy on the uniform table reads twice every time', () => {
    const r = evaluatePolicy(createLogits(), sampleTasks(new Rng(2), 10), new Rng(3), 'greedy');
    expect(r.counts.read_twice).toBe(10);
  });
});

describe('protocolSuccessProbability', () => {
  it('is 1/64 for the uniform table', () => {
    expect(protocolSuccessProbability(createLogits())).toBe(1 / 64);
  });

  it('matches a hand computation for a table with known rows', () => {
    const z = createLogits();
    // add: fresh read weight 3 of (3+1+1+1) -> 1/2; read: add weight 7 of 10 -> 7/10; computed uniform 1/4
    z[rowOffset(0, 0) + 0] = Math.log(3);
    z[rowOffset(0, 1) + 1] = Math.log(7);
    // sub: all rows put weight 1 on everything except sub at read, which gets 0 weight (-inf is illegal,
    // so use a very negative logit)
    z[rowOffset(1, 1) + 2] = -50;
    const add = (1 / 2) * (7 / 10) * (1 / 4);
    const sub = (1 / 4) * (Math.exp(-50) / (3 + Math.exp(-50))) * (1 / 4);
    expect(protocolSuccessProbability(z)).toBeCloseTo((add + sub) / 2, 14);
  });
});
