import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { CONVENTION_PRESETS, conventionSpec, presetAdvantages } from './presets.js';

const scores = [1, 0, 0, 0, 1, 1, 1];
const index = ['m', 'm', 'm', 'm', 'r', 'r', 's'];

describe('convention presets', () => {
  it('every preset cites a source and names itself', () => {
    for (const [name, spec] of Object.entries(CONVENTION_PRESETS)) {
      expect(spec.name).toBe(name);
      expect(spec.source.length).toBeGreaterThan(20);
    }
  });

  it('verl: torch.std, eps 1e-6, singleton s/float32(1+1e-6)', () => {
    const a = presetAdvantages('verl', scores, index);
    expect(a[0]).toBeCloseTo(0.75 / (0.5 + 1e-6), 12);
    expect(a[4]).toBe(0);
    expect(a[6]).toBe(1 / Math.fround(1 + 1e-6));
  });

  it('teaching: population std sqrt(3)/4 for [1,0,0,0]; singleton 0', () => {
    const a = presetAdvantages('teaching', scores, index);
    // population var = (9/16 + 3/16)/4 = 3/16
    expect(a[0]).toBeCloseTo(0.75 / (Math.sqrt(3) / 4 + 1e-6), 12);
    expect(a[6]).toBe(0);
  });

  it('trl: eps 1e-4 and a group of one is refused; openrlhf: eps 1e-9', () => {
    const two = presetAdvantages('trl', [1, 0], ['a', 'a']);
    expect(two[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-4), 12);
    const o = presetAdvantages('openrlhf', [1, 0], ['a', 'a']);
    expect(o[0]).toBeCloseTo(0.5 / (Math.SQRT1_2 + 1e-9), 12);
    for (const p of ['trl', 'openrlhf'] as const) {
      expectLabError(() => presetAdvantages(p, scores, index), 'SINGLETON_GROUP', 'has one member');
    }
  });

  it('nemo-rl: leave-one-out baseline and std of the others, computed by hand', () => {
    // group [1,0,0,0]: row 0 -> others [0,0,0]: baseline 0, std 0 -> advantage 1 (unscaled)
    // row 1 -> others [1,0,0]: baseline 1/3, unbiased std sqrt(((2/3)^2 + 2(1/3)^2)/2) = sqrt(1/3), + 1e-6
    const a = presetAdvantages('nemo-rl', scores, index);
    expect(a[0]).toBe(1);
    expect(a[1]).toBeCloseTo(-1 / 3 / (Math.sqrt(1 / 3) + 1e-6), 12);
    expect(a[4]).toBe(0); // all equal
    expect(a[6]).toBe(0); // singleton: baseline = own reward
    // a group of two is never std-scaled (one other member: no unbiased std)
    expect(Array.from(presetAdvantages('nemo-rl', [3, 1], ['g', 'g']))).toEqual([2, -2]);
  });

  it('nemo-rl: scores whose leave-one-out squares overflow are NON_FINITE, not a silent 0', () => {
    expectLabError(
      () => presetAdvantages('nemo-rl', [1e200, -1e200, 0], ['a', 'a', 'a']),
      'NON_FINITE',
      'scores: row 0 is too large for float64 statistics',
    );
  });

  it('the preset table is frozen to the leaves: a stray assignment throws instead of changing every later comparison', () => {
    expect(() => {
      (CONVENTION_PRESETS.verl as { epsilon: number }).epsilon = 0;
    }).toThrow(TypeError);
    expect(CONVENTION_PRESETS.verl.epsilon).toBe(1e-6);
  });

  it('unknown preset is UNKNOWN_MODE naming the field', () => {
    expectLabError(() => conventionSpec('deepspeed' as never), 'UNKNOWN_MODE', 'preset');
  });
});
