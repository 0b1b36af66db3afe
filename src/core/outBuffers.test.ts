/**
 * The `out` option of every kernel that returns a new typed array (batch.ts `OutOption`): the result
 * written into a reused buffer is the buffer itself and equals, bit for bit, the result of the
 * allocating call, even when the buffer held other values before; a buffer of the wrong length is
 * SHAPE_MISMATCH and one of the wrong type BAD_ARGUMENT, both naming the option; a buffer sharing
 * memory with an input or with another output of the call is BAD_ARGUMENT naming both, while a
 * disjoint piece of an input's ArrayBuffer is accepted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { aggLossGrad } from './aggLoss.js';
import { policyLossBypass } from './bypassLoss.js';
import { policyLossCispo } from './cispoLoss.js';
import { policyLossClipCov, policyLossKlCov } from './covarianceLosses.js';
import { entropyFromLogits } from './entropy.js';
import { gaeAdvantageReturn } from './gae.js';
import { gpgAdvantage } from './gpg.js';
import { grpoAdvantage, grpoScalarAdvantages, grpoVectorizedAdvantage } from './grpo.js';
import { grpoPasskAdvantage } from './grpoPassk.js';
import { applyKlPenalty, klPenalty } from './kl.js';
import { computeRewards } from './klReward.js';
import { policyLossGpg, policyLossReinforce } from './logProbLosses.js';
import { maskedRowMeans, maskedRowSums, maskedWhiten } from './masked.js';
import { opoAdvantage } from './opo.js';
import {
  multiTurnOptimalTokenBaselineAdvantage,
  optimalTokenBaselineAdvantage,
} from './optimalTokenBaseline.js';
import { presetAdvantages } from './presets.js';
import { reinforcePlusPlusAdvantage, reinforcePlusPlusBaselineAdvantage } from './reinforcePlusPlus.js';
import { remaxAdvantage } from './remax.js';
import { rlooAdvantage, rlooVectorizedAdvantage } from './rloo.js';
import { rolloutCorrection, rolloutIsWeights, rolloutRejectionMask } from './rolloutCorrection.js';
import { policyLossSapo } from './sapoLoss.js';
import { policyLossGeoMean, policyLossGspo } from './sequenceRatioLosses.js';
import { policyLossVanilla, policyLossVanillaGrad } from './vanillaPolicyLoss.js';

const rows = 4;
const cols = 6;
const n = rows * cols;
const shape = { rows, cols };
// Every shared input lives at the start of an ArrayBuffer with room after it for all the outputs of a
// call (up to a float32 and a float64 [B,T], or three float32 [B,T]), so that the aliasing tests can place an output inside or after the input.
const SLACK_BYTES = 16 * n + 64;
function roomy<T extends Float32Array | Float64Array>(
  Type: { new (b: ArrayBuffer, o: number, l: number): T; BYTES_PER_ELEMENT: number },
  values: ArrayLike<number>,
): T {
  const a = new Type(new ArrayBuffer(values.length * Type.BYTES_PER_ELEMENT + SLACK_BYTES), 0, values.length);
  for (let i = 0; i < values.length; i++) a[i] = values[i] as number;
  return a;
}
const seq = (f: (i: number) => number) =>
  roomy(
    Float32Array,
    Array.from({ length: n }, (_, i) => f(i)),
  );
// ragged right-padded rows with a hole in row 1; two groups of two
const responseMask = seq((i) => {
  const b = Math.floor(i / cols);
  const t = i % cols;
  return t < [6, 5, 3, 4][b]! && !(b === 1 && t === 2) ? 1 : 0;
});
const index = ['p0', 'p0', 'p1', 'p1'];
const tokenLevelRewards = seq((i) => (i % cols === 2 ? [1, 0, 0.5, 1][Math.floor(i / cols)]! : 0));
const oldLogProb = seq((i) => -0.5 - 0.1 * (i % 7));
const logProb = seq((i) => -0.45 - 0.12 * (i % 5));
const advantages = seq((i) => [1, -1, 0.5, -0.25][Math.floor(i / cols)]!);
const values = seq((i) => 0.1 * (i % 4));
const logits = roomy(
  Float32Array,
  Array.from({ length: n * 3 }, (_, i) => Math.sin(i)),
);
const outcome = { tokenLevelRewards, responseMask, index };
const policy = { oldLogProb, logProb, advantages, responseMask };
// one score per row for the scalar estimators: two groups of two and a singleton (which the
// leave-one-out preset must write as 0 into a reused buffer)
const scores = roomy(Float64Array, [1, 0, 0.5, 0.25, 2]);
const scoreIndex = ['p0', 'p0', 'p1', 'p1', 'p2'];
const rollout = { oldLogProb, rolloutLogProb: logProb, responseMask };
const correction = {
  is: { level: 'token', threshold: 1.2 },
  rejection: { rolloutRs: 'token_k2', threshold: '0.02' },
} as const;

type Opts = Record<string, unknown>;
interface Case {
  name: string;
  /** Calls the kernel with `extra` merged into its options. */
  call: (extra: Opts) => unknown;
  /** The output options and how to find each output in the result. */
  outputs: { option: string; length: number; f64?: boolean; pick: (r: unknown) => unknown }[];
  /** The typed-array inputs `call` passes, by the name the kernel's errors give them. */
  inputs: Record<string, Float32Array | Float64Array>;
}

