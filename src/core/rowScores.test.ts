import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { broadcastRows, groupedRowScores, rowSums, scanMask } from './rowScores.js';

/** Reference scan written the obvious way, to compare the wide (8-byte) scan against. */
function naiveLayout(mask: ArrayLike<number>, rows: number, cols: number) {
  const valid: number[] = [];
  const prefix: number[] = [];
  for (let b = 0; b < rows; b++) {
    let n = 0;
    for (let t = 0; t < cols; t++) n += mask[b * cols + t] as number;
    let isPrefix = true;
    for (let t = 0; t < cols; t++) if ((mask[b * cols + t] === 1) !== t < n) isPrefix = false;
    valid.push(n);
    prefix.push(isPrefix ? n : -1);
  }
  return { valid, prefix };
}

const maskRows = (cols: number) =>
  fc.array(
    fc.oneof(
      fc
        .integer({ min: 0, max: cols })
        .map((len) => Array.from({ length: cols }, (_, t) => (t < len ? 1 : 0))),
      fc.array(fc.constantFrom(0, 1), { minLength: cols, maxLength: cols }),
    ),
    { minLength: 1, maxLength: 6 },
  );

describe('scanMask', () => {
  for (const [name, make, cols] of [
    ['float32, wide path', (v: number[]) => Float32Array.from(v), 16],
    ['uint8, wide path (tail words only)', (v: number[]) => Uint8Array.from(v), 16],
    ['uint8, wide path (4-word blocks)', (v: number[]) => Uint8Array.from(v), 64],
    ['float32, wide path (block + 3 tail words)', (v: number[]) => Float32Array.from(v), 14],
    ['float32, odd T (scalar path)', (v: number[]) => Float32Array.from(v), 7],
    ['float64 (scalar path)', (v: number[]) => Float64Array.from(v), 8],
  ] as const) {
    it(`${name}: counts and prefix lengths agree with a naive scan`, () => {
      fc.assert(
        fc.property(maskRows(cols), (rowsList) => {
          const flat = rowsList.flat();
          const layout = scanMask(make(flat), { rows: rowsList.length, cols });
          const ref = naiveLayout(flat, rowsList.length, cols);
          expect(Array.from(layout.validTokens)).toEqual(ref.valid);
          expect(Array.from(layout.prefixLength)).toEqual(ref.prefix);
        }),
      );
    });
  }

  it('accepts -0 as 0 and rejects 0.5, 2, -1, NaN, Infinity at the exact (row, token)', () => {
    const ok = Float32Array.from([1, 1, -0, 0, 1, -0, 0, 0]);
    expect(Array.from(scanMask(ok, { rows: 2, cols: 4 }).prefixLength)).toEqual([2, 1]);
    for (const bad of [0.5, 2, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      const m = new Float32Array(16).fill(1);
      m[13] = bad;
      expectLabError(() => scanMask(m, { rows: 2, cols: 8 }), 'BAD_MASK', 'row 1, token 5');
      const z = new Float32Array(32);
      z[29] = bad; // inside an otherwise all-zero 4-word block
      expectLabError(() => scanMask(z, { rows: 2, cols: 16 }), 'BAD_MASK', 'row 1, token 13');
    }
    const u = new Uint8Array(16).fill(1);
    u[9] = 3;
    expectLabError(() => scanMask(u, { rows: 2, cols: 8 }), 'BAD_MASK', 'row 1, token 1');
  });
});

describe('rowSums', () => {
  it('sums ALL positions (the sparse path skips zero blocks but not values), rounded to float32', () => {
    const cols = 16;
    const v = new Float32Array(2 * cols);
    v[3] = 0.1;
    v[15] = 0.2;
    v[16] = -1;
    const s = rowSums(v, { rows: 2, cols });
    expect(s[0]).toBe(Math.fround(Math.fround(0.1) + Math.fround(0.2)));
    expect(s[1]).toBe(-1);
  });

  it('property: equals a float64 reference sum rounded to float32, for any values (sparse or dense path)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.constant(0),
            fc.integer({ min: -64, max: 64 }).map((k) => k / 8),
          ),
          {
            minLength: 16,
            maxLength: 16,
          },
        ),
        fc.constantFrom(8, 16),
        (vals, cols) => {
          const rows = 16 / cols;
          const s = rowSums(Float32Array.from(vals), { rows, cols });
          for (let b = 0; b < rows; b++) {
            let ref = 0;
            for (let t = 0; t < cols; t++) ref += vals[b * cols + t] as number;
            expect(s[b]).toBe(ref); // multiples of 1/8: every partial sum is exact
          }
        },
      ),
    );
  });

  it('names the first non-finite value by (row, token), NaN and Infinity alike', () => {
    for (const bad of [Number.NaN, Number.NEGATIVE_INFINITY]) {
      const v = new Float32Array(32);
      v[21] = bad;
      expectLabError(() => rowSums(v, { rows: 2, cols: 16 }), 'NON_FINITE', 'row 1, token 5');
    }
    const d = new Float64Array(6);
    d[4] = Number.NaN;
    expectLabError(
      () => rowSums(d, { rows: 2, cols: 3 }, 'values'),
      'NON_FINITE',
      'values: value NaN at row 1, token 1',
    );
  });
});

