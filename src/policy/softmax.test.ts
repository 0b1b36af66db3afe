import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { logSumExpRow, softmaxRow } from './softmax.js';

describe('softmaxRow', () => {
  it('logits [0, ln 2, ln 3] give probabilities 1/6, 2/6, 3/6', () => {
    const p = softmaxRow([0, Math.log(2), Math.log(3)], 0, 3, new Float64Array(3));
    [1 / 6, 2 / 6, 3 / 6].forEach((want, j) => {
      expect(p[j]).toBeCloseTo(want, 15);
    });
  });

  it('reads the row at offset and writes at outOffset, leaving the rest of out alone', () => {
    const out = new Float64Array([9, 9, 9, 9]);
    softmaxRow([7, 0, 0, 7], 1, 2, out, 2);
    expect(Array.from(out)).toEqual([9, 9, 0.5, 0.5]);
  });

  it('does not overflow for huge logits (exp(1000) alone is Infinity)', () => {
    const p = softmaxRow([1000, 1000 + Math.log(3)], 0, 2, new Float64Array(2));
    expect(p[0]).toBeCloseTo(0.25, 12);
    expect(p[1]).toBeCloseTo(0.75, 12);
  });
});

describe('logSumExpRow', () => {
  it('log(e^0 + e^ln2 + e^ln3) = ln 6, and stays finite at 1000', () => {
    expect(logSumExpRow([0, Math.log(2), Math.log(3)], 0, 3)).toBeCloseTo(Math.log(6), 14);
    expect(logSumExpRow([5, 1000, 1000], 1, 2)).toBeCloseTo(1000 + Math.LN2, 12);
  });

  it('property: z_j − logsumexp(z) is the log of softmax(z)_j, and the softmax sums to 1', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -30, max: 30, noNaN: true }), { minLength: 1, maxLength: 9 }),
        (z) => {
          const p = softmaxRow(z, 0, z.length, new Float64Array(z.length));
          const lse = logSumExpRow(z, 0, z.length);
          let total = 0;
          for (let j = 0; j < z.length; j++) {
            total += p[j] as number;
            expect((z[j] as number) - lse).toBeCloseTo(Math.log(p[j] as number), 9);
          }
          expect(total).toBeCloseTo(1, 12);
        },
      ),
    );
  });
});
