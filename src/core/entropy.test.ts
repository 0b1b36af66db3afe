import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeEntropyLoss, entropyFromLogits, entropyLossGrad } from './entropy.js';
import { LabError } from './errors.js';

describe('entropyFromLogits', () => {
  it('uniform logits give log V; a one-hot-like row gives ~0; two-way split gives ln 2', () => {
    const logits = Float64Array.of(0, 0, 0, 0, 1000, 0, 0, 0, 5, 5, -1e4, -1e4);
    const h = entropyFromLogits(logits, { rows: 1, cols: 3, vocab: 4 });
    expect(h[0]).toBeCloseTo(Math.log(4), 6);
    expect(h[1]).toBeCloseTo(0, 6);
    expect(h[2]).toBeCloseTo(Math.log(2), 6);
  });
  it('matches the direct formula -Σ p log p and is shift-invariant (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 2, maxLength: 8 }),
        fc.double({ min: -50, max: 50, noNaN: true }),
        (z, shift) => {
          const zs = Float64Array.from(z);
          const shape = { rows: 1, cols: 1, vocab: z.length };
          const norm = z.reduce((a, v) => a + Math.exp(v), 0);
          const direct = -z.reduce((a, v) => a + (Math.exp(v) / norm) * (v - Math.log(norm)), 0);
          const h = entropyFromLogits(zs, shape)[0] as number;
          expect(h).toBeCloseTo(direct, 5);
          expect(
            entropyFromLogits(
              zs.map((v) => v + shift),
              shape,
            )[0],
          ).toBeCloseTo(h, 4);
        },
      ),
    );
  });
  it('non-finite logits and shape mismatches are LabErrors naming logits', () => {
    expect(() => entropyFromLogits(Float64Array.of(0, Number.NaN), { rows: 1, cols: 1, vocab: 2 })).toThrow(
      /logits/,
    );
    expect(() => entropyFromLogits(Float64Array.of(0, 1, 2), { rows: 1, cols: 1, vocab: 2 })).toThrow(
      LabError,
    );
  });
});

describe('computeEntropyLoss', () => {
  it('aggregates the per-position entropy with agg_loss', () => {
    // row 0: uniform over 2 (ln 2) and certain (~0); row 1: uniform (ln 2), padded
    const logits = Float64Array.of(0, 0, 0, -1e4, 3, 3, 7, 7);
    const mask = Uint8Array.of(1, 1, 1, 0);
    const shape = { rows: 2, cols: 2, vocab: 2 };
    expect(computeEntropyLoss({ logits, responseMask: mask }, shape, 'token-mean')).toBeCloseTo(
      (2 * Math.log(2)) / 3,
      6,
    );
    expect(computeEntropyLoss({ logits, responseMask: mask }, shape, 'seq-mean-token-mean')).toBeCloseTo(
      (Math.log(2) / 2 + Math.log(2)) / 2,
      6,
    );
  });
});

describe('entropyLossGrad (the entropy bonus term)', () => {
  const shape = { rows: 2, cols: 3, vocab: 4 };
  const logits = Float64Array.from({ length: 24 }, (_, i) => Math.sin(1.7 * i) * 2);
  const mask = Float32Array.of(1, 1, 0, 1, 1, 1);
  for (const mode of ['token-mean', 'seq-mean-token-sum', 'seq-mean-token-mean'] as const) {
    it(`value equals computeEntropyLoss and the gradient passes a central finite difference (${mode})`, () => {
      const { value, grad } = entropyLossGrad({ logits, responseMask: mask }, shape, mode);
      expect(value).toBeCloseTo(computeEntropyLoss({ logits, responseMask: mask }, shape, mode), 5);
      const eps = 1e-5;
      for (let i = 0; i < logits.length; i++) {
        const up = Float64Array.from(logits);
        const dn = Float64Array.from(logits);
        up[i] = (up[i] as number) + eps;
        dn[i] = (dn[i] as number) - eps;
        const fd =
          (entropyLossGrad({ logits: up, responseMask: mask }, shape, mode).value -
            entropyLossGrad({ logits: dn, responseMask: mask }, shape, mode).value) /
          (2 * eps);
        expect(Math.abs((grad[i] as number) - fd)).toBeLessThan(1e-7);
      }
      // masked positions get no gradient
      for (let v = 0; v < 4; v++) expect(grad[2 * 4 + v]).toBe(0);
    });
  }
});
