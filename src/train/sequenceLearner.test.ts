import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { packSequences, SequenceModel } from '../policy/sequenceModel.js';
import { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import { sequencePpoUpdate } from './sequenceLearner.js';

function setup() {
  const model = new SequenceModel({ vocab: 5, context: 8, dModel: 8 }, new Rng(1));
  const batch = packSequences(
    [[0], [0], [1], [1]],
    [
      [2, 3],
      [4, 4, 2],
      [3, 2],
      [2, 2, 2],
    ],
  );
  const shape = { rows: 4, cols: batch.responseCols };
  const mask = Float32Array.from([1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1]);
  const adv = Float32Array.from([1, 1, 0, -1, -1, -1, 1, 1, 0, -1, -1, -1]);
  return { model, batch, shape, mask, adv };
}

describe('sequencePpoUpdate', () => {
  it('raises the log-probs of positive-advantage tokens and lowers the others', () => {
    const { model, batch, shape, mask, adv } = setup();
    const opt = new Optimizer(model.size, { learningRate: 0.01 });
    const before = model.logProbs(batch).slice();
    const stats = sequencePpoUpdate(model, opt, batch, shape, adv, mask, { epochs: 3 });
    expect(stats.oldLogProb).toEqual(before);
    expect(stats.epochs[0]?.metrics.pg_clipfrac).toBe(0); // ratio 1 in the first epoch
    const after = model.logProbs(batch);
    let up = 0;
    let down = 0;
    for (let i = 0; i < before.length; i++) {
      if (mask[i] === 0) continue;
      const delta = (after[i] as number) - (before[i] as number);
      if ((adv[i] as number) > 0) up += delta;
      else down += delta;
    }
    expect(up).toBeGreaterThan(0);
    expect(down).toBeLessThan(0);
  });

  it('clips the global gradient norm and reports it before clipping', () => {
    const { model, batch, shape, mask, adv } = setup();
    const opt = new Optimizer(model.size, { kind: 'sgd', learningRate: 1 });
    const p0 = model.params.slice();
    const stats = sequencePpoUpdate(model, opt, batch, shape, adv, mask, { epochs: 1, gradClip: 1e-3 });
    expect(stats.epochs[0]?.gradNorm).toBeGreaterThan(1e-3);
    let sq = 0;
    for (let i = 0; i < p0.length; i++) sq += ((model.params[i] as number) - (p0[i] as number)) ** 2;
    expect(Math.sqrt(sq)).toBeCloseTo(1e-3, 6); // sgd with lr 1 moves by exactly the clipped gradient
  });

  it('stops on non-finite parameters with the step and tensor named', () => {
    const { model, batch, shape, mask, adv } = setup();
    // a step of 1e308 x a gradient above 2 overflows to ±Infinity in the first epoch (step 40)
    const opt = new Optimizer(model.size, { kind: 'sgd', learningRate: 1e308 });
    const big = adv.map((a) => a * 1e4);
    expectLabError(
      () => sequencePpoUpdate(model, opt, batch, shape, big, mask, { epochs: 2, gradClip: 1e300 }, 40),
      'NON_FINITE',
      'params: ',
      'at step 40',
    );
  });

  it('uses caller-given old log-probs (decoupled recomputation or bypass) and checks their length', () => {
    const a = setup();
    const b = setup();
    const old = a.model.logProbs(a.batch).slice();
    const optA = new Optimizer(a.model.size, { learningRate: 0.01 });
    const optB = new Optimizer(b.model.size, { learningRate: 0.01 });
    // the same values as epoch 1's forward pass: the same update, bit for bit
    const sa = sequencePpoUpdate(a.model, optA, a.batch, a.shape, a.adv, a.mask, {
      epochs: 2,
      oldLogProb: old,
    });
    const sb = sequencePpoUpdate(b.model, optB, b.batch, b.shape, b.adv, b.mask, { epochs: 2 });
    expect(sa.epochs).toEqual(sb.epochs);
    expect(Array.from(a.model.params)).toEqual(Array.from(b.model.params));
    // behaviour log-probs 0.5 lower: the first epoch's ratio is e^0.5 > 1 + clip, so tokens are clipped
    const c = setup();
    const shifted = c.model.logProbs(c.batch).map((v) => v - 0.5);
    const optC = new Optimizer(c.model.size, { learningRate: 0.01 });
    const sc = sequencePpoUpdate(c.model, optC, c.batch, c.shape, c.adv, c.mask, {
      epochs: 1,
      oldLogProb: shifted,
    });
    expect(sc.oldLogProb).toEqual(shifted);
    expect(sc.epochs[0]?.metrics.pg_clipfrac).toBeGreaterThan(0);
    expectLabError(
      () =>
        sequencePpoUpdate(c.model, optC, c.batch, c.shape, c.adv, c.mask, {
          oldLogProb: new Float64Array(3),
        }),
      'SHAPE_MISMATCH',
      'oldLogProb',
    );
  });
});
