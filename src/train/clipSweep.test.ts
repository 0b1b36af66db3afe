import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { trueKlAtPositions } from '../core/clipMeasures.js';
import { contextCount, runTokenEpisode, sampleTokenTask, VOCAB_SIZE } from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import {
  batchRows,
  type FixedBatch,
  measureDrift,
  miniBatchRanges,
  ppoEpochs,
  tabularModel,
} from './clipSweep.js';
import {
  gatherLogProbs,
  packTranscripts,
  ppoUpdate,
  responseMaskFromRoles,
  tokenGroupAdvantages,
} from './tokenLearner.js';

function randomPolicy(seed: number): ContextPolicy {
  const p = new ContextPolicy(contextCount(3), VOCAB_SIZE);
  const rng = new Rng(seed);
  for (let i = 0; i < p.logits.length; i++) p.logits[i] = (rng.next() * 2 - 1) * 1.5;
  return p;
}

/** 4 groups x 4 samples from `policy`, GRPO advantages from the episodes' scores. */
function fixedBatch(policy: ContextPolicy, seed: number): FixedBatch {
  const rng = new Rng(seed);
  const probs = policy.probabilities();
  const pick = rng.fork('policy');
  const noise = rng.fork('noise');
  const episodes = Array.from({ length: 4 }, () => sampleTokenTask(rng)).flatMap((task) =>
    Array.from({ length: 4 }, () =>
      runTokenEpisode(task, (ctx) => ContextPolicy.sample(probs, VOCAB_SIZE, ctx, pick), noise, {
        budget: 20,
      }),
    ),
  );
  const batch = packTranscripts(episodes);
  const mask = responseMaskFromRoles(batch, 'model_tokens');
  // scores: alternate 1/0 within each group so every advantage is non-zero
  const scores = episodes.map((_, i) => i % 2);
  const advantages = tokenGroupAdvantages(
    scores,
    episodes.map((_, i) => Math.floor(i / 4)),
    batch,
    mask,
  );
  return {
    batch,
    mask,
    advantages,
    oldLogProb: gatherLogProbs(policy.logProbabilities(), VOCAB_SIZE, batch),
  };
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

  it('batchRows views the rows of a packed batch', () => {
    const policy = randomPolicy(1);
    const { batch } = fixedBatch(policy, 2);
    const part = batchRows(batch, 1, 3);
    const cols = batch.shape.cols;
    expect(part.shape).toEqual({ rows: 2, cols });
    expect(Array.from(part.tokens)).toEqual(Array.from(batch.tokens.slice(cols, 3 * cols)));
    expect(Array.from(part.lengths)).toEqual(Array.from(batch.lengths.slice(1, 3)));
  });
});