const adv = (r: unknown) => (r as { advantages: unknown }).advantages;
const ret = (r: unknown) => (r as { returns: unknown }).returns;
const perToken = (r: unknown) => (r as { perTokenLoss: unknown }).perTokenLoss;
const self = (r: unknown) => r;
const A = (pick: (r: unknown) => unknown = adv) => ({ option: 'out', length: n, pick });
const R = { option: 'outReturns', length: n, pick: ret };
const rowsOut = { option: 'out', length: rows, f64: true, pick: self };
const scoresOut = { option: 'out', length: scores.length, f64: true, pick: self };
const W = { option: 'outWeights', length: n, pick: (r: unknown) => (r as { weights: unknown }).weights };
const M = { option: 'outMask', length: n, pick: (r: unknown) => (r as { mask: unknown }).mask };

const rewardBaselines = roomy(Float64Array, [0.5, 0, 1, 0.25]);
const outcomeIn = { token_level_rewards: tokenLevelRewards, response_mask: responseMask };
const policyIn = { old_log_prob: oldLogProb, log_prob: logProb, advantages, response_mask: responseMask };
const logRatioIn = { log_ratio: values, response_mask: responseMask };

const cases: Case[] = [
  {
    name: 'grpoScalarAdvantages',
    call: (o) => grpoScalarAdvantages(scores, scoreIndex, o),
    outputs: [scoresOut],
    inputs: { scores },
  },
  {
    name: 'presetAdvantages verl',
    call: (o) => presetAdvantages('verl', scores, scoreIndex, o),
    outputs: [scoresOut],
    inputs: { scores },
  },
  {
    name: 'presetAdvantages nemo-rl',
    call: (o) => presetAdvantages('nemo-rl', scores, scoreIndex, o),
    outputs: [scoresOut],
    inputs: { scores },
  },
  { name: 'grpoAdvantage', call: (o) => grpoAdvantage(outcome, shape, o), outputs: [A()], inputs: outcomeIn },
  {
    name: 'grpoVectorizedAdvantage',
    call: (o) => grpoVectorizedAdvantage(outcome, shape, o),
    outputs: [A()],
    inputs: outcomeIn,
  },
  { name: 'rlooAdvantage', call: (o) => rlooAdvantage(outcome, shape, o), outputs: [A()], inputs: outcomeIn },
  {
    name: 'rlooVectorizedAdvantage',
    call: (o) => rlooVectorizedAdvantage(outcome, shape, o),
    outputs: [A()],
    inputs: outcomeIn,
  },
  { name: 'opoAdvantage', call: (o) => opoAdvantage(outcome, shape, o), outputs: [A()], inputs: outcomeIn },
  { name: 'gpgAdvantage', call: (o) => gpgAdvantage(outcome, shape, o), outputs: [A()], inputs: outcomeIn },
  {
    name: 'grpoPasskAdvantage',
    call: (o) => grpoPasskAdvantage(outcome, shape, o),
    outputs: [A()],
    inputs: outcomeIn,
  },
  {
    name: 'reinforcePlusPlusBaselineAdvantage',
    call: (o) => reinforcePlusPlusBaselineAdvantage(outcome, shape, o),
    outputs: [A()],
    inputs: outcomeIn,
  },
  {
    name: 'remaxAdvantage',
    call: (o) => remaxAdvantage({ tokenLevelRewards, rewardBaselines, responseMask }, shape, o),
    outputs: [A(), R],
    inputs: { ...outcomeIn, reward_baselines: rewardBaselines },
  },
  {
    name: 'reinforcePlusPlusAdvantage',
    call: (o) => reinforcePlusPlusAdvantage({ tokenLevelRewards, responseMask }, shape, { gamma: 0.9, ...o }),
    outputs: [A(), R],
    inputs: outcomeIn,
  },
  {
    name: 'gaeAdvantageReturn',
    call: (o) =>
      gaeAdvantageReturn({ tokenLevelRewards, values, responseMask }, shape, { gamma: 0.9, lam: 0.8, ...o }),
    outputs: [A(), R],
    inputs: { ...outcomeIn, values },
  },
  {
    name: 'optimalTokenBaselineAdvantage',
    call: (o) =>
      optimalTokenBaselineAdvantage({ ...outcome, oldLogProbs: oldLogProb, sumPiSquared: values }, shape, o),
    outputs: [A(), R],
    inputs: { ...outcomeIn, old_log_probs: oldLogProb, sum_pi_squared: values },
  },
  {
    name: 'multiTurnOptimalTokenBaselineAdvantage',
    call: (o) =>
      multiTurnOptimalTokenBaselineAdvantage(
        { ...outcome, oldLogProbs: oldLogProb, sumPiSquared: values },
        shape,
        o,
      ),
    outputs: [A(), R],
    inputs: { ...outcomeIn, old_log_probs: oldLogProb, sum_pi_squared: values },
  },
  {
    name: 'policyLossVanilla',
    call: (o) => policyLossVanilla(policy, shape, o),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossVanillaGrad',
    call: (o) => policyLossVanillaGrad(policy, shape, { lossAggMode: 'seq-mean-token-mean', ...o }),
    outputs: [
      A(perToken),
      { option: 'outGrad', length: n, f64: true, pick: (r) => (r as { grad: unknown }).grad },
    ],
    inputs: policyIn,
  },
  {
    name: 'policyLossGspo',
    call: (o) => policyLossGspo(policy, shape, o),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossSapo',
    call: (o) => policyLossSapo(policy, shape, o),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossCispo',
    call: (o) => policyLossCispo(policy, shape, o),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossGpg',
    call: (o) => policyLossGpg(policy, shape, o),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossReinforce',
    call: (o) =>
      policyLossReinforce({ rolloutLogProb: oldLogProb, logProb, advantages, responseMask }, shape, o),
    outputs: [A(perToken)],
    inputs: { rollout_log_prob: oldLogProb, log_prob: logProb, advantages, response_mask: responseMask },
  },
  {
    name: 'policyLossClipCov',
    call: (o) => policyLossClipCov(policy, shape, { clipCovRatio: 1, random: () => 0.5, ...o }),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossKlCov',
    call: (o) => policyLossKlCov(policy, shape, o),
    outputs: [A(perToken)],
    inputs: policyIn,
  },
  {
    name: 'policyLossGeoMean',
    call: (o) => policyLossGeoMean(policy, shape, o),
    outputs: [
      {
        option: 'outPerSequence',
        length: rows,
        f64: true,
        pick: (r) => (r as { perSequenceLoss: unknown }).perSequenceLoss,
      },
    ],
    inputs: policyIn,
  },
  {
    name: 'aggLossGrad',
    call: (o) => aggLossGrad(responseMask, shape, 'seq-mean-token-mean', o),
    outputs: [{ option: 'out', length: n, f64: true, pick: self }],
    inputs: { loss_mask: responseMask },
  },
  {
    name: 'klPenalty',
    call: (o) =>
      klPenalty({ logprob: logProb, refLogprob: oldLogProb }, 'k3', { shape, mask: responseMask, ...o }),
    outputs: [A(self)],
    inputs: { logprob: logProb, ref_logprob: oldLogProb, response_mask: responseMask },
  },
  {
    name: 'applyKlPenalty',
    call: (o) =>
      applyKlPenalty(
        { tokenLevelScores: tokenLevelRewards, oldLogProb: logProb, refLogProb: oldLogProb, responseMask },
        shape,
        0.1,
        'kl',
        o,
      ),
    outputs: [
      A((r) => (r as { tokenLevelRewards: unknown }).tokenLevelRewards),
      { option: 'outKld', length: n, pick: (r) => (r as { kld: unknown }).kld },
    ],
    inputs: {
      token_level_scores: tokenLevelRewards,
      old_log_prob: logProb,
      ref_log_prob: oldLogProb,
      response_mask: responseMask,
    },
  },
  {
    name: 'computeRewards',
    call: (o) =>
      computeRewards(
        { tokenLevelScores: tokenLevelRewards, oldLogProb: logProb, refLogProb: oldLogProb },
        shape,
        0.1,
        o,
      ),
    outputs: [A(self)],
    inputs: { token_level_scores: tokenLevelRewards, old_log_prob: logProb, ref_log_prob: oldLogProb },
  },
  {
    name: 'entropyFromLogits',
    call: (o) => entropyFromLogits(logits, { rows, cols, vocab: 3 }, o),
    outputs: [A(self)],
    inputs: { logits },
  },
  {
    name: 'maskedWhiten',
    call: (o) => maskedWhiten({ values, mask: responseMask }, shape, o),
    outputs: [A(self)],
    inputs: { values, mask: responseMask },
  },
  {
    name: 'maskedRowSums',
    call: (o) => maskedRowSums({ values, mask: responseMask }, shape, 'values', o),
    outputs: [rowsOut],
    inputs: { values, mask: responseMask },
  },
  {
    name: 'maskedRowMeans',
    call: (o) => maskedRowMeans({ values, mask: responseMask }, shape, 'values', o),
    outputs: [rowsOut],
    inputs: { values, mask: responseMask },
  },
  {
    name: 'rolloutIsWeights',
    call: (o) => rolloutIsWeights({ logRatio: values, responseMask }, shape, { level: 'sequence', ...o }),
    outputs: [A((r) => (r as { weights: unknown }).weights)],
    inputs: logRatioIn,
  },
  {
    name: 'rolloutRejectionMask',
    call: (o) =>
      rolloutRejectionMask(
        { logRatio: values, responseMask },
        shape,
        { rolloutRs: 'token_k1', threshold: '0.15' },
        o,
      ),
    outputs: [A((r) => (r as { mask: unknown }).mask)],
    inputs: logRatioIn,
  },
  {
    name: 'rolloutCorrection',
    call: (o) => rolloutCorrection(rollout, shape, { ...correction, ...o }),
    outputs: [W, M],
    inputs: { old_log_prob: oldLogProb, rollout_log_prob: logProb, response_mask: responseMask },
  },
  {
    name: 'rolloutCorrection without rejection',
    call: (o) => rolloutCorrection(rollout, shape, { is: correction.is, ...o }),
    outputs: [M],
    inputs: { old_log_prob: oldLogProb, rollout_log_prob: logProb, response_mask: responseMask },
  },
  // both loss types: each passes `out` to its own inner loss (vanilla or REINFORCE)
  {
    name: 'policyLossBypass reinforce',
    call: (o) => policyLossBypass(policy, shape, { lossType: 'reinforce', ...correction, ...o }),
    outputs: [A(perToken), W, M],
    inputs: policyIn,
  },
  {
    name: 'policyLossBypass ppo_clip',
    call: (o) => policyLossBypass(policy, shape, { lossType: 'ppo_clip', ...correction, ...o }),
    outputs: [A(perToken), W, M],
    inputs: policyIn,
  },
];

