import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centralDifferences } from '../../test/support/finiteDifference.js';
import type { Action, Stage, TaskKind } from '../envs/toolArithmetic.js';
import { Rng } from '../random.js';
import {
  accumulateGradLogProb,
  actionProbs,
  checkLogits,
  createLogits,
  greedyAction,
  logProb,
  NUM_LOGITS,
  rowOffset,
  sampleAction,
} from './tabular.js';

describe('tabular softmax policy', () => {
  it('has 24 zero logits at init: uniform 1/4 everywhere', () => {
    const z = createLogits();
    expect(z.length).toBe(24);
    expect(NUM_LOGITS).toBe(24);
    for (let k = 0; k < 2; k++) {
      for (let s = 0; s < 3; s++) {
        expect(Array.from(actionProbs(z, k as TaskKind, s as Stage))).toEqual([0.25, 0.25, 0.25, 0.25]);
        expect(logProb(z, k as TaskKind, s as Stage, 2)).toBeCloseTo(Math.log(0.25), 15);
      }
    }
  });

  it('row layout is [kind][stage][action]', () => {
    expect(rowOffset(0, 0)).toBe(0);
    expect(rowOffset(0, 2)).toBe(8);
    expect(rowOffset(1, 0)).toBe(12);
    expect(rowOffset(1, 2)).toBe(20);
  });

  it('softmax matches a hand computation and ignores other rows', () => {
    const z = createLogits();
    // row (sub, read): logits [0, ln 2, 0, ln 4] -> weights 1,2,1,4 -> probs 1/8, 2/8, 1/8, 4/8
    const o = rowOffset(1, 1);
    z[o + 1] = Math.log(2);
    z[o + 3] = Math.log(4);
    z[0] = 100; // another row
    const p = actionProbs(z, 1, 1);
    const want = [1 / 8, 2 / 8, 1 / 8, 4 / 8];
    for (let j = 0; j < 4; j++) expect(p[j]).toBeCloseTo(want[j] as number, 14);
    expect(logProb(z, 1, 1, 3)).toBeCloseTo(Math.log(0.5), 14);
  });

  it('is stable for huge logits (no overflow to NaN)', () => {
    const z = createLogits();
    z[0] = 1000;
    z[1] = 999;
    const p = actionProbs(z, 0, 0);
    expect(p[0]).toBeCloseTo(1 / (1 + Math.exp(-1) + 2 * Math.exp(-1000)), 12);
    expect(logProb(z, 0, 0, 1)).toBeCloseTo(-1 - Math.log(1 + Math.exp(-1)), 12);
  });

  it('gradient of log-prob equals central finite differences (all 24 coordinates)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -3, max: 3, noNaN: true }), { minLength: 24, maxLength: 24 }),
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 3 }),
        fc.double({ min: -2, max: 2, noNaN: true }),
        (values, k, s, a, scale) => {
          const z = Float64Array.from(values);
          const kind = k as TaskKind;
          const stage = s as Stage;
          const action = a as Action;
          const grad = new Float64Array(24).fill(0.5); // accumulation adds to what is there
          accumulateGradLogProb(z, kind, stage, action, scale, grad);
          const fd = centralDifferences(() => scale * logProb(z, kind, stage, action), z, 1e-5);
          for (let i = 0; i < 24; i++) {
            expect(Math.abs((grad[i] as number) - 0.5 - (fd[i] as number))).toBeLessThan(1e-7);
          }
        },
      ),
      { numRuns: 50 },
    );
  });

  it('gradient at the uniform row is 3/4 on the taken action and -1/4 on the others', () => {
    const grad = new Float64Array(24);
    accumulateGradLogProb(createLogits(), 1, 2, 3, 1, grad);
    const o = rowOffset(1, 2);
    expect(Array.from(grad.subarray(o, o + 4))).toEqual([-0.25, -0.25, -0.25, 0.75]);
    expect(grad.reduce((acc, v) => acc + Math.abs(v), 0)).toBeCloseTo(1.5, 15);
  });

  it('sampling frequencies match the probabilities', () => {
    const z = createLogits();
    const o = rowOffset(0, 1);
    z[o + 0] = Math.log(1);
    z[o + 1] = Math.log(6);
    z[o + 2] = Math.log(2);
    z[o + 3] = Math.log(1); // probs 0.1, 0.6, 0.2, 0.1
    const rng = new Rng(3);
    const counts = [0, 0, 0, 0];
    const n = 20000;
    for (let i = 0; i < n; i++) counts[sampleAction(z, 0, 1, rng)]! += 1;
    const want = [0.1, 0.6, 0.2, 0.1];
    for (let j = 0; j < 4; j++) {
      const p = want[j] as number;
      const sd = Math.sqrt((p * (1 - p)) / n);
      expect(Math.abs((counts[j] as number) / n - p)).toBeLessThan(5 * sd);
    }
  });

  it('greedy picks the argmax, ties to the lowest index', () => {
    const z = createLogits();
    expect(greedyAction(z, 1, 0)).toBe(0);
    z[rowOffset(1, 0) + 2] = 0.5;
    expect(greedyAction(z, 1, 0)).toBe(2);
  });

  it('checkLogits rejects a wrong length and non-finite values, naming the index', () => {
    expect(() => checkLogits(new Float64Array(23))).toThrowError(/expected 24/);
    const z = createLogits();
    z[17] = Number.NaN;
    expect(() => checkLogits(z)).toThrowError(/index 17/);
    expect(() => checkLogits(createLogits())).not.toThrow();
  });
});
