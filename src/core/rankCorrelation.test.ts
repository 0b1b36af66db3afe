import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { averageRanks, spearman } from './rankCorrelation.js';

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

  it('a constant sample gives NaN (undefined, as scipy), never a silent 0', () => {
    expect(spearman([1, 1, 1], [1, 2, 3])).toBeNaN();
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
          if (Number.isNaN(r)) return Number.isNaN(r2);
          return Math.abs(r - r2) < 1e-12 && Math.abs(r - spearman(y, x)) < 1e-12 && Math.abs(r) <= 1 + 1e-12;
        },
      ),
    );
  });

  it('bad input is a LabError naming the sample and position', () => {
    expectLabError(() => spearman([1, 2], [1]), 'SHAPE_MISMATCH', 'same length');
    expectLabError(() => spearman([1, Number.NaN], [1, 2]), 'NON_FINITE', 'x', 'position 1');
  });
});
