import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import {
  averageRanks,
  kendallTauB,
  spearman,
  stratifiedKendallTauB,
  stratifiedSpearman,
} from './rankCorrelation.js';

describe('rank correlation', () => {
  it('average ranks by hand (scipy rankdata average): [10, 20, 20, 5] -> [2, 3.5, 3.5, 1]', () => {
    expect(Array.from(averageRanks([10, 20, 20, 5]))).toEqual([2, 3.5, 3.5, 1]);
  });

  it('spearman by hand: monotone 1, reversed -1, and a tied case against the Pearson-of-ranks formula', () => {
    expect(spearman([1, 2, 3, 4], [10, 40, 90, 160])).toBeCloseTo(1, 12);
    expect(spearman([1, 2, 3, 4], [4, 3, 2, 1])).toBeCloseTo(-1, 12);
    // ranks x = [1,2,3,4], y = [1.5,1.5,3,4]: r = 4.5 / sqrt(5 * 4.5) = 0.9486832980505138
    expect(spearman([1, 2, 3, 4], [7, 7, 8, 9])).toBeCloseTo(0.9486832980505138, 12);
  });

  it('a constant sample is undefined (null; scipy gives nan), never a silent 0', () => {
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNull();
  });

  it('is invariant to monotone transforms and symmetric (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: -5, max: 5 }), fc.integer({ min: -5, max: 5 })), {
          minLength: 2,
          maxLength: 12,
        }),
        (pairs) => {
          const x = pairs.map((p) => p[0]);
          const y = pairs.map((p) => p[1]);
          const r = spearman(x, y);
          const r2 = spearman(
            x.map((v) => v * v * v + 3),
            y,
          );
          if (r === null) return r2 === null;
          const ryx = spearman(y, x);
          return (
            r2 !== null &&
            ryx !== null &&
            Math.abs(r - r2) < 1e-12 &&
            Math.abs(r - ryx) < 1e-12 &&
            Math.abs(r) <= 1 + 1e-12
          );
        },
      ),
    );
  });

  it('bad input is a LabError naming the sample and position', () => {
    expectLabError(() => spearman([1, 2], [1]), 'SHAPE_MISMATCH', 'x has 2 values, y 1');
    expectLabError(() => spearman([1, Number.NaN], [1, 2]), 'NON_FINITE', 'x[1]');
  });
});

describe('rank correlations (hand-computed values)', () => {
  it('average ranks share tied ranks', () => {
    expect(Array.from(averageRanks([10, 20, 20, 5]))).toEqual([2, 3.5, 3.5, 1]);
    expect(Array.from(averageRanks([1, 1, 1]))).toEqual([2, 2, 2]);
  });

  it('no ties: rho = 1 - 6 Σd² / (n(n²-1)) = 0.8, tau = (8 - 2) / 10 = 0.6', () => {
    const x = [1, 2, 3, 4, 5];
    const y = [2, 1, 4, 3, 5];
    expect(spearman(x, y)).toBeCloseTo(0.8, 12);
    expect(kendallTauB(x, y)).toBeCloseTo(0.6, 12);
  });

  it('ties: rho = 3.75 / 4.5, tau-b = 4 / sqrt(5 · 5)', () => {
    const x = [1, 2, 2, 3];
    const y = [1, 3, 2, 3];
    expect(spearman(x, y)).toBeCloseTo(3.75 / 4.5, 12);
    expect(kendallTauB(x, y)).toBeCloseTo(0.8, 12);
  });

  it('a constant side or fewer than two values is undefined (null), never NaN', () => {
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNull();
    expect(kendallTauB([1, 2, 3], [4, 4, 4])).toBeNull();
    expect(spearman([1], [2])).toBeNull();
    expect(stratifiedKendallTauB([])).toBeNull();
  });

  it('strata: only pairs inside a stratum count (hand-computed: -1/17 and 0.5/14.5)', () => {
    const strata = [
      { x: [0.9, 0.4, 0.7, 0.2], y: [0.8, 0.3, 0.9, 0.1] }, // C-D = 4
      { x: [0.1, 0.2, 0.3, 0.4], y: [0.4, 0.3, 0.2, 0.1] }, // C-D = -6
      { x: [3, 1, 2, 2], y: [2, 1, 3, 3] }, // C-D = 1, one tie on each side
    ];
    expect(stratifiedKendallTauB(strata)).toBeCloseTo(-1 / 17, 12);
    expect(stratifiedSpearman(strata)).toBeCloseTo(0.5 / 14.5, 12);
  });

  it('rejects unequal lengths and non-finite values', () => {
    expect(() => spearman([1, 2], [1])).toThrow(/x has 2 values, y 1/);
    expect(() => kendallTauB([1, Number.NaN], [1, 2])).toThrow(/x\[1\] is NaN/);
  });
});

describe('rank correlations (properties)', () => {
  const pairs = fc
    .integer({ min: 2, max: 12 })
    .chain((n) =>
      fc.tuple(
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n }),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: n, maxLength: n }),
      ),
    );

  it('lie in [-1, 1], are symmetric, and are unchanged by a strictly increasing transform', () => {
    fc.assert(
      fc.property(pairs, ([x, y]) => {
        for (const f of [spearman, kendallTauB]) {
          const r = f(x, y);
          if (r === null) continue;
          expect(Math.abs(r)).toBeLessThanOrEqual(1 + 1e-12);
          expect(f(y, x)).toBeCloseTo(r, 12);
          expect(
            f(
              x.map((v) => Math.exp(v) * 3 - 1),
              y,
            ),
          ).toBeCloseTo(r, 12);
          expect(
            f(
              x.map((v) => -v),
              y,
            ),
          ).toBeCloseTo(-r, 12);
        }
      }),
    );
  });

  it('one stratum equals the plain coefficient; x against itself is 1 unless constant', () => {
    fc.assert(
      fc.property(pairs, ([x, y]) => {
        expect(stratifiedSpearman([{ x, y }])).toEqual(spearman(x, y));
        expect(stratifiedKendallTauB([{ x, y }])).toEqual(kendallTauB(x, y));
        const self = kendallTauB(x, x);
        if (self !== null) expect(self).toBeCloseTo(1, 12);
      }),
    );
  });
});
