import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../random.js';
import { sampleTruncated, truncatedLogProbs, truncationMask } from './truncatedSampling.js';

/**
 * The kept set computed directly from the definition: rank by logit (lowest id first among ties);
 * top-k keeps every token whose logit is ≥ the k-th largest; top-p keeps, among those, each token
 * whose higher-ranked tokens hold probability (renormalised over the top-k set) < p.
 */
function referenceKept(z: number[], topK: number | undefined, topP: number): Set<number> {
  const order = z.map((_, v) => v).sort((a, b) => (z[b] as number) - (z[a] as number) || a - b);
  const kth =
    topK === undefined || topK >= z.length
      ? Number.NEGATIVE_INFINITY
      : (z[order[topK - 1] as number] as number);
  const topKSet = order.filter((v) => (z[v] as number) >= kth);
  const total = topKSet.reduce((s, v) => s + Math.exp(z[v] as number), 0);
  const kept = new Set<number>();
  let above = 0;
  for (const v of topKSet) {
    if (above < topP) kept.add(v);
    above += Math.exp(z[v] as number) / total;
  }
  return kept;
}

const logSumExp = (xs: number[]) => {
  const m = Math.max(...xs);
  return m + Math.log(xs.reduce((s, x) => s + Math.exp(x - m), 0));
};

describe('truncated sampling: direct computation', () => {
  const probs = [0.5, 0.3, 0.15, 0.05];
  const z = probs.map(Math.log);

  it('top_p = 0.7 keeps {0, 1} (0.5 < 0.7 is not enough, 0.8 reaches it); engine log-prob renormalises', () => {
    expect(Array.from(truncationMask(z, { topP: 0.7 }))).toEqual([1, 1, 0, 0]);
    const lp = truncatedLogProbs(z, { topP: 0.7 });
    expect(lp[0]).toBeCloseTo(Math.log(0.5 / 0.8), 14);
    expect(lp[1]).toBeCloseTo(Math.log(0.3 / 0.8), 14);
    expect(lp[2]).toBe(Number.NEGATIVE_INFINITY);
  });

  it('top_p = 0.4 keeps only the top token; top_p = 0.99 keeps all four', () => {
    expect(Array.from(truncationMask(z, { topP: 0.4 }))).toEqual([1, 0, 0, 0]);
    expect(Array.from(truncationMask(z, { topP: 0.99 }))).toEqual([1, 1, 1, 1]);
  });

  it('top_k keeps ties with the k-th largest logit (vLLM masks only logits strictly below it)', () => {
    expect(Array.from(truncationMask([1, 0, 1, 1], { topK: 1 }))).toEqual([1, 0, 1, 1]);
    expect(Array.from(truncationMask([3, 0, 2, 1], { topK: 2 }))).toEqual([1, 0, 1, 0]);
  });

  it('top-p applies to the distribution renormalised after top-k', () => {
    // after top_k = 2: probs 0.5/0.8 = 0.625 and 0.375; top_p = 0.6 keeps only the first
    expect(Array.from(truncationMask(z, { topK: 2, topP: 0.6 }))).toEqual([1, 0, 0, 0]);
    // without top-k, 0.5 < 0.6 and token 1 is kept as well
    expect(Array.from(truncationMask(z, { topP: 0.6 }))).toEqual([1, 1, 0, 0]);
  });

  it('sampleTruncated returns the engine log-prob and the full-softmax log-prob of its token', () => {
    const rng = new Rng(3);
    for (let i = 0; i < 50; i++) {
      const s = sampleTruncated(z, rng, { topP: 0.7 });
      expect([0, 1]).toContain(s.token);
      expect(s.kept).toBe(2);
      expect(s.engineLogProb).toBeCloseTo(Math.log((probs[s.token] as number) / 0.8), 14);
      expect(s.fullLogProb).toBeCloseTo(Math.log(probs[s.token] as number), 14);
    }
  });

  it('draws follow the truncated distribution (20000 draws, each frequency within 4 sd)', () => {
    const rng = new Rng(11);
    const counts = [0, 0, 0, 0];
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const t = sampleTruncated(z, rng, { topK: 3 }).token;
      counts[t] = (counts[t] as number) + 1;
    }
    const p = [0.5, 0.3, 0.15].map((x) => x / 0.95).concat(0);
    counts.forEach((c, v) => {
      const sd = Math.sqrt(n * (p[v] as number) * (1 - (p[v] as number)));
      expect(Math.abs(c - n * (p[v] as number))).toBeLessThanOrEqual(4 * sd + 1e-9);
    });
    expect(counts[3]).toBe(0);
  });

  it('-Infinity logits are masked tokens: never kept, never drawn', () => {
    const masked = [0, Number.NEGATIVE_INFINITY, 0];
    expect(Array.from(truncationMask(masked))).toEqual([1, 0, 1]);
    const rng = new Rng(1);
    for (let i = 0; i < 100; i++) expect(sampleTruncated(masked, rng, { topK: 3 }).token).not.toBe(1);
  });
});

