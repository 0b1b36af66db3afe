import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupThousands } from './text.js';

describe('groupThousands', () => {
  it('matches toLocaleString("en-US") of the rounded number (except -0, shown as 0)', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e15, max: 1e15, noNaN: true }), (v) => {
        const expected = Object.is(Math.round(v), -0) ? '0' : Math.round(v).toLocaleString('en-US');
        expect(groupThousands(v)).toBe(expected);
      }),
    );
    expect(groupThousands(19_200)).toBe('19,200');
    expect(groupThousands(-1_234_567)).toBe('-1,234,567');
    expect(groupThousands(999)).toBe('999');
  });

  it("is '-' for NaN and infinities", () => {
    expect([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY].map(groupThousands)).toEqual([
      '-',
      '-',
      '-',
    ]);
  });
});