describe('ppoEpochs', () => {
  it('with one mini-batch equals the token learner ppoUpdate step for step (same logits, same metrics)', () => {
    for (const kind of ['adam', 'sgd'] as const) {
      const a = randomPolicy(3);
      const b = randomPolicy(3);
      const fixed = fixedBatch(a, 4);
      const loss = { clipRatio: 0.2 };
      const statsA = ppoUpdate(
        a,
        new Optimizer(a.logits.length, { kind, learningRate: 0.1 }),
        fixed.batch,
        fixed.oldLogProb,
        fixed.advantages,
        fixed.mask,
        {
          epochs: 5,
          loss,
        },
      );
      const totals = ppoEpochs(
        tabularModel(b),
        new Optimizer(b.logits.length, { kind, learningRate: 0.1 }),
        fixed,
        {
          epochs: 5,
          miniBatches: 1,
          loss,
        },
      );
      expect(Array.from(b.logits)).toEqual(Array.from(a.logits));
      expect(totals.steps).toBe(5);
      expect(totals.pgClipfrac).toBeCloseTo(
        statsA.epochs.reduce((s, e) => s + e.metrics.pg_clipfrac, 0),
        12,
      );
      expect(totals.ppoKl).toBeCloseTo(
        statsA.epochs.reduce((s, e) => s + e.metrics.ppo_kl, 0),
        12,
      );
    }
  });

  it('takes epochs x mini-batches steps and calls onEpoch once per epoch', () => {
    const p = randomPolicy(5);
    const fixed = fixedBatch(p, 6);
    const seen: number[] = [];
    const totals = ppoEpochs(tabularModel(p), new Optimizer(p.logits.length), fixed, {
      epochs: 3,
      miniBatches: 4,
      loss: {},
      onEpoch: (e, t) => seen.push(e * 100 + t.steps),
    });
    expect(totals.steps).toBe(12);
    expect(seen).toEqual([104, 208, 312]);
  });

  it('a KL loss of coefficient 0 changes nothing; with zero advantages the KL loss alone pulls toward the reference', () => {
    const ref = randomPolicy(7);
    const refTable = ref.logProbabilities();
    const start = randomPolicy(8);
    const fixed = fixedBatch(start, 9);
    const refLogProb = gatherLogProbs(refTable, VOCAB_SIZE, fixed.batch);
    const a = randomPolicy(8);
    const b = randomPolicy(8);
    const opts = (coef: number) => ({
      epochs: 2,
      miniBatches: 2,
      loss: {},
      klLoss: { coef, type: 'low_var_kl' as const, refLogProb },
    });
    ppoEpochs(
      tabularModel(a),
      new Optimizer(a.logits.length, { kind: 'sgd', learningRate: 0.5 }),
      fixed,
      opts(0),
    );
    ppoEpochs(tabularModel(b), new Optimizer(b.logits.length, { kind: 'sgd', learningRate: 0.5 }), fixed, {
      epochs: 2,
      miniBatches: 2,
      loss: {},
    });
    expect(Array.from(a.logits)).toEqual(Array.from(b.logits));

    const zero = { ...fixed, advantages: new Float32Array(fixed.advantages.length) };
    const c = randomPolicy(8);
    const klBefore = trueKlAtPositions(
      c.logProbabilities(),
      refTable,
      VOCAB_SIZE,
      fixed.batch.contexts,
      fixed.mask,
      fixed.batch.shape,
    );
    const totals = ppoEpochs(
      tabularModel(c),
      new Optimizer(c.logits.length, { kind: 'sgd', learningRate: 2 }),
      zero,
      opts(1),
    );
    const klAfter = trueKlAtPositions(
      c.logProbabilities(),
      refTable,
      VOCAB_SIZE,
      fixed.batch.contexts,
      fixed.mask,
      fixed.batch.shape,
    );
    expect(klAfter.mean).toBeLessThan(klBefore.mean);
    expect(totals.klLoss).toBeGreaterThan(0);
  });

  it('rejects a non-positive epoch count', () => {
    const p = randomPolicy(1);
    expectLabError(
      () =>
        ppoEpochs(tabularModel(p), new Optimizer(p.logits.length), fixedBatch(p, 1), {
          epochs: 0,
          miniBatches: 1,
          loss: {},
        }),
      'BAD_ARGUMENT',
      'ppo_epochs',
    );
  });
});

describe('measureDrift', () => {
  it('is zero drift before any step and matches the kernels after one', () => {
    const p = randomPolicy(11);
    const fixed = fixedBatch(p, 12);
    const model = tabularModel(p);
    const oldRows = p.logProbabilities();
    const oldParams = Float64Array.from(p.logits);
    const band = { low: 0.2, high: 0.2 };
    const d0 = measureDrift(model, fixed, oldRows, oldParams, band, {});
    expect(d0.kl_true_mean).toBe(0);
    expect(d0.update_norm).toBe(0);
    expect(d0.ratio_max).toBe(1);
    expect(d0.frac_outside_clip).toBe(0);
    ppoEpochs(model, new Optimizer(p.logits.length, { learningRate: 0.3 }), fixed, {
      epochs: 3,
      miniBatches: 1,
      loss: {},
    });
    const d = measureDrift(model, fixed, oldRows, oldParams, band, {});
    expect(d.kl_true_mean).toBeGreaterThan(0);
    expect(d.kl_true_max).toBeGreaterThanOrEqual(d.kl_true_mean);
    let sq = 0;
    for (let i = 0; i < p.logits.length; i++) sq += ((p.logits[i] as number) - (oldParams[i] as number)) ** 2;
    expect(d.update_norm).toBeCloseTo(Math.sqrt(sq), 12);
  });
});
