import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { aggLossGrad, LOSS_AGG_MODES } from '../core/aggLoss.js';
import { policyLossVanillaGrad } from '../core/vanillaPolicyLoss.js';
import { Rng } from '../random.js';
import { packSequences, SequenceModel } from './sequenceModel.js';

/** A tiny model and a 3-row batch of different prompt/response lengths. */
function setup(seed = 1, dModel = 4) {
  const model = new SequenceModel({ vocab: 6, context: 9, dModel }, new Rng(seed));
  const prompts = [[0, 1], [2], [3, 4, 5]];
  const responses = [
    [1, 2, 3, 4, 5],
    [5, 4, 3, 2, 1, 0, 1],
    [0, 2],
  ];
  return { model, batch: packSequences(prompts, responses) };
}

describe('SequenceModel', () => {
  it('gives normalised next-token distributions and the same log-probs as incremental generation', () => {
    const { model, batch } = setup();
    const lp = model.logProbs(batch);
    // generation path: feed the prompt and response, read log-softmax of the logits before each response token
    const sampler = model.sampler();
    model.prepareGeneration();
    for (let b = 0; b < batch.rows; b++) {
      sampler.reset();
      const L = batch.lengths[b] as number;
      const s = batch.starts[b] as number;
      for (let t = 0; t < L; t++) {
        const tok = batch.tokens[b * batch.cols + t] as number;
        if (t >= s) {
          const z = sampler.logits;
          const max = Math.max(...z);
          const lse = max + Math.log(z.reduce((a, x) => a + Math.exp(x - max), 0));
          expect(lp[b * batch.responseCols + t - s]).toBeCloseTo((z[tok] as number) - lse, 12);
        }
        sampler.feed(tok);
      }
    }
    for (let i = 0; i < lp.length; i++) expect(lp[i]).toBeLessThanOrEqual(0);
  });

  it('generates past the first 64 projected positions with the same numbers as the batch pass', () => {
    const model = new SequenceModel({ vocab: 5, context: 150, dModel: 4 }, new Rng(8));
    const rng = new Rng(9);
    const response = Array.from({ length: 139 }, () => rng.int(0, 4));
    const lp = model.logProbs(packSequences([[1]], [response]));
    model.prepareGeneration();
    const sampler = model.sampler();
    sampler.reset();
    sampler.feed(1);
    response.forEach((tok, s) => {
      const z = sampler.logits;
      const max = Math.max(...z);
      const lse = max + Math.log(z.reduce((a, x) => a + Math.exp(x - max), 0));
      expect(lp[s]).toBeCloseTo((z[tok] as number) - lse, 12);
      sampler.feed(tok);
    });
  });

  it('is deterministic per seed and differs across seeds', () => {
    expect(setup(3).model.params).toEqual(setup(3).model.params);
    expect(setup(3).model.params).not.toEqual(setup(4).model.params);
  });

  // dL/dθ by backward (with dL/dlogp from the core loss kernels) vs central differences in float64 of
  // L(θ) = Σ_i w_i · (−A_i · exp(logp_i(θ) − old_i)), the vanilla loss in its unclipped region with
  // w = aggLossGrad(mask, mode) (agg_loss is linear in the per-token loss).
  // d_model 4 runs the products four rows at a time only; d_model 6 (3d = 18, V = 6) also runs the
  // leftover rows of each blocked product.
  const finiteDifferenceCheck = (mode: (typeof LOSS_AGG_MODES)[number], dModel: number) => {
    const { model, batch } = setup(5, dModel);
    const rng = new Rng(11);
    const shape = { rows: batch.rows, cols: batch.responseCols };
    const n = shape.rows * shape.cols;
    const mask = new Float32Array(n);
    const adv = new Float32Array(n);
    for (let b = 0; b < batch.rows; b++) {
      const len = (batch.lengths[b] as number) - (batch.starts[b] as number);
      for (let t = 0; t < len; t++) {
        mask[b * shape.cols + t] = t % 3 === 1 ? 0 : 1; // some environment tokens out of the loss
        adv[b * shape.cols + t] = b === 1 ? -0.7 : 1.3;
      }
    }
    const logp = model.logProbs(batch).slice();
    const old = new Float64Array(n);
    for (let i = 0; i < n; i++) old[i] = (logp[i] as number) + 0.05 * (2 * rng.next() - 1);
    const core = policyLossVanillaGrad(
      { oldLogProb: old, logProb: logp, advantages: adv, responseMask: mask },
      shape,
      { lossAggMode: mode },
    );
    const analytic = model.backward(core.grad).slice();
    const w = aggLossGrad(mask, shape, mode);
    const loss = () => {
      const lp = model.logProbs(batch);
      let total = 0;
      for (let i = 0; i < n; i++) {
        if (w[i] === 0) continue;
        total += (w[i] as number) * -(adv[i] as number) * Math.exp((lp[i] as number) - (old[i] as number));
      }
      return total;
    };
    const h = 1e-5;
    for (const t of model.tensors) {
      let worst = 0;
      let norm = 0;
      for (let j = t.offset; j < t.offset + t.rows * t.cols; j++) {
        const x = model.params[j] as number;
        model.params[j] = x + h;
        const up = loss();
        model.params[j] = x - h;
        const down = loss();
        model.params[j] = x;
        const numeric = (up - down) / (2 * h);
        const a = analytic[j] as number;
        norm = Math.max(norm, Math.abs(a));
        worst = Math.max(worst, Math.abs(a - numeric) / Math.max(Math.abs(a), Math.abs(numeric), 1e-6));
      }
      expect({ tensor: t.name, worst: worst < 1e-5 ? 'ok' : worst }).toEqual({ tensor: t.name, worst: 'ok' });
      if (t.name !== 'position_embedding') expect(norm, t.name).toBeGreaterThan(0);
    }
  };
  it.each(LOSS_AGG_MODES)('passes a finite-difference check on every parameter tensor (%s)', (mode) =>
    finiteDifferenceCheck(mode, 4),
  );
  it('passes the finite-difference check at d_model 6 (rows left over by the blocked products)', () =>
    finiteDifferenceCheck('token-mean', 6));

  it('samples with a temperature; temperature 0 is the argmax and small temperatures approach it', () => {
    const { model } = setup(2);
    const sampler = model.sampler();
    model.prepareGeneration();
    sampler.reset();
    sampler.feed(1);
    const z = [...sampler.logits];
    const argmax = z.indexOf(Math.max(...z));
    expect(sampler.sample(new Rng(1), 0)).toBe(argmax);
    const rng = new Rng(2);
    // a temperature 40x below the gap between the two largest logits: exp(-40) per other token
    const second = Math.max(...z.filter((_, v) => v !== argmax));
    const tau = ((z[argmax] as number) - second) / 40;
    let hits = 0;
    for (let i = 0; i < 200; i++) if (sampler.sample(rng, tau) === argmax) hits++;
    expect(hits).toBe(200);
    const counts = new Array(6).fill(0);
    for (let i = 0; i < 4000; i++) counts[sampler.sample(rng, 1)]++;
    const max = Math.max(...z);
    const e = z.map((x) => Math.exp(x - max));
    const s = e.reduce((a, x) => a + x, 0);
    for (let v = 0; v < 6; v++) expect(Math.abs(counts[v] / 4000 - (e[v] as number) / s)).toBeLessThan(0.03);
  });

  it('rejects bad sizes, long transcripts, bad tokens and non-finite gradients with a LabError', () => {
    expectLabError(
      () => new SequenceModel({ vocab: 6, context: 9, dModel: 2 }, new Rng(1)),
      'BAD_ARGUMENT',
      'd_model',
    );
    expectLabError(
      () => new SequenceModel({ vocab: 6, context: 9, dModel: 200 }, new Rng(1)),
      'BAD_ARGUMENT',
      'd_model',
    );
    expectLabError(
      () => new SequenceModel({ vocab: 6, context: 9, dModel: 8.5 }, new Rng(1)),
      'BAD_ARGUMENT',
      'd_model',
    );
    const { model, batch } = setup();
    expectLabError(
      () => model.logProbs(packSequences([[0, 1, 2]], [[1, 2, 3, 4, 5, 0, 1]])),
      'BAD_ARGUMENT',
      'transcript',
      'row 0',
      'context 9',
    );
    expectLabError(
      () => model.logProbs(packSequences([[0]], [[7]])),
      'BAD_ARGUMENT',
      'tokens',
      'row 0, token 1',
    );
    model.logProbs(batch);
    const g = new Float64Array(batch.rows * batch.responseCols);
    g[batch.responseCols + 2] = Number.NaN;
    expectLabError(() => model.backward(g), 'NON_FINITE', 'gradLogProb', 'row 1, token 2');
    const sampler = model.sampler();
    model.prepareGeneration();
    sampler.reset();
    for (let i = 0; i < 9; i++) sampler.feed(0);
    expectLabError(() => sampler.feed(0), 'BAD_ARGUMENT', 'transcript', 'context 9');
    expectLabError(() => sampler.sample(new Rng(1), -1), 'BAD_ARGUMENT', 'temperature');
    model.params[model.tensors[3]?.offset as number] = Number.POSITIVE_INFINITY;
    expectLabError(() => model.checkFinite(model.params, 'params', 12), 'NON_FINITE', 'w_h[0, 0]', 'step 12');
  });
});

