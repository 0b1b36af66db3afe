import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { centralDifferences } from '../../test/support/finiteDifference.js';
import { Rng } from '../random.js';
import { ContextPolicy, chainLogProbGrad } from './contextPolicy.js';

function randomPolicy(seed: number, contexts = 3, vocab = 4): ContextPolicy {
  const p = new ContextPolicy(contexts, vocab);
  const rng = new Rng(seed);
  for (let i = 0; i < p.logits.length; i++) p.logits[i] = rng.next() * 4 - 2;
  return p;
}

describe('ContextPolicy', () => {
  it('starts from the given token logits in every context', () => {
    const p = new ContextPolicy(2, 3, { tokenLogits: [0, 0, Math.log(2)] });
    const probs = p.probabilities();
    // softmax of [0, 0, ln 2] = [1/4, 1/4, 1/2]
    expect(Array.from(probs)).toEqual([0.25, 0.25, 0.5, 0.25, 0.25, 0.5].map((x) => expect.closeTo(x, 12)));
    expect(p.logProb(1, 2)).toBeCloseTo(Math.log(0.5), 12);
  });

  it('property: probabilities are a distribution per context and logProb matches them', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), (seed) => {
        const p = randomPolicy(seed);
        const probs = p.probabilities();
        for (let c = 0; c < p.contexts; c++) {
          let s = 0;
          for (let v = 0; v < p.vocab; v++) {
            s += probs[c * p.vocab + v] as number;
            expect(Math.exp(p.logProb(c, v))).toBeCloseTo(probs[c * p.vocab + v] as number, 12);
          }
          expect(s).toBeCloseTo(1, 12);
        }
        const logs = p.logProbabilities();
        for (let i = 0; i < logs.length; i++) {
          expect(Math.exp(logs[i] as number)).toBeCloseTo(probs[i] as number, 12);
          // one log-sum-exp for both: the single lookup is the table entry to the bit
          expect(p.logProb(Math.floor(i / p.vocab), i % p.vocab)).toBe(logs[i]);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('is stable for large logits', () => {
    const p = new ContextPolicy(1, 2, { tokenLogits: [1000, 0] });
    expect(p.logProb(0, 0)).toBeCloseTo(0, 12);
    expect(p.logProb(0, 1)).toBeCloseTo(-1000, 9);
    // where the probability underflows to 0, the log-prob table stays finite
    expect(p.probabilities()[1]).toBe(0);
    expect(p.logProbabilities()[1]).toBeCloseTo(-1000, 9);
  });

  it('samples with the table frequencies', () => {
    const p = new ContextPolicy(1, 3, {
      tokenLogits: [0, Math.log(3), -Infinity].map((x) => (x === -Infinity ? -50 : x)),
    });
    const probs = p.probabilities();
    const rng = new Rng(9);
    const counts = [0, 0, 0];
    for (let i = 0; i < 8000; i++) counts[ContextPolicy.sample(probs, 3, 0, rng)]! += 1;
    // expected 2000 / 6000 / 0; 5 sigma of a binomial(8000, 1/4) is ~194
    expect(Math.abs((counts[0] as number) - 2000)).toBeLessThan(200);
    expect(counts[2]).toBe(0);
  });

  it('rejects bad sizes, bad init and out-of-range indices', () => {
    expect(() => new ContextPolicy(0, 3)).toThrow(/size/);
    expect(() => new ContextPolicy(2, 3, { tokenLogits: [0, 0] })).toThrow(/tokenLogits/);
    expect(() => new ContextPolicy(2, 3, { tokenLogits: [0, Number.NaN, 0] })).toThrow(/not finite/);
    expect(() => new ContextPolicy(2, 3).logProb(2, 0)).toThrow(/context 2/);
    expect(() => new ContextPolicy(2, 3).logProb(0, 3)).toThrow(/token 3/);
  });
});

describe('chainLogProbGrad', () => {
  it('matches central finite differences of sum_i g_i log pi(tok_i | ctx_i)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1e6 }),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 2 }),
            fc.integer({ min: 0, max: 3 }),
            fc.double({ min: -2, max: 2, noNaN: true }),
          ),
          {
            minLength: 1,
            maxLength: 12,
          },
        ),
        (seed, items) => {
          const p = randomPolicy(seed);
          const ctx = items.map((x) => x[0]);
          const tok = items.map((x) => x[1]);
          const g = items.map((x) => x[2]);
          const objective = () =>
            items.reduce((s, _, i) => s + (g[i] as number) * p.logProb(ctx[i]!, tok[i]!), 0);
          const grad = chainLogProbGrad(p.probabilities(), p.contexts, p.vocab, ctx, tok, g);
          const fd = centralDifferences(objective, p.logits, 1e-6);
          for (let k = 0; k < p.logits.length; k++) expect(grad[k]).toBeCloseTo(fd[k] as number, 6);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('gives zero gradient to contexts that no weighted position uses', () => {
    const p = randomPolicy(4);
    const grad = chainLogProbGrad(p.probabilities(), 3, 4, [0, 2, 1], [1, 3, 0], [0.5, -1, 0]);
    expect(Array.from(grad.slice(4, 8))).toEqual([0, 0, 0, 0]);
    // a context's gradient row sums to zero (softmax is shift-invariant)
    expect(grad.slice(0, 4).reduce((a, b) => a + b, 0)).toBeCloseTo(0, 12);
  });

  it('rejects mismatched lengths and non-finite gradients', () => {
    const p = randomPolicy(1);
    expect(() => chainLogProbGrad(p.probabilities(), 3, 4, [0], [1, 2], [1])).toThrow(/differ in length/);
    expect(() => chainLogProbGrad(p.probabilities(), 3, 4, [0], [1], [Number.NaN])).toThrow(/position 0/);
  });
});
