import { describe, expect, it } from 'vitest';
import { centralDifferences } from '../../test/support/finiteDifference.js';
import { ACTION_ADD, ACTION_READ, ACTION_SUB, ACTION_SUBMIT } from '../envs/toolArithmetic.js';
import { logProb, NUM_LOGITS } from '../policy/tabular.js';
import { Rng } from '../random.js';
import { type AsyncLearnerOptions, offPolicyGradient, runAsyncLearner } from './asyncLearner.js';
import type { Episode } from './episode.js';

const streams = (seed: number) => {
  const root = new Rng(seed);
  return { tasks: root.fork('t'), policy: root.fork('p'), lengths: root.fork('l') };
};
const small: AsyncLearnerOptions = {
  mode: 'unbounded',
  workers: 12,
  groupsPerBatch: 4,
  groupSize: 4,
  updates: 40,
  trainStepTime: 1,
  publishDelay: 0.25,
};

/** A hand-made batch whose behaviour log-probs come from `behaviour` logits. */
function batchFrom(behaviour: Float64Array): Episode[] {
  const ep = (kind: 0 | 1, actions: number[], reward: 0 | 1): Episode => {
    const stages = [0, 1, 2] as const;
    return {
      task: { kind, a: 3, b: 2 },
      steps: actions.map((a, t) => ({
        kind,
        stage: stages[t] as 0 | 1 | 2,
        action: a as 0 | 1 | 2 | 3,
        logProb: logProb(behaviour, kind, stages[t] as 0 | 1 | 2, a as 0 | 1 | 2 | 3),
      })),
      reward,
      outcome: reward ? 'success' : 'wrong_answer',
      tool: null,
      coincidental: false,
    };
  };
  return [
    ep(0, [ACTION_READ, ACTION_ADD, ACTION_SUBMIT], 1),
    ep(0, [ACTION_READ, ACTION_SUB, ACTION_SUBMIT], 0),
    ep(1, [ACTION_READ, ACTION_SUB, ACTION_SUBMIT], 1),
    ep(1, [ACTION_ADD], 0),
  ];
}

