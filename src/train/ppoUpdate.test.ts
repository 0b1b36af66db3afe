import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { fixedTokenBatch, randomTablePolicy } from '../../test/support/tokenBatch.js';
import { trueKlAtPositions } from '../core/clipMeasures.js';
import { entropyFromLogits } from '../core/entropy.js';
import { VOCAB_SIZE } from '../envs/tokenArithmetic.js';
import type { ContextPolicy } from '../policy/contextPolicy.js';
import { packSequences, SequenceModel } from '../policy/sequenceModel.js';
import { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import { batchRows, sequencePolicyModel, sequenceRows, tabularModel } from './policyModel.js';
import { miniBatchRanges, type PpoBatch, ppoUpdate } from './ppoUpdate.js';
import { gatherLogProbs, type PackedBatch } from './tokenLearner.js';

/** Token-mean entropy of the table over the batch's mask-1 positions. */
function tableEntropy(policy: ContextPolicy, fixed: PpoBatch<PackedBatch>): number {
  const V = VOCAB_SIZE;
  const n = fixed.mask.length;
  const z = new Float64Array(n * V);
  for (let i = 0; i < n; i++) {
    const c = fixed.batch.contexts[i] as number;
    z.set(policy.logits.subarray(c * V, c * V + V), i * V);
  }
  const h = entropyFromLogits(z, { ...fixed.batch.shape, vocab: V });
  let s = 0;
  let m = 0;
  for (let i = 0; i < n; i++) {
    s += (fixed.mask[i] as number) * (h[i] as number);
    m += fixed.mask[i] as number;
  }
  return s / m;
}

function gruSetup() {
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
  const mask = Float32Array.from([1, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 1]);
  const advantages = Float32Array.from([1, 1, 0, -1, -1, -1, 1, 1, 0, -1, -1, -1]);
  return { model, fixed: { batch, mask, advantages } };
}

describe('mini-batches', () => {
  it('splits rows into contiguous ranges differing by at most one row', () => {
    expect(miniBatchRanges(10, 4)).toEqual([
      [0, 2],
      [2, 5],
      [5, 7],
      [7, 10],
    ]);
    expect(miniBatchRanges(3, 1)).toEqual([[0, 3]]);
    expectLabError(() => miniBatchRanges(3, 4), 'BAD_ARGUMENT', 'mini_batches');
    expectLabError(() => miniBatchRanges(3, 0), 'BAD_ARGUMENT', 'mini_batches');
  });

  it('batchRows and sequenceRows view rows of a batch in the parent layout', () => {
    const { batch } = fixedTokenBatch(randomTablePolicy(1), 2);
    const part = batchRows(batch, 1, 3);
    const cols = batch.shape.cols;
    expect(part.shape).toEqual({ rows: 2, cols });
    expect(Array.from(part.tokens)).toEqual(Array.from(batch.tokens.slice(cols, 3 * cols)));
    expect(Array.from(part.lengths)).toEqual(Array.from(batch.lengths.slice(1, 3)));
    const { model, fixed } = gruSetup();
    const all = model.logProbs(fixed.batch).slice();
    const rows = sequenceRows(fixed.batch, 2, 4);
    const T = fixed.batch.responseCols;
    expect(rows.responseCols).toBe(T);
    expect(Array.from(model.logProbs(rows))).toEqual(Array.from(all.slice(2 * T, 4 * T)));
  });

  it('takes epochs x mini-batches steps, calling onStep after each and onEpoch once per epoch', () => {
    const p = randomTablePolicy(5);
    const fixed = fixedTokenBatch(p, 6);
    const seen: string[] = [];
    const stats = ppoUpdate(tabularModel(p), new Optimizer(p.logits.length), fixed, {
      epochs: 3,
      miniBatches: 4,
      onStep: (s) => seen.push(`${s.epoch}.${s.miniBatch}:${s.shape.rows}`),
      onEpoch: (e) => seen.push(`epoch ${e}`),
    });
    expect(stats.steps).toHaveLength(12);
    expect(seen.slice(0, 5)).toEqual(['1.0:4', '1.1:4', '1.2:4', '1.3:4', 'epoch 1']);
    expect(seen).toHaveLength(15);
  });

  it('gives no step for a mini-batch without mask tokens', () => {
    const p = randomTablePolicy(5);
    const fixed = fixedTokenBatch(p, 6);
    const cols = fixed.batch.shape.cols;
    const mask = Float32Array.from(fixed.mask);
    mask.fill(0, 0, 8 * cols); // the first of two mini-batches is empty
    const stats = ppoUpdate(
      tabularModel(p),
      new Optimizer(p.logits.length),
      { ...fixed, mask },
      {
        epochs: 2,
        miniBatches: 2,
      },
    );
    expect(stats.steps.map((s) => s.miniBatch)).toEqual([1, 1]);
  });
});

describe('ppoUpdate on the tabular policy', () => {
  it('records the denominator and one step per epoch; the first step has ratio 1', () => {
    const p = randomTablePolicy(3);
    const fixed = fixedTokenBatch(p, 4);
    const stats = ppoUpdate(tabularModel(p), new Optimizer(p.logits.length, { learningRate: 0.3 }), fixed, {
      epochs: 3,
      loss: { lossAggMode: 'seq-mean-token-mean' },
    });
    expect(stats.steps).toHaveLength(3);
    expect(stats.steps[0]?.metrics?.ppo_kl).toBe(0);
    expect(stats.steps[0]?.metrics?.pg_clipfrac).toBe(0);
    expect(stats.steps[2]?.metrics?.ppo_kl).not.toBe(0);
    expect(stats.steps[0]?.gradNorm).toBeNaN(); // no grad clip asked
    expect(stats.denominator.denominator).toBe(16);
    expect(Array.from(stats.oldLogProb)).toEqual(Array.from(fixed.oldLogProb as Float64Array));
  });

  it('raises positive-advantage tokens and lowers negative ones', () => {
    const p = randomTablePolicy(3);
    const fixed = fixedTokenBatch(p, 4);
    ppoUpdate(tabularModel(p), new Optimizer(p.logits.length, { kind: 'sgd', learningRate: 0.1 }), fixed, {
      epochs: 1,
    });
    const after = gatherLogProbs(p.logProbabilities(), VOCAB_SIZE, fixed.batch);
    let up = 0;
    let down = 0;
    for (let i = 0; i < after.length; i++) {
      if (fixed.mask[i] === 0) continue;
      const delta = (after[i] as number) - (fixed.oldLogProb?.[i] as number);
      if ((fixed.advantages[i] as number) > 0) up += delta;
      else if ((fixed.advantages[i] as number) < 0) down += delta;
    }
    expect(up).toBeGreaterThan(0);
    expect(down).toBeLessThan(0);
  });

  it('a KL loss of coefficient 0 changes nothing; with zero advantages the KL loss alone pulls toward the reference', () => {
    const ref = randomTablePolicy(7);
    const refTable = ref.logProbabilities();
    const fixed = fixedTokenBatch(randomTablePolicy(8), 9);
    const refLogProb = gatherLogProbs(refTable, VOCAB_SIZE, fixed.batch);
    const a = randomTablePolicy(8);
    const b = randomTablePolicy(8);
    const kl = (coef: number) => ({ coef, type: 'low_var_kl' as const, refLogProb });
    const sgd = (p: ContextPolicy, lr: number) =>
      new Optimizer(p.logits.length, { kind: 'sgd', learningRate: lr });
    ppoUpdate(tabularModel(a), sgd(a, 0.5), fixed, { epochs: 2, miniBatches: 2, klLoss: kl(0) });
    ppoUpdate(tabularModel(b), sgd(b, 0.5), fixed, { epochs: 2, miniBatches: 2 });
    expect(Array.from(a.logits)).toEqual(Array.from(b.logits));

    const zero = { ...fixed, advantages: new Float32Array(fixed.advantages.length) };
    const klTo = (p: ContextPolicy) =>
      trueKlAtPositions(
        p.logProbabilities(),
        refTable,
        VOCAB_SIZE,
        fixed.batch.contexts,
        fixed.mask,
        fixed.batch.shape,
      ).mean;
    for (const own of [false, true]) {
      const c = randomTablePolicy(8);
      const before = klTo(c);
      const ownMask = Float64Array.from(fixed.mask);
      const tokens = ownMask.reduce((s, m) => s + m, 0);
      const stats = ppoUpdate(tabularModel(c), sgd(c, 2), zero, {
        epochs: 2,
        miniBatches: 2,
        // own: the filter experiment's form, here without the policy-gradient term
        policyGradient: !own,
        klLoss: { ...kl(1), own: own ? { mask: ownMask, tokens } : undefined },
      });
      expect(klTo(c)).toBeLessThan(before);
      if (!own) expect(stats.steps[0]?.klLoss).toBeGreaterThan(0);
      else expect(stats.steps[0]?.metrics).toBeNull();
    }
  });

  it('the entropy bonus alone (zero advantages) raises the entropy; extraGradLogProb alone raises its tokens', () => {
    const p = randomTablePolicy(3);
    const fixed = fixedTokenBatch(p, 4);
    const zero = { ...fixed, advantages: new Float32Array(fixed.advantages.length) };
    const h0 = tableEntropy(p, fixed);
    ppoUpdate(tabularModel(p), new Optimizer(p.logits.length, { kind: 'sgd', learningRate: 0.5 }), zero, {
      epochs: 2,
      entropyCoef: 0.5,
    });
    expect(tableEntropy(p, fixed)).toBeGreaterThan(h0);

    const q = randomTablePolicy(3);
    const extra = new Float64Array(fixed.mask.length);
    const target = fixed.mask.indexOf(1);
    extra[target] = -1; // ∂loss/∂log_prob < 0: the step raises this token's log-prob
    ppoUpdate(tabularModel(q), new Optimizer(q.logits.length, { kind: 'sgd', learningRate: 0.5 }), fixed, {
      epochs: 1,
      policyGradient: false,
      extraGradLogProb: extra,
    });
    const after = gatherLogProbs(q.logProbabilities(), VOCAB_SIZE, fixed.batch);
    expect(after[target] as number).toBeGreaterThan(fixed.oldLogProb?.[target] as number);
  });

  it('validates its options once, naming the field', () => {
    const p = randomTablePolicy(1);
    const fixed = fixedTokenBatch(p, 1);
    const opt = new Optimizer(p.logits.length);
    const m = tabularModel(p);
    expectLabError(() => ppoUpdate(m, opt, fixed, { epochs: 0 }), 'BAD_ARGUMENT', 'ppo_epochs');
    expectLabError(
      () => ppoUpdate(m, opt, fixed, { epochs: 1, loss: { lossAggMode: 'mean' as never } }),
      'UNKNOWN_MODE',
      'lossAggMode',
    );
    expectLabError(
      () => ppoUpdate(m, opt, fixed, { epochs: 1, entropyCoef: -1 }),
      'BAD_ARGUMENT',
      'entropy_coeff',
    );
    expectLabError(() => ppoUpdate(m, opt, fixed, { epochs: 1, gradClip: 0 }), 'BAD_ARGUMENT', 'grad_clip');
    expectLabError(
      () => ppoUpdate(m, opt, { ...fixed, advantages: new Float32Array(3) }, { epochs: 1 }),
      'SHAPE_MISMATCH',
      'advantages',
    );
  });
});

describe('ppoUpdate on the GRU sequence model', () => {
  it('raises the log-probs of positive-advantage tokens and lowers the others; old = the first forward pass', () => {
    const { model, fixed } = gruSetup();
    const before = model.logProbs(fixed.batch).slice();
    const stats = ppoUpdate(
      sequencePolicyModel(model),
      new Optimizer(model.size, { learningRate: 0.01 }),
      fixed,
      {
        epochs: 3,
      },
    );
    expect(stats.oldLogProb).toEqual(before);
    expect(stats.steps[0]?.metrics?.pg_clipfrac).toBe(0); // ratio 1 in the first epoch
    const after = model.logProbs(fixed.batch);
    let up = 0;
    let down = 0;
    for (let i = 0; i < before.length; i++) {
      if (fixed.mask[i] === 0) continue;
      const delta = (after[i] as number) - (before[i] as number);
      if ((fixed.advantages[i] as number) > 0) up += delta;
      else down += delta;
    }
    expect(up).toBeGreaterThan(0);
    expect(down).toBeLessThan(0);
  });

  it('clips the global gradient norm and reports it before clipping', () => {
    const { model, fixed } = gruSetup();
    const p0 = model.params.slice();
    const stats = ppoUpdate(
      sequencePolicyModel(model),
      new Optimizer(model.size, { kind: 'sgd', learningRate: 1 }),
      fixed,
      {
        epochs: 1,
        gradClip: 1e-3,
      },
    );
    expect(stats.steps[0]?.gradNorm).toBeGreaterThan(1e-3);
    let sq = 0;
    for (let i = 0; i < p0.length; i++) sq += ((model.params[i] as number) - (p0[i] as number)) ** 2;
    expect(Math.sqrt(sq)).toBeCloseTo(1e-3, 6); // sgd with lr 1 moves by exactly the clipped gradient
  });

  it('stops on non-finite parameters with the step and tensor named', () => {
    const { model, fixed } = gruSetup();
    // a step of 1e308 x a gradient above 2 overflows to ±Infinity in the first epoch (step 40)
    const big = { ...fixed, advantages: fixed.advantages.map((a) => a * 1e4) };
    expectLabError(
      () =>
        ppoUpdate(
          sequencePolicyModel(model),
          new Optimizer(model.size, { kind: 'sgd', learningRate: 1e308 }),
          big,
          {
            epochs: 2,
            gradClip: 1e300,
            firstStep: 40,
          },
        ),
      'NON_FINITE',
      'params: ',
      'at step 40',
    );
  });

  it('uses caller-given old log-probs (decoupled recomputation or bypass), bit for bit', () => {
    const a = gruSetup();
    const b = gruSetup();
    const old = a.model.logProbs(a.fixed.batch).slice();
    const sa = ppoUpdate(
      sequencePolicyModel(a.model),
      new Optimizer(a.model.size, { learningRate: 0.01 }),
      {
        ...a.fixed,
        oldLogProb: old,
      },
      { epochs: 2 },
    );
    const sb = ppoUpdate(
      sequencePolicyModel(b.model),
      new Optimizer(b.model.size, { learningRate: 0.01 }),
      b.fixed,
      {
        epochs: 2,
      },
    );
    expect(sa.steps).toEqual(sb.steps);
    expect(Array.from(a.model.params)).toEqual(Array.from(b.model.params));
    // behaviour log-probs 0.5 lower: the first epoch's ratio is e^0.5 > 1 + clip, so tokens are clipped
    const c = gruSetup();
    const shifted = c.model.logProbs(c.fixed.batch).map((v) => v - 0.5);
    const opt = new Optimizer(c.model.size, { learningRate: 0.01 });
    const sc = ppoUpdate(
      sequencePolicyModel(c.model),
      opt,
      { ...c.fixed, oldLogProb: shifted },
      { epochs: 1 },
    );
    expect(sc.oldLogProb).toEqual(shifted);
    expect(sc.steps[0]?.metrics?.pg_clipfrac).toBeGreaterThan(0);
    expectLabError(
      () =>
        ppoUpdate(
          sequencePolicyModel(c.model),
          opt,
          { ...c.fixed, oldLogProb: new Float64Array(3) },
          { epochs: 1 },
        ),
      'SHAPE_MISMATCH',
      'oldLogProb',
    );
  });

  it('the entropy bonus alone raises the entropy; two mini-batches take two steps per epoch', () => {
    const { model, fixed } = gruSetup();
    const meanH = () => {
      model.logProbs(fixed.batch);
      const h = model.entropies();
      let s = 0;
      let n = 0;
      for (let i = 0; i < h.length; i++) {
        s += (fixed.mask[i] as number) * (h[i] as number);
        n += fixed.mask[i] as number;
      }
      return s / n;
    };
    const h0 = meanH();
    const zero = { ...fixed, advantages: new Float32Array(fixed.advantages.length) };
    const stats = ppoUpdate(
      sequencePolicyModel(model),
      new Optimizer(model.size, { kind: 'sgd', learningRate: 0.1 }),
      zero,
      {
        epochs: 2,
        miniBatches: 2,
        entropyCoef: 1,
        gradClip: 10,
      },
    );
    expect(stats.steps.map((s) => `${s.epoch}.${s.miniBatch}`)).toEqual(['1.0', '1.1', '2.0', '2.1']);
    expect(meanH()).toBeGreaterThan(h0);
  });
});