describe('broadcastRows', () => {
  const mask = Float32Array.from([1, 1, 0, 0, 1, 0, 1, 0]); // row 0 prefix, row 1 has a hole
  const shape = { rows: 2, cols: 4 };

  it('writes a_b on valid tokens, +0 elsewhere, prefix rows and rows with holes alike', () => {
    const out = broadcastRows([-2, 3], mask, shape);
    expect(Array.from(out)).toEqual([-2, -2, 0, 0, 3, 0, 3, 0]);
    expect(Object.is(out[2], 0)).toBe(true);
    const negZero = broadcastRows([-0, -0], mask, shape);
    expect(Object.is(negZero[0], 0)).toBe(true);
  });

  it('a reused buffer is overwritten entirely (old values do not leak into padding)', () => {
    const reuse = new Float32Array(8).fill(9);
    const out = broadcastRows([1, 2], mask, shape, undefined, reuse);
    expect(out).toBe(reuse);
    expect(Array.from(out)).toEqual([1, 1, 0, 0, 2, 0, 2, 0]);
    expectLabError(
      () => broadcastRows([1, 2], mask, shape, undefined, new Float32Array(7)),
      'SHAPE_MISMATCH',
      'out',
    );
  });
});

describe('groupedRowScores', () => {
  it('sums every position of each row and numbers groups by first appearance (1 and "1" differ)', () => {
    const r = Float32Array.from([1, 2, 0, 0.5, 3, 0]);
    const { scores, groups } = groupedRowScores(r, new Uint8Array(6), [1, '1', 1], { rows: 3, cols: 2 });
    expect(Array.from(scores)).toEqual([3, 0.5, 3]);
    expect(Array.from(groups.ids)).toEqual([0, 1, 0]);
    expect(Array.from(groups.sizes)).toEqual([2, 1]);
  });

  it('checks labels before rewards: a bad label is reported even when a reward is NaN', () => {
    const r = Float32Array.from([Number.NaN, 0]);
    expectLabError(
      () => groupedRowScores(r, new Uint8Array(2), [0], { rows: 2, cols: 1 }),
      'SHAPE_MISMATCH',
      'index: expected 2 group labels',
    );
    expectLabError(
      () => groupedRowScores(r, new Uint8Array(2), [0, 0], { rows: 2, cols: 1 }),
      'NON_FINITE',
      'token_level_rewards: value NaN at row 0, token 0',
    );
  });
});

describe('float32 range', () => {
  it('rowSums: a float32 row whose sum passes 3.4e38 is NON_FINITE (verl would sum to inf)', () => {
    const r = Float32Array.from([3e38, 3e38, 1, 1]);
    expectLabError(
      () => rowSums(r, { rows: 2, cols: 2 }),
      'NON_FINITE',
      `token_level_rewards: the sum of row 0 (${2 * Math.fround(3e38)}) overflows float32`,
    );
    // the same row in float64 is representable and summed as it is
    expect(rowSums(Float64Array.from(r), { rows: 2, cols: 2 })[0]).toBe(2 * Math.fround(3e38));
  });

  it('broadcastRows: a per-row value beyond float32 is NON_FINITE, not an Infinity in the output', () => {
    const m = Uint8Array.from([1, 1, 1, 0]);
    expectLabError(
      () => broadcastRows([1, -1e39], m, { rows: 2, cols: 2 }),
      'NON_FINITE',
      'advantages: the value -1e+39 of row 1 is not a finite float32',
    );
    expect(Array.from(broadcastRows([1, -3e38], m, { rows: 2, cols: 2 }))).toEqual([
      1,
      1,
      Math.fround(-3e38),
      0,
    ]);
  });
});
