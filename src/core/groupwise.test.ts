import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { labErrorText } from '../../test/support/labError.js';
import { asTorchIndex, factorizeLabels, groupMeanStd, groupMembers } from './groupwise.js';

describe('factorizeLabels (Python dict equality)', () => {
  it('dense ids in first-appearance order; "1", 1 and "01" are distinct', () => {
    const g = factorizeLabels(['b', '1', 1, 'b', '01', 1], 6);
    expect(Array.from(g.ids)).toEqual([0, 1, 2, 0, 3, 2]);
    expect(Array.from(g.sizes)).toEqual([2, 1, 2, 1]);
    expect(g.labels).toEqual(['b', '1', 1, '01']);
  });

  it('property: rows share an id exactly when their labels are equal', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('0', '1', 'a')), { maxLength: 30 }),
        (labels) => {
          const g = factorizeLabels(labels, labels.length);
          for (let i = 0; i < labels.length; i++)
            for (let j = 0; j < labels.length; j++)
              expect(g.ids[i] === g.ids[j]).toBe(labels[i] === labels[j]);
          expect(g.sizes.reduce((a, b) => a + b, 0)).toBe(labels.length);
        },
      ),
    );
  });

  it('wrong length and non-finite labels are LabErrors naming index', () => {
    expect(labErrorText(() => factorizeLabels(['a'], 2))).toMatch(/^SHAPE_MISMATCH: index/);
    expect(labErrorText(() => factorizeLabels([Number.NaN], 1))).toMatch(/^BAD_VALUE: index/);
  });
});

describe('asTorchIndex (verl as_torch_index)', () => {
  it('integers are kept as they are, not compacted', () => {
    expect(asTorchIndex([7, 3, 7, 10, 3])).toEqual([7, 3, 7, 10, 3]);
  });
  it('numeric strings become integers: "1" and "01" merge; Python int() whitespace/underscores', () => {
    expect(asTorchIndex(['1', '01', '2', '1'])).toEqual([1, 1, 2, 1]);
    expect(asTorchIndex([' 12 ', '1_000', '-3'])).toEqual([12, 1000, -3]);
  });
  it('near-integer floats are rounded; other floats are truncated (numpy astype(int64))', () => {
    expect(asTorchIndex([1.0000001, 2.0, 1.0, 3.0000000001])).toEqual([1, 2, 1, 3]);
    expect(asTorchIndex([1.2, 1.7, -2.5])).toEqual([1, 1, -2]);
  });
  it('non-numeric labels are factorised in sorted (code point) order; mixed lists compare as text', () => {
    expect(asTorchIndex(['b1f3-9', 'a0c2-1', 'b1f3-9', 'zz', 'a0c2-1'])).toEqual([1, 0, 1, 2, 0]);
    // numpy turns [..., "0042", 42] into strings: "0042" < "42" < "a" < "b" < "c"
    expect(asTorchIndex(['a', 'b', 'a', 'c', '0042', 42])).toEqual([2, 3, 2, 4, 0, 1]);
    // above U+FFFF code point order differs from UTF-16 unit order
    expect(asTorchIndex(['\u{1F600}', '\uFF21'])).toEqual([1, 0]);
  });
});

describe('groupMeanStd (verl group_mean_std, float32)', () => {
  it('hand values: [1,3,4] mean 8/3 std sqrt(7/3); singletons mean 0 std 1; [0.5,0.5] std floored at sqrt(eps)', () => {
    const r = groupMeanStd([1, 2, 3, 0.5, 0.5, -1, 4], [0, 1, 0, 2, 2, 3, 0], 1e-6);
    expect(r.mean[0]).toBeCloseTo(8 / 3, 6);
    expect(r.std[0]).toBeCloseTo(Math.sqrt(7 / 3), 6);
    expect([r.mean[1], r.std[1], r.mean[3], r.std[3]]).toEqual([0, 1, 0, 1]);
    expect(r.mean[2]).toBe(0.5);
    expect(r.std[2]).toBeCloseTo(1e-3, 9);
    expect(Array.from(r.count)).toEqual([3, 1, 2, 1]);
  });

  it('an id that never occurs is an empty group: count 0, mean 0, std 1', () => {
    const r = groupMeanStd([2, 4], [2, 2]);
    expect(Array.from(r.count)).toEqual([0, 0, 2]);
    expect([r.mean[0], r.std[0]]).toEqual([0, 1]);
    expect(r.mean[2]).toBe(3);
  });

  it('one-pass float32 variance: a near-constant group gets the floored std, not its true tiny std', () => {
    const big = Math.fround(1000.0001);
    const r = groupMeanStd([1000, big, 1000, big], [0, 0, 0, 0], 1e-6);
    // true std ~ 6e-5 < sqrt(1e-6) = 1e-3: the floor wins (or a float32 rounding residue above it)
    expect(r.std[0]).toBeGreaterThanOrEqual(Math.fround(1e-3) * 0.999);
  });

  it('bad inputs are LabErrors naming the field', () => {
    expect(labErrorText(() => groupMeanStd([1, 2], [0]))).toMatch(/^SHAPE_MISMATCH: gidx/);
    expect(labErrorText(() => groupMeanStd([1, 2], [0, -1]))).toMatch(/^BAD_VALUE: gidx/);
    expect(labErrorText(() => groupMeanStd([1, 2], [0, 0.5]))).toMatch(/^BAD_VALUE: gidx/);
    expect(labErrorText(() => groupMeanStd([1, Number.NaN], [0, 0]))).toMatch(/^NON_FINITE: scores/);
    expect(labErrorText(() => groupMeanStd([1], [0], -1))).toMatch(/^BAD_ARGUMENT: eps/);
  });
});

describe('groupMembers', () => {
  it('lists the rows of each group in ascending order, in first-appearance group order', () => {
    const groups = factorizeLabels(['b', 'a', 'b', 'c', 'a', 'b'], 6);
    expect(groupMembers(groups)).toEqual([[0, 2, 5], [1, 4], [3]]);
  });

  it('leaves out rows that keep rejects, keeping their (possibly empty) group', () => {
    const groups = factorizeLabels([1, 2, 1, 3], 4);
    expect(groupMembers(groups, (row) => row !== 3 && row !== 2)).toEqual([[0], [1], []]);
  });
});
