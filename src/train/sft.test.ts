import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { PROMPTED_VOCAB_SIZE, samplePromptedTask } from '../envs/promptedArithmetic.js';
import { ROLE_MODEL } from '../envs/tokenVocab.js';
import { packSequences, SequenceModel } from '../policy/sequenceModel.js';
import { Rng } from '../random.js';
import {
  DEMONSTRATOR_BEHAVIOURS,
  type DemonstratorMixture,
  demonstrate,
  mixtureCdf,
} from './demonstrator.js';
import { packDemonstrations, pretrainSequenceModel, sftLossGrad } from './sft.js';

const ONLY = (b: keyof DemonstratorMixture): DemonstratorMixture =>
  Object.fromEntries(DEMONSTRATOR_BEHAVIOURS.map((x) => [x, x === b ? 1 : 0])) as DemonstratorMixture;

describe('sftLossGrad', () => {
  it('passes a finite-difference check on every parameter tensor, with masked tokens out of the loss', () => {
    const model = new SequenceModel({ vocab: 6, context: 9, dModel: 4 }, new Rng(3));
    const batch = packSequences(
      [[0, 1], [2], [3, 4, 5]],
      [
        [1, 2, 3, 4, 5],
        [5, 4, 3, 2, 1, 0, 1],
        [0, 2],
      ],
    );
    const n = batch.rows * batch.responseCols;
    const mask = new Float64Array(n);
    for (let b = 0; b < batch.rows; b++) {
      const len = (batch.lengths[b] as number) - (batch.starts[b] as number);
      for (let t = 0; t < len; t++) mask[b * batch.responseCols + t] = t % 3 === 1 ? 0 : 1;
    }
    const { loss: l0, tokens } = sftLossGrad(model, batch, mask);
    expect(tokens).toBe(mask.reduce((a, b) => a + b, 0));
    const analytic = model.grads.slice();
    // the loss computed independently: −mean over mask of log softmax at the next token
    const loss = () => {
      const lp = model.logProbs(batch);
      let s = 0;
      for (let i = 0; i < n; i++) if (mask[i] === 1) s -= lp[i] as number;
      return s / tokens;
    };
    expect(loss()).toBeCloseTo(l0, 12);
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
  });

  it('averages −log p over the tokens with mask 1 only', () => {
    const model = new SequenceModel({ vocab: 5, context: 8, dModel: 4 }, new Rng(4));
    const batch = packSequences([[0]], [[1, 2, 3, 4]]);
    const all = new Float64Array([1, 1, 1, 1]);
    const some = new Float64Array([1, 0, 1, 1]);
    const lp = model.logProbs(batch).slice();
    expect(sftLossGrad(model, batch, all).loss).toBeCloseTo(-(lp[0]! + lp[1]! + lp[2]! + lp[3]!) / 4, 12);
    expect(sftLossGrad(model, batch, some).loss).toBeCloseTo(-(lp[0]! + lp[2]! + lp[3]!) / 3, 12);
  });

  it('rejects a mask of another shape, a non-0/1 entry and an all-zero mask', () => {
    const model = new SequenceModel({ vocab: 5, context: 8, dModel: 4 }, new Rng(4));
    const batch = packSequences([[0]], [[1, 2]]);
    expectLabError(() => sftLossGrad(model, batch, [1]), 'SHAPE_MISMATCH', 'mask');
    expectLabError(() => sftLossGrad(model, batch, [1, 0.5]), 'BAD_MASK', 'row 0, token 1');
    expectLabError(() => sftLossGrad(model, batch, [0, 0]), 'EMPTY_MASK', 'mask');
  });
});