/** The bytes of a typed array (its own range of its buffer), so that -0, +0 and NaN payloads compare exactly. */
const bytesOf = (x: unknown) => {
  const a = x as Float32Array;
  return Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
};

describe('out: every allocating kernel writes into a caller buffer', () => {
  for (const c of cases) {
    for (const o of c.outputs) {
      it(`${c.name} { ${o.option} }: the buffer is the result, equal to the allocating call`, () => {
        const fresh = o.pick(c.call({}));
        const dirty = o.f64 ? new Float64Array(o.length).fill(7.5) : new Float32Array(o.length).fill(7.5);
        const reused = o.pick(c.call({ [o.option]: dirty }));
        expect(reused).toBe(dirty);
        expect(bytesOf(reused)).toEqual(bytesOf(fresh));
      });
      it(`${c.name} { ${o.option} }: a wrong length or type is a LabError naming ${o.option}`, () => {
        const Type = o.f64 ? Float64Array : Float32Array;
        expectLabError(() => c.call({ [o.option]: new Type(o.length + 1) }), 'SHAPE_MISMATCH', o.option);
        const Other = o.f64 ? Float32Array : Float64Array;
        expectLabError(() => c.call({ [o.option]: new Other(o.length) }), 'BAD_ARGUMENT', o.option);
      });
    }
  }
});