const logitsArb = fc.array(fc.double({ min: -8, max: 8, noNaN: true }), { minLength: 1, maxLength: 24 });

describe('truncated sampling: properties', () => {
  it('the kept set equals the definition, for any logits, top_k and top_p', () => {
    fc.assert(
      fc.property(
        logitsArb,
        fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (z, topK, topP) => {
          const mask = truncationMask(z, { topK, topP });
          const want = referenceKept(z, topK, topP);
          expect(new Set(Array.from(mask.keys()).filter((v) => mask[v] === 1))).toEqual(want);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('engine log-prob ≥ full log-prob; the sampled token is kept; engine log-probs sum to 1', () => {
    fc.assert(
      fc.property(
        logitsArb,
        fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.integer(),
        (z, topK, topP, seed) => {
          const s = sampleTruncated(z, new Rng(seed), { topK, topP });
          const mask = truncationMask(z, { topK, topP });
          expect(mask[s.token]).toBe(1);
          expect(s.engineLogProb).toBeGreaterThanOrEqual(s.fullLogProb);
          expect(s.fullLogProb).toBeCloseTo((z[s.token] as number) - logSumExp(z), 12);
          const lp = truncatedLogProbs(z, { topK, topP });
          expect(lp[s.token]).toBe(s.engineLogProb);
          expect(Array.from(lp).reduce((a, x) => a + Math.exp(x), 0)).toBeCloseTo(1, 12);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('top_p = 1 and top_k ≥ V are the identity: same draw as the plain sampler, equal log-probs', () => {
    fc.assert(
      fc.property(logitsArb, fc.integer({ min: 0, max: 10 }), fc.integer(), (z, extra, seed) => {
        const s = sampleTruncated(z, new Rng(seed), { topK: z.length + extra, topP: 1 });
        const max = Math.max(...z);
        const plain = new Rng(seed).categorical(z.map((x) => Math.exp(x - max)));
        expect(s.token).toBe(plain);
        expect(s.kept).toBe(z.length);
        expect(s.engineLogProb).toBe(s.fullLogProb);
        expect(s.fullLogProb).toBeCloseTo((z[s.token] as number) - logSumExp(z), 12);
        expect(sampleTruncated(z, new Rng(seed)).token).toBe(plain);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('truncated sampling: bad input', () => {
  const z = [0, 1, 2];
  it.each([0, -0.1, 1.5, Number.NaN])('top_p = %s is refused naming top_p', (topP) => {
    expect(() => sampleTruncated(z, new Rng(1), { topP })).toThrow(
      expect.objectContaining({ code: 'BAD_ARGUMENT', message: expect.stringMatching(/^top_p:/) }),
    );
  });
  it.each([0, -1, 1.5])('top_k = %s is refused naming top_k', (topK) => {
    expect(() => truncationMask(z, { topK })).toThrow(
      expect.objectContaining({ code: 'BAD_ARGUMENT', message: expect.stringMatching(/^top_k:/) }),
    );
  });
  it('NaN or +Infinity logits are refused naming the token; all -Infinity is refused', () => {
    expect(() => truncatedLogProbs([0, Number.NaN])).toThrow(/logits: value NaN at token 1/);
    expect(() => truncatedLogProbs([Number.POSITIVE_INFINITY])).toThrow(
      expect.objectContaining({ code: 'NON_FINITE' }),
    );
    expect(() => truncatedLogProbs([Number.NEGATIVE_INFINITY])).toThrow(/every token is -Infinity/);
    expect(() => truncatedLogProbs([0, 1], {}, new Float64Array(3))).toThrow(
      expect.objectContaining({ code: 'SHAPE_MISMATCH' }),
    );
  });
});
