import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import type { LabErrorCode } from './errors.js';
import { classifyGroups, countGroupKinds } from './groupDiagnostics.js';

describe('classifyGroups', () => {
  // The course's engineering exercise batch: all-wrong, all-right, mixed, singleton, plus a partial-credit tie.
  const rewards = [0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0.5, 0.5];
  const index = ['w', 'w', 'w', 'r', 'r', 'r', 'm', 'm', 'm', 'm', 's', 'h', 'h'];

  it('classifies each group by hand-known kind, in first-appearance order', () => {
    const g = classifyGroups(rewards, index);
    expect(g.map((x) => [x.label, x.kind, x.size])).toEqual([
      ['w', 'all_wrong', 3],
      ['r', 'all_right', 3],
      ['m', 'mixed', 4],
      ['s', 'singleton', 1],
      ['h', 'all_equal_other', 2],
    ]);
    expect(g[2]?.rows).toEqual([6, 7, 8, 9]);
    expect(g[2]?.mean).toBe(0.25);
  });

  it('a singleton is a singleton whatever its value (never zero-variance)', () => {
    const g = classifyGroups([0], ['x']);
    expect(g[0]?.kind).toBe('singleton');
    expect(countGroupKinds(g).zero_variance).toBe(0);
  });

  it('custom fail/pass values move the boundaries', () => {
    const g = classifyGroups([-1, -1, 5, 5, 2, 2], [1, 1, 2, 2, 3, 3], { failValue: -1, passValue: 5 });
    expect(g.map((x) => x.kind)).toEqual(['all_wrong', 'all_right', 'all_equal_other']);
  });

  it('counts kinds and the zero-variance fraction: 3 of 5 groups', () => {
    const c = countGroupKinds(classifyGroups(rewards, index));
    expect(c).toEqual({
      groups: 5,
      all_wrong: 1,
      all_right: 1,
      mixed: 1,
      all_equal_other: 1,
      singleton: 1,
      zero_variance: 3,
      zero_variance_group_fraction: 3 / 5,
    });
    expect(countGroupKinds([]).zero_variance_group_fraction).toBe(0);
  });

  it('bad inputs are LabErrors naming the field', () => {
    const cases: [() => unknown, LabErrorCode, string][] = [
      [() => classifyGroups([0, Number.NaN], [1, 1]), 'NON_FINITE', 'rewards'],
      [() => classifyGroups([0, 1], [1]), 'SHAPE_MISMATCH', 'index'],
      [() => classifyGroups([], []), 'BAD_ARGUMENT', 'rewards'],
      [() => classifyGroups([0], [1], { failValue: 1, passValue: 1 }), 'BAD_ARGUMENT', 'failValue'],
    ];
    for (const [fn, code, field] of cases) {
      expectLabError(() => fn(), code, field);
    }
  });
});
