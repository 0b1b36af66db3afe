import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signTest } from './signTest.js';

describe('signTest', () => {
  it('matches the exact binomial tail (values from Python math.comb)', () => {
    const d = (up: number, down: number, ties = 0) => [
      ...Array(up).fill(0.5),
      ...Array(down).fill(-2),
      ...Array(ties).fill(0),
    ];
    expect(signTest(d(23, 6, 1))).toEqual({ up: 23, down: 6, ties: 1, p: expect.any(Number) });
    expect(signTest(d(23, 6, 1)).p).toBeCloseTo(0.002315700054168701, 14);
    expect(signTest(d(32, 10)).p).toBeCloseTo(0.0009406740282429382, 14);
    expect(signTest(d(3, 0)).p).toBeCloseTo(0.25, 14);
    expect(signTest(d(10, 10)).p).toBe(1);
  });

  it('all ties (or no pairs) is p = 1, not NaN', () => {
    expect(signTest([0, 0, 0])).toEqual({ up: 0, down: 0, ties: 3, p: 1 });
    expect(signTest([])).toEqual({ up: 0, down: 0, ties: 0, p: 1 });
  });

  it('is symmetric in the sign and uses only the signs', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { maxLength: 60 }), (d) => {
        const a = signTest(d);
        const b = signTest(d.map((x) => -x));
        expect(b.p).toBeCloseTo(a.p, 12);
        expect(signTest(d.map((x) => x * 1000)).p).toBe(a.p);
        expect(a.p).toBeGreaterThan(0);
        expect(a.p).toBeLessThanOrEqual(1);
      }),
    );
  });

  it('names the position of a value that is not finite', () => {
    expect(() => signTest([1, Number.NaN], 'd')).toThrow('d: value NaN at position 1 is not finite');
  });
});
