import { describe, expect, it } from 'vitest';
import { centralDifferences } from '../../test/support/finiteDifference.js';
import { LOSS_AGG_MODES } from '../core/aggLoss.js';
import {
  contextCount,
  contextIndex,
  ROLE_ENV,
  ROLE_MODEL,
  runTokenEpisode,
  sampleTokenTask,
  TOK_ADD,
  TOK_DIGIT0,
  TOK_READ,
  TOK_SUBMIT,
  type TokenEpisode,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import { tabularModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';
import {
  gatherLogProbs,
  MASK_RULES,
  outcomeTokenRewards,
  packTranscripts,
  responseMaskFromRoles,
  tokenGroupAdvantages,
  tokenLossAndGrad,
} from './tokenLearner.js';

const M = ROLE_MODEL;
const E = ROLE_ENV;

/** Episodes sampled by `policy` on fresh tasks (budget 20, noisy tools). */
function sampleEpisodes(policy: ContextPolicy, n: number, seed: number): TokenEpisode[] {
  const rng = new Rng(seed);
  const probs = policy.probabilities();
  const pick = rng.fork('policy');
  const noise = rng.fork('noise');
  return Array.from({ length: n }, (_, i) =>
    runTokenEpisode(
      sampleTokenTask(rng.fork(`task${i}`)),
      (ctx) => ContextPolicy.sample(probs, VOCAB_SIZE, ctx, pick),
      noise,
      { budget: 20, toolErrorRate: 0.3 },
    ),
  );
}

function randomPolicy(seed: number, spread = 1.5): ContextPolicy {
  const p = new ContextPolicy(contextCount(3), VOCAB_SIZE);
  const rng = new Rng(seed);
  for (let i = 0; i < p.logits.length; i++) p.logits[i] = (rng.next() * 2 - 1) * spread;
  return p;
}

describe('packing, masks and rewards', () => {
  const transcripts = [
    { tokens: [0, 6, 7], contexts: [0, 3, 3], roles: [M, E, E] },
    { tokens: [5, 5, 0, 9, 1], contexts: [0, 1, 2, 4, 4], roles: [M, M, M, E, M] },
    { tokens: [20], contexts: [7], roles: [M] },
  ];

  it('right-pads to the longest transcript with role 0', () => {
    const b = packTranscripts(transcripts);
    expect(b.shape).toEqual({ rows: 3, cols: 5 });
    expect(Array.from(b.lengths)).toEqual([3, 5, 1]);
    expect(Array.from(b.roles)).toEqual([1, 2, 2, 0, 0, 1, 1, 1, 2, 1, 1, 0, 0, 0, 0]);
    expect(Array.from(b.tokens.slice(5, 10))).toEqual([5, 5, 0, 9, 1]);
    expect(b.contexts[14]).toBe(0);
  });

  it('builds verl response masks from roles: model tokens only, or env tokens too; padding always 0', () => {
    const b = packTranscripts(transcripts);
    expect(Array.from(responseMaskFromRoles(b, 'model_tokens'))).toEqual([
      1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 0, 0,
    ]);
    expect(Array.from(responseMaskFromRoles(b, 'all_tokens'))).toEqual([
      1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0,
    ]);
    expect(() => responseMaskFromRoles(b, 'attention' as 'all_tokens')).toThrow(/mask rule/);
  });

  it('on real episodes the correct mask counts exactly the model tokens', () => {
    // a random policy calls a tool in a few episodes of a hundred: enough episodes that some do
    const eps = sampleEpisodes(randomPolicy(3, 0.5), 200, 8);
    const b = packTranscripts(eps);
    const correct = responseMaskFromRoles(b, 'model_tokens');
    const flipped = responseMaskFromRoles(b, 'all_tokens');
    eps.forEach((ep, r) => {
      const row = (m: Float32Array) =>
        m.slice(r * b.shape.cols, (r + 1) * b.shape.cols).reduce((x, y) => x + y, 0);
      expect(row(correct)).toBe(ep.modelTokens);
      expect(row(flipped)).toBe(ep.modelTokens + ep.envTokens);
    });
    expect(eps.some((e) => e.envTokens > 0)).toBe(true);
  });

  it('rejects inconsistent transcripts and bad roles', () => {
    expect(() => packTranscripts([])).toThrow(/no transcripts/);
    expect(() => packTranscripts([{ tokens: [1, 2], contexts: [0], roles: [M, M] }])).toThrow(/transcript 0/);
    expect(() => packTranscripts([{ tokens: [1], contexts: [0], roles: [0] }])).toThrow(/role 0 at token 0/);
  });

  it('places each score on the last transcript token; GRPO sees it', () => {
    const b = packTranscripts(transcripts);
    const r = outcomeTokenRewards([1, 0.5, 2], b);
    expect(r[2]).toBe(1);
    expect(r[9]).toBe(0.5);
    expect(r[10]).toBe(2);
    expect(r.reduce((x, y) => x + y, 0)).toBe(3.5);
    // one group of three: scores 1, 0.5, 2 -> mean 7/6, unbiased std sqrt(((1/6)^2+(2/3)^2+(5/6)^2)/2)
    const mask = responseMaskFromRoles(b, 'model_tokens');
    const adv = tokenGroupAdvantages([1, 0.5, 2], ['g', 'g', 'g'], b, mask);
    const std = Math.sqrt(((1 / 6) ** 2 + (2 / 3) ** 2 + (5 / 6) ** 2) / 2);
    expect(adv[0]).toBeCloseTo((1 - 7 / 6) / (std + 1e-6), 6);
    expect(adv[1]).toBe(0); // env token, mask 0
    expect(adv[10]).toBeCloseTo((2 - 7 / 6) / (std + 1e-6), 6);
    expect(() => outcomeTokenRewards([1, 2], b)).toThrow(/expected 3/);
  });
});

describe('tokenLossAndGrad: chained gradient vs finite differences', () => {
  for (const mode of LOSS_AGG_MODES) {
    for (const rule of MASK_RULES) {
      it(`${mode}, ${rule}: dLoss/dlogits matches central differences`, () => {
        const policy = randomPolicy(11);
        const eps = sampleEpisodes(policy, 12, 21);
        const batch = packTranscripts(eps);
        const mask = responseMaskFromRoles(batch, rule);
        // old log-probs from a different policy so ratios spread across both clip sides
        const old = randomPolicy(11);
        const jitter = new Rng(5);
        for (let i = 0; i < old.logits.length; i++)
          old.logits[i] = (old.logits[i] as number) + (jitter.next() - 0.5) * 0.8;
        const oldLp = gatherLogProbs(old.logProbabilities(), VOCAB_SIZE, batch);
        const scores = eps.map((_, i) => (i % 3 === 0 ? 1 : i % 3 === 1 ? 0 : 0.4));
        const adv = tokenGroupAdvantages(
          scores,
          eps.map((_, i) => i % 4),
          batch,
          mask,
        );
        const options = { lossAggMode: mode, clipRatio: 0.2, clipRatioC: 3 } as const;
        const res = tokenLossAndGrad(policy, batch, oldLp, adv, mask, options);
        const loss = () => tokenLossAndGrad(policy, batch, oldLp, adv, mask, options).loss;
        const fds = centralDifferences(loss, policy.logits, 1e-6);
        let checked = 0;
        let nonzero = 0;
        for (let k = 0; k < policy.logits.length; k++) {
          const fd = fds[k] as number;
          expect(Math.abs((res.gradLogits[k] as number) - fd)).toBeLessThan(1e-6 + 1e-5 * Math.abs(fd));
          checked++;
          if (Math.abs(fd) > 1e-4) nonzero++;
        }
        expect(checked).toBe(policy.logits.length);
        expect(nonzero).toBeGreaterThan(10); // the check is not vacuous
      });
    }
  }
});

describe('training on environment tokens changes the next decision', () => {
  it('with env tokens masked 1, a rewarded transcript raises P(digit | read context); with the correct mask it does not', () => {
    const read = contextIndex('add', 1, false, 0, 3);
    const fresh = contextIndex('add', 0, false, 0, 3);
    const computed = contextIndex('add', 2, false, 0, 3);
    const d = (n: number) => TOK_DIGIT0 + n;
    // two transcripts of one group: a success (score 1) and a protocol error (score 0)
    const good = {
      tokens: [TOK_READ, d(4), d(7), TOK_ADD, d(5), TOK_SUBMIT],
      contexts: [fresh, read, read, read, computed, computed],
      roles: [M, E, E, M, E, M],
    };
    const bad = { tokens: [TOK_SUBMIT], contexts: [fresh], roles: [M] };
    const batch = packTranscripts([good, bad]);
    const pDigit4 = (rule: 'model_tokens' | 'all_tokens') => {
      const policy = new ContextPolicy(contextCount(3), VOCAB_SIZE);
      const mask = responseMaskFromRoles(batch, rule);
      const old = gatherLogProbs(policy.logProbabilities(), VOCAB_SIZE, batch);
      const adv = tokenGroupAdvantages([1, 0], [0, 0], batch, mask);
      ppoUpdate(
        tabularModel(policy),
        new Optimizer(policy.logits.length, { kind: 'sgd', learningRate: 1 }),
        { batch, mask, advantages: adv, oldLogProb: old },
        { epochs: 1 },
      );
      return policy.probabilities()[read * VOCAB_SIZE + d(4)] as number;
    };
    const uniform = 1 / VOCAB_SIZE;
    expect(pDigit4('all_tokens')).toBeGreaterThan(uniform * 1.01);
    expect(pDigit4('model_tokens')).toBeLessThan(uniform);
  });
});