describe('offPolicyGradient', () => {
  const rng = new Rng(5);
  const behaviour = Float64Array.from({ length: NUM_LOGITS }, () => rng.next() * 2 - 1);
  const current = Float64Array.from(behaviour, (v) => v + (rng.next() - 0.5));
  const episodes = batchFrom(behaviour);
  const adv = [1.2, -0.7, 0.9, -1.4];

  /** J(z) with the weights frozen at their values for `current` (detached), by finite differences. */
  function fdGradient(weights: Float64Array): Float64Array {
    const J = (z: Float64Array) => {
      let total = 0;
      let a = 0;
      episodes.forEach((ep, i) => {
        for (const s of ep.steps)
          total += (adv[i] as number) * (weights[a++] as number) * logProb(z, s.kind, s.stage, s.action);
      });
      return total / episodes.length;
    };
    const z = current.slice();
    return centralDifferences(() => J(z), z, 1e-6);
  }

  for (const correction of ['none', 'is', 'tis', 'seq_is', 'seq_tis', 'drop'] as const) {
    it(`${correction}: matches finite differences of the weighted log-prob objective`, () => {
      const out = new Float64Array(NUM_LOGITS);
      const step = offPolicyGradient(current, episodes, adv, correction, 1.1, out);
      const fd = fdGradient(step.weights);
      for (let j = 0; j < NUM_LOGITS; j++) expect(out[j]).toBeCloseTo(fd[j] as number, 6);
    });
  }

  it('is: the gradient of the unclipped surrogate (1/B) sum A * pi_z/pi_b, by finite differences', () => {
    const out = new Float64Array(NUM_LOGITS);
    offPolicyGradient(current, episodes, adv, 'is', 2, out);
    const S = (z: Float64Array) => {
      let total = 0;
      episodes.forEach((ep, i) => {
        for (const s of ep.steps)
          total += (adv[i] as number) * Math.exp(logProb(z, s.kind, s.stage, s.action) - s.logProb);
      });
      return total / episodes.length;
    };
    const z = current.slice();
    const fd = centralDifferences(() => S(z), z, 1e-6);
    for (let j = 0; j < NUM_LOGITS; j++) expect(out[j]).toBeCloseTo(fd[j] as number, 6);
  });

  it('weights: ratios by hand, truncated at the cap for tis, 1 for none', () => {
    const s0 = (episodes[0] as Episode).steps[0]!;
    const rho = Math.exp(logProb(current, s0.kind, s0.stage, s0.action) - s0.logProb);
    const is = offPolicyGradient(current, episodes, adv, 'is', 1.1);
    const tis = offPolicyGradient(current, episodes, adv, 'tis', 1.1);
    const none = offPolicyGradient(current, episodes, adv, 'none', 1.1);
    expect(is.ratios[0]).toBeCloseTo(rho, 14);
    expect(is.weights[0]).toBeCloseTo(rho, 14);
    expect(tis.weights[0]).toBeCloseTo(Math.min(rho, 1.1), 14);
    expect(Array.from(none.weights).every((w) => w === 1)).toBe(true);
    expect(Array.from(tis.weights).every((w) => w <= 1.1)).toBe(true);
    expect(Array.from(tis.ratios).some((r) => r > 1.1)).toBe(true); // the cap really bites here
  });

  it('seq_is / seq_tis: one weight per trajectory, the product of its ratios (capped for seq_tis)', () => {
    const seq = offPolicyGradient(current, episodes, adv, 'seq_is', 1.1);
    const seqT = offPolicyGradient(current, episodes, adv, 'seq_tis', 1.1);
    let a = 0;
    for (const ep of episodes) {
      let product = 1;
      for (const s of ep.steps) product *= Math.exp(logProb(current, s.kind, s.stage, s.action) - s.logProb);
      for (let t = 0; t < ep.steps.length; t++) {
        expect(seq.weights[a + t]).toBeCloseTo(product, 12);
        expect(seqT.weights[a + t]).toBeCloseTo(Math.min(product, 1.1), 12);
      }
      a += ep.steps.length;
    }
  });

  it('on-policy: ratios are exactly 1 and all corrections give the same gradient', () => {
    const eps = batchFrom(current);
    const a = new Float64Array(NUM_LOGITS);
    const b = new Float64Array(NUM_LOGITS);
    const step = offPolicyGradient(current, eps, adv, 'none', 2, a);
    offPolicyGradient(current, eps, adv, 'is', 2, b);
    expect(Array.from(step.ratios).every((r) => r === 1)).toBe(true);
    expect(Array.from(step.logRatios).every((r) => r === 0)).toBe(true);
    expect(Array.from(b)).toEqual(Array.from(a));
  });

  it('rejects a length mismatch', () => {
    expect(() => offPolicyGradient(current, episodes, [1, 2], 'none', 2)).toThrow(/one per episode/);
  });

  it('rejects non-finite logits or advantages and a cap <= 0 before writing anything', () => {
    const adv2 = episodes.map(() => 1);
    const bad = Float64Array.from(current);
    bad[5] = Number.NaN;
    expect(() => offPolicyGradient(bad, episodes, adv2, 'none', 2)).toThrow(/logits: logit NaN at index 5/);
    const out = new Float64Array(NUM_LOGITS).fill(7);
    const nanAdv = adv2.map((a, i) => (i === episodes.length - 1 ? Number.NaN : a));
    expect(() => offPolicyGradient(current, episodes, nanAdv, 'is', 2, out)).toThrow(
      new RegExp(`advantages: value NaN at row ${episodes.length - 1}`),
    );
    expect(Array.from(out).every((v) => v === 7)).toBe(true);
    expect(() => offPolicyGradient(current, episodes, adv2, 'tis', 0)).toThrow(/tisCap/);
  });
});

