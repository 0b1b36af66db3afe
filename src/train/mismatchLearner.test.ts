/**
 * runMismatchArm's stop on a non-finite value: an fp16 engine whose logits overflow to +Infinity
 * (output bias and weights at fp16's largest finite value) cannot sample; the arm stops with collapse `non_finite` at update 1
 * and its summary row holds nulls, never NaN. And the same arm at fp64 trains normally.
 */
import { describe, expect, it } from 'vitest';
import { maxPromptLength, PROMPTED_VOCAB_SIZE } from '../envs/promptedArithmetic.js';
import { armSummaryRow } from '../experiments/mismatch/mismatchReport.js';
import { SequenceModel } from '../policy/sequenceModel.js';
import { Rng } from '../random.js';
import { type MismatchArmOptions, runMismatchArm } from './mismatchLearner.js';

const OPTIONS: MismatchArmOptions = {
  arm: 'token_tis',
  thresholds: {
    tisThreshold: 2,
    icepopLo: 0.5,
    icepopHi: 5,
    seqMaskLo: 0.5,
    seqMaskHi: 2,
    geoLo: 0.999,
    geoHi: 1.001,
    trlClipMax: 3,
  },
  engine: { precision: 'fp16' },
  lag: 0,
  updates: 2,
  tasksPerUpdate: 2,
  groupSize: 2,
  ppoEpochs: 1,
  lr: 0.01,
  gradClip: 1,
  clipRatio: 0.2,
  std: 'unbiased',
  env: { budget: 20 },
  maxOperand: 9,
  maxLevel: 1,
  evalTasks: 4,
  evalEvery: 1,
  collapseRatio: 0.5,
  collapseMinBest: 0.2,
};

function model(): SequenceModel {
  return new SequenceModel(
    { vocab: PROMPTED_VOCAB_SIZE, context: maxPromptLength(9) + 20, dModel: 8 },
    new Rng(1),
  );
}

const streams = () => {
  const root = new Rng(2);
  return { tasks: root.fork('t'), pick: root.fork('p'), noise: root.fork('n'), evalRoot: root.fork('e') };
};

describe('runMismatchArm', () => {
  it('stops with collapse non_finite when the fp16 engine logits overflow', () => {
    const m = model();
    const view = (name: string) => {
      const t = m.tensors.find((x) => x.name === name);
      if (!t) throw new Error(`no ${name}`);
      return t;
    };
    // tokens 0 and 1: bias at fp16's largest finite value 65504, output columns +65504 and -65504:
    // logit = 65504 ± 65504·Σ_k h_k, so one of the two leaves fp16's range as soon as Σ_k h_k ≠ 0
    const wOut = view('w_out');
    const bOut = view('b_out');
    m.params[bOut.offset] = 65504;
    m.params[bOut.offset + 1] = 65504;
    for (let k = 0; k < wOut.rows; k++) {
      m.params[wOut.offset + k * wOut.cols] = 65504;
      m.params[wOut.offset + k * wOut.cols + 1] = -65504;
    }
    const r = runMismatchArm(m, OPTIONS, streams());
    expect(r.collapse).toEqual({ update: 1, reason: 'non_finite' });
    expect(r.stopped).toMatch(/logits: value Infinity/);
    expect(r.updates).toHaveLength(0);
    const row = armSummaryRow(r);
    expect(row).toMatchObject({ collapsed: 1, collapse_update: 1, collapse_reason: 'non_finite' });
    for (const [k, v] of Object.entries(row)) expect(Number.isNaN(v), k).toBe(false);
  });

  it('trains every update at fp64 and evaluates after each', () => {
    const r = runMismatchArm(model(), { ...OPTIONS, engine: { precision: 'fp64' } }, streams());
    expect(r.collapse === null || r.collapse.reason === 'success_drop').toBe(true);
    expect(r.updates).toHaveLength(2);
    for (const u of r.updates) {
      expect(u.k3).toBe(0);
      expect(Number.isFinite(u.loss)).toBe(true);
      expect(Number.isFinite(u.evalSuccess)).toBe(true);
    }
  });
});
