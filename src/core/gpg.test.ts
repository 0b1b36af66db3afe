import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { gpgAdvantage } from './gpg.js';

describe('GPG', () => {
  const shape = { rows: 5, cols: 1 };
  const r = Float32Array.from([1, 0, 0, 1, 3]);
  const m = new Float32Array(5).fill(1);
  const index = ['a', 'a', 'b', 'b', 's'];

  it('alpha = B / #nonzero scores = 5/3; a = alpha (s - mean_g) / f_norm; singleton mean 0', () => {
    const { advantages, returns } = gpgAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape);
    expect(returns).toBe(advantages);
    const alpha = 5 / 3;
    expect(Array.from(advantages)).toEqual([0.5, -0.5, -0.5, 0.5, 3].map((c) => Math.fround(alpha * c)));
    const half = gpgAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape, {
      fNorm: 2,
    }).advantages;
    expect(half[4]).toBe(Math.fround((alpha * 3) / 2));
  });

  it('all-zero scores: alpha = B / max(0, 1) and every advantage is 0', () => {
    const { advantages } = gpgAdvantage(
      { tokenLevelRewards: new Float32Array(5), responseMask: m, index },
      shape,
    );
    expect(Array.from(advantages)).toEqual([0, 0, 0, 0, 0]);
  });

  it('f_norm 0 is BAD_ARGUMENT naming f_norm', () => {
    expectLabError(
      () => gpgAdvantage({ tokenLevelRewards: r, responseMask: m, index }, shape, { fNorm: 0 }),
      'BAD_ARGUMENT',
      'f_norm',
    );
  });
});
