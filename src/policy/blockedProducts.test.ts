import { describe, expect, it } from 'vitest';
import { Rng } from '../random.js';
import { dotRows, outerAndDot } from './blockedProducts.js';

const random = (rng: Rng, n: number) => Float64Array.from({ length: n }, () => 2 * rng.next() - 1);
/** Every entry the same bits (NaN never occurs here; -0 and 0 count as different). */
const sameBits = (a: Float64Array, b: Float64Array) =>
  a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

describe('blocked products', () => {
  // sizes 1..13 reach every leftover count of the four-row blocks; offsets check the indexing
  it('dotRows gives the bits of one dot product per row', () => {
    const rng = new Rng(3);
    for (let d = 1; d <= 13; d++) {
      for (let n = 1; n <= 13; n++) {
        const wt = random(rng, n * d);
        const x = random(rng, d + 3);
        const bias = random(rng, n + 2);
        const out = new Float64Array(n + 5);
        dotRows(wt, x, 3, d, n, bias, 2, out, 5);
        const plain = new Float64Array(n + 5);
        for (let j = 0; j < n; j++) {
          let acc = bias[2 + j] as number;
          for (let k = 0; k < d; k++) acc += (x[3 + k] as number) * (wt[j * d + k] as number);
          plain[5 + j] = acc;
        }
        expect(sameBits(out, plain), `d ${d}, n ${n}`).toBe(true);
      }
    }
  });

  it('outerAndDot gives the bits of one row at a time, also when out is addend', () => {
    const rng = new Rng(4);
    for (let rows = 1; rows <= 13; rows++) {
      for (let n = 1; n <= 13; n++) {
        const x = random(rng, rows + 1);
        const q = random(rng, n + 2);
        const weights = random(rng, rows * n + 4);
        const start = random(rng, rows * n + 4);
        const addend = random(rng, rows + 1);
        const plainGrads = start.slice();
        const plainOut = new Float64Array(rows + 1);
        for (let k = 0; k < rows; k++) {
          let acc = 0;
          for (let j = 0; j < n; j++) {
            const i = 4 + k * n + j;
            plainGrads[i] = (plainGrads[i] as number) + (x[1 + k] as number) * (q[2 + j] as number);
            acc += (weights[i] as number) * (q[2 + j] as number);
          }
          plainOut[1 + k] = (addend[1 + k] as number) + acc;
        }
        const grads = start.slice();
        const out = new Float64Array(rows + 1);
        outerAndDot(x, 1, q, 2, n, rows, weights, grads, 4, addend, 1, out, 1);
        expect(sameBits(grads, plainGrads) && sameBits(out, plainOut), `rows ${rows}, n ${n}`).toBe(true);
        const inPlace = addend.slice();
        outerAndDot(x, 1, q, 2, n, rows, weights, start.slice(), 4, inPlace, 1, inPlace, 1);
        expect(sameBits(inPlace.subarray(1), plainOut.subarray(1)), `in place: rows ${rows}, n ${n}`).toBe(
          true,
        );
      }
    }
  });
});