describe('out: the composite rollout correction', () => {
  it('the test batch exercises both arrays: some weights truncated, some tokens rejected', () => {
    const r = rolloutCorrection(rollout, shape, correction);
    const w = Array.from(r.weights ?? []);
    expect(w.filter((v) => v === Math.fround(1.2)).length).toBeGreaterThan(0);
    const kept = Array.from(r.mask).filter((v) => v === 1).length;
    const valid = Array.from(responseMask).filter((v) => v === 1).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(valid);
  });
  it('without rejection the mask written into outMask is the response mask', () => {
    const buf = new Float32Array(n).fill(7.5);
    const r = rolloutCorrection(rollout, shape, { outMask: buf });
    expect(r.mask).toBe(buf);
    expect(Array.from(buf)).toEqual(Array.from(responseMask));
  });
  it('outWeights is checked but left untouched when IS is disabled (weights is null)', () => {
    const buf = new Float32Array(n).fill(7.5);
    const r = rolloutCorrection(rollout, shape, { outWeights: buf });
    expect(r.weights).toBeNull();
    expect(Array.from(buf)).toEqual(new Array(n).fill(7.5));
    expectLabError(
      () => rolloutCorrection(rollout, shape, { outWeights: new Float32Array(n - 1) }),
      'SHAPE_MISMATCH',
      'outWeights',
    );
  });
  it('is.out from JavaScript is refused, not silently replaced by outWeights', () => {
    const is = { level: 'token', out: new Float32Array(n) } as unknown as { level: 'token' };
    expectLabError(() => rolloutCorrection(rollout, shape, { is }), 'BAD_ARGUMENT', 'is.out');
  });
});