describe('runAsyncLearner', () => {
  it('sync: lag 0 and ratio exactly 1 for every consumed action', () => {
    const r = runAsyncLearner({ ...small, mode: 'sync' }, streams(1));
    expect(r.actionLag.length).toBeGreaterThan(0);
    expect(Array.from(r.actionLag).every((l) => l === 0)).toBe(true);
    expect(Array.from(r.actionLogRatio).every((x) => x === 0)).toBe(true);
    expect(Array.from(r.series.essRatio).every((e) => e === 1)).toBe(true);
    expect(Array.from(r.series.meanAbsLogRatio).every((e) => e === 0)).toBe(true);
  });

  it('async: lag-0 actions have log-ratio exactly 0 (behaviour log-probs are the held version), stale ones mostly not', () => {
    const r = runAsyncLearner(small, streams(2));
    let stale = 0;
    let staleNonZero = 0;
    for (let i = 0; i < r.actionLag.length; i++) {
      if (r.actionLag[i] === 0) expect(r.actionLogRatio[i]).toBe(0);
      else {
        stale++;
        if (r.actionLogRatio[i] !== 0) staleNonZero++;
      }
    }
    expect(stale).toBeGreaterThan(100);
    // Not all: a step whose batch has only all-wrong groups (zero advantages) leaves the table unchanged,
    // so an older version can equal the current one. Lag is a proxy; the ratio is the measurement.
    expect(staleNonZero / stale).toBeGreaterThan(0.3);
    // Per-action bookkeeping is aligned: one advantage and one step index per action, steps in order.
    expect(r.actionAdvantage.length).toBe(r.actionLag.length);
    expect(r.actionUpdate.length).toBe(r.actionLag.length);
    for (let i = 1; i < r.actionUpdate.length; i++) {
      expect(r.actionUpdate[i]).toBeGreaterThanOrEqual(r.actionUpdate[i - 1] as number);
    }
    expect(r.actionUpdate[r.actionUpdate.length - 1]).toBe(39);
  });

  it('bounded: no consumed action is staler than eta', () => {
    const r = runAsyncLearner({ ...small, mode: 'bounded', eta: 1 }, streams(3));
    expect(Math.max(...r.actionLag)).toBeLessThanOrEqual(1);
    expect(Math.max(...r.actionLag)).toBe(1);
  });

  it('a group takes its longest trajectory x secondsPerToken to generate', () => {
    const r = runAsyncLearner({ ...small, secondsPerToken: 0.002 }, streams(4));
    const G = 4;
    for (const g of r.sim.groups.slice(0, 50)) {
      const tokens = r.generatedLengths.slice(g.id * G, g.id * G + G);
      expect(g.end - g.start).toBeCloseTo(Math.max(...tokens) * 0.002, 9);
    }
  });

  it('consumes K x G x updates trajectories and learns the protocol', () => {
    const r = runAsyncLearner({ ...small, updates: 60 }, streams(5));
    expect(r.consumedLengths.length).toBe(4 * 4 * 60);
    expect(r.series.protocolProb[59]).toBeGreaterThan(0.5);
    expect(r.versions.length).toBe(61);
    expect(Array.from(r.versions[60] as Float64Array)).toEqual(Array.from(r.logits));
  });

  it('is deterministic for a seed and differs across seeds', () => {
    const a = runAsyncLearner(small, streams(9));
    const b = runAsyncLearner(small, streams(9));
    const c = runAsyncLearner(small, streams(10));
    expect(Array.from(b.logits)).toEqual(Array.from(a.logits));
    expect(Array.from(b.actionLogRatio)).toEqual(Array.from(a.actionLogRatio));
    expect(b.sim.endTime).toBe(a.sim.endTime);
    expect(Array.from(c.logits)).not.toEqual(Array.from(a.logits));
  });

  it('rejects bad options with named fields', () => {
    expect(() => runAsyncLearner({ ...small, tisCap: 0 }, streams(1))).toThrow(/tisCap/);
    expect(() => runAsyncLearner({ ...small, correction: 'x' as 'is' }, streams(1))).toThrow(
      /correction must be/,
    );
    expect(() => runAsyncLearner({ ...small, length: { sigma: -1 } }, streams(1))).toThrow(/sigma/);
  });
});