describe('the scripted demonstrator', () => {
  const env = { budget: 48 };
  const tasks = (n: number, seed = 1) => {
    const rng = new Rng(seed);
    return Array.from({ length: n }, () => samplePromptedTask(rng, 99, 1, 3));
  };

  it('plays each behaviour with its outcome', () => {
    const t = tasks(200);
    // a budget long enough for every script (at 48 a verified 3-call transcript can be truncated)
    const run = (b: keyof DemonstratorMixture, errorRate = 0.3) =>
      demonstrate(t, mixtureCdf(ONLY(b)), new Rng(2), new Rng(3), { budget: 80, toolErrorRate: errorRate });
    expect(run('verify').every((e) => e.status === 'success' && e.verified)).toBe(true);
    expect(run('direct', 0).every((e) => e.status === 'success' && !e.verified)).toBe(true);
    const direct = run('direct');
    expect(direct.some((e) => e.status === 'wrong_answer')).toBe(true);
    const think = run('think', 0);
    expect(think.every((e) => e.status === 'success' && e.thinkTokens >= e.level)).toBe(true);
    expect(
      run('extra_call').every(
        (e) => e.status === 'protocol_error' && /_at_computed$/.test(e.errorKind ?? ''),
      ),
    ).toBe(true);
    expect(run('missing_call').every((e) => e.errorKind?.startsWith('submit_at_'))).toBe(true);
    expect(run('early_submit').every((e) => e.errorKind === 'submit_at_fresh')).toBe(true);
    // the wrong tool fails unless verify repaired it or the operand was 0
    for (const e of run('wrong_tool', 0)) {
      if (e.status !== 'success') expect(e.verified).toBe(false);
    }
    expect(run('wrong_tool', 0).some((e) => e.status === 'wrong_answer')).toBe(true);
  });

  it('draws behaviours in proportion to the weights and is deterministic per stream', () => {
    const mix: DemonstratorMixture = {
      direct: 3,
      verify: 1,
      think: 0,
      wrong_tool: 0,
      extra_call: 0,
      missing_call: 0,
      early_submit: 0,
    };
    const t = tasks(4000);
    const a = demonstrate(t, mixtureCdf(mix), new Rng(5), new Rng(6), env);
    const share = a.filter((e) => e.behaviour === 'direct').length / a.length;
    expect(share).toBeGreaterThan(0.72);
    expect(share).toBeLessThan(0.78);
    expect(a.some((e) => e.behaviour === 'think')).toBe(false);
    const b = demonstrate(t, mixtureCdf(mix), new Rng(5), new Rng(6), env);
    expect(JSON.stringify(b)).toBe(JSON.stringify(a));
  });

  it('rejects a negative weight (naming it) and weights that do not sum to a positive number', () => {
    expectLabError(() => mixtureCdf({ ...ONLY('direct'), verify: -1 }), 'BAD_ARGUMENT', 'sft_weight_verify');
    expectLabError(
      () => mixtureCdf(Object.fromEntries(DEMONSTRATOR_BEHAVIOURS.map((b) => [b, 0])) as DemonstratorMixture),
      'BAD_ARGUMENT',
      'sum to a positive number',
    );
  });

  it('masks only the model tokens of a demonstration', () => {
    const eps = demonstrate(tasks(5), mixtureCdf(ONLY('verify')), new Rng(2), new Rng(3), env);
    const { batch, mask } = packDemonstrations(eps);
    eps.forEach((e, b) => {
      e.roles.forEach((r, s) => {
        expect(mask[b * batch.responseCols + s]).toBe(r === ROLE_MODEL ? 1 : 0);
      });
    });
  });
});

describe('pretrainSequenceModel', () => {
  it('lowers the imitation loss, deterministically, and rejects sft_steps < 0', () => {
    const mixture = ONLY('verify');
    const options = {
      steps: 30,
      batch: 8,
      lr: 0.02,
      gradClip: 1,
      mixture,
      maxOperand: 9,
      maxLevel: 2,
      env: { budget: 40 },
    };
    const make = () => new SequenceModel({ vocab: PROMPTED_VOCAB_SIZE, context: 48, dModel: 8 }, new Rng(1));
    const m1 = make();
    const s1 = pretrainSequenceModel(m1, options, new Rng(9));
    const m2 = make();
    pretrainSequenceModel(m2, options, new Rng(9));
    expect(Buffer.from(m1.params.buffer).equals(Buffer.from(m2.params.buffer))).toBe(true);
    const first = s1.losses.slice(0, 5).reduce((a, b) => a + b, 0) / 5;
    const last = s1.losses.slice(-5).reduce((a, b) => a + b, 0) / 5;
    expect(last).toBeLessThan(0.6 * first);
    expectLabError(
      () => pretrainSequenceModel(make(), { ...options, steps: -1 }, new Rng(9)),
      'BAD_ARGUMENT',
      'sft_steps',
    );
  });
});