type Output = Case['outputs'][number];
/** A view of `o`'s type and length on `buffer` at byte `offset`. */
const viewOf = (o: Output, buffer: ArrayBufferLike, offset: number) =>
  o.f64 ? new Float64Array(buffer, offset, o.length) : new Float32Array(buffer, offset, o.length);
const align8 = (x: number) => Math.ceil(x / 8) * 8;

// an aliasing test whose kernel lacks the check writes into the shared inputs: put them back
const shared = [
  tokenLevelRewards,
  responseMask,
  oldLogProb,
  logProb,
  advantages,
  values,
  logits,
  scores,
  rewardBaselines,
];
const pristine = shared.map((a) => new Uint8Array(a.buffer).slice());

describe('out: a buffer sharing memory with an input or another output is refused', () => {
  afterEach(() => {
    shared.forEach((a, k) => {
      new Uint8Array(a.buffer).set(pristine[k] as Uint8Array);
    });
  });

  for (const c of cases) {
    const inputNames = Object.keys(c.inputs);
    it(`${c.name}: the table lists its typed-array inputs`, () => {
      expect(inputNames.length).toBeGreaterThan(0);
    });
    it(`${c.name}: an output over an input (whole or in part) is BAD_ARGUMENT naming both, nothing written`, () => {
      for (const o of c.outputs) {
        for (const name of inputNames) {
          const input = c.inputs[name] as Float32Array;
          const before = bytesOf(input);
          for (const shift of [0, 8]) {
            const alias = viewOf(o, input.buffer, input.byteOffset + shift);
            const err = expectLabError(
              () => c.call({ [o.option]: alias }),
              'BAD_ARGUMENT',
              `${o.option}: shares memory with ${name}; pass a separate buffer`,
            );
            expect(err.details).toEqual({ field: o.option, input: name });
            expect(bytesOf(input)).toEqual(before);
          }
        }
      }
    });
    if (c.outputs.length > 1) {
      it(`${c.name}: two outputs over the same memory are BAD_ARGUMENT naming both (every pair)`, () => {
        c.outputs.forEach((o1, k) => {
          for (const o2 of c.outputs.slice(k + 1)) {
            const buffer = new ArrayBuffer(16 * n);
            const err = expectLabError(
              () => c.call({ [o1.option]: viewOf(o1, buffer, 0), [o2.option]: viewOf(o2, buffer, 8) }),
              'BAD_ARGUMENT',
              'shares memory with',
            );
            expect([err.details?.field, err.details?.input].sort()).toEqual([o1.option, o2.option].sort());
          }
        });
      });
    }
    it(`${c.name}: outputs in an input's ArrayBuffer right after it are accepted, same bits`, () => {
      const fresh = c.call({});
      for (const name of inputNames) {
        const input = c.inputs[name] as Float32Array;
        let at = align8(input.byteOffset + input.byteLength);
        const extra: Opts = {};
        for (const o of c.outputs) {
          const v = viewOf(o, input.buffer, at).fill(7.5);
          extra[o.option] = v;
          at = align8(at + v.byteLength);
        }
        const r = c.call(extra);
        for (const o of c.outputs) {
          expect(o.pick(r)).toBe(extra[o.option]);
          expect(bytesOf(o.pick(r))).toEqual(bytesOf(o.pick(fresh)));
        }
      }
    });
  }
});