describe('SequenceModel entropy bonus', () => {
  it('entropies are those of the next-token softmax and backward(0, dL/dH) passes a finite difference', () => {
    const { model, batch } = setup(7);
    const n = batch.rows * batch.responseCols;
    const coef = new Float64Array(n);
    for (let b = 0; b < batch.rows; b++) {
      const len = (batch.lengths[b] as number) - (batch.starts[b] as number);
      for (let t = 0; t < len; t++) coef[b * batch.responseCols + t] = 0.3 + 0.1 * ((b + t) % 3);
    }
    const value = () => {
      model.logProbs(batch);
      const h = model.entropies();
      let s = 0;
      for (let i = 0; i < n; i++) s += (coef[i] as number) * (h[i] as number);
      return s;
    };
    model.logProbs(batch);
    const h = model.entropies();
    // row 0, first response token: entropy of softmax(logits) after feeding the prompt [0, 1]
    model.prepareGeneration();
    const sampler = model.sampler();
    sampler.reset();
    sampler.feed(0);
    sampler.feed(1);
    const z = Array.from(sampler.logits);
    const max = Math.max(...z);
    const norm = z.reduce((a, x) => a + Math.exp(x - max), 0);
    const direct = -z.reduce((a, x) => a + (Math.exp(x - max) / norm) * (x - max - Math.log(norm)), 0);
    expect(h[0]).toBeCloseTo(direct, 12);
    model.logProbs(batch);
    const grads = Float64Array.from(model.backward(new Float64Array(n), coef));
    const eps = 1e-6;
    const rng = new Rng(2);
    for (let k = 0; k < 40; k++) {
      const i = rng.int(0, model.size - 1);
      const keep = model.params[i] as number;
      model.params[i] = keep + eps;
      const up = value();
      model.params[i] = keep - eps;
      const dn = value();
      model.params[i] = keep;
      expect(Math.abs((grads[i] as number) - (up - dn) / (2 * eps))).toBeLessThan(1e-6);
    }
  });
});
