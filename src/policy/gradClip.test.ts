import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { clipGradNorm } from './gradClip.js';

const norm = (g: Float64Array) => Math.sqrt(g.reduce((s, x) => s + x * x, 0));

describe('clipGradNorm', () => {
  it('leaves a small gradient alone and scales a large one to the bound (torch clip_grad_norm_)', () => {
    const small = Float64Array.from([0.3, -0.4]);
    expect(clipGradNorm(small, 1)).toBeCloseTo(0.5, 15);
    expect([...small]).toEqual([0.3, -0.4]);
    const big = Float64Array.from([3, -4]);
    expect(clipGradNorm(big, 1)).toBe(5);
    expect(big[0]).toBeCloseTo((3 * 1) / (5 + 1e-6), 15);
    expect(big[1]).toBeCloseTo((-4 * 1) / (5 + 1e-6), 15);
  });

  it('never leaves a norm above the bound and keeps the direction', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 20 }),
        fc.double({ min: 1e-3, max: 10, noNaN: true }),
        (xs, max) => {
          const g = Float64Array.from(xs);
          const before = norm(g);
          clipGradNorm(g, max);
          expect(norm(g)).toBeLessThanOrEqual(max * (1 + 1e-12));
          for (let i = 0; i < g.length; i++)
            expect((g[i] as number) * (xs[i] as number)).toBeGreaterThanOrEqual(0);
          expect(norm(g)).toBeLessThanOrEqual(before);
        },
      ),
    );
  });

  it('rejects a bad bound and a non-finite gradient, naming the step', () => {
    expectLabError(() => clipGradNorm(new Float64Array(2), 0), 'BAD_ARGUMENT', 'grad_clip');
    expectLabError(() => clipGradNorm(Float64Array.from([1, Number.NaN]), 1, 17), 'NON_FINITE', 'step 17');
  });
});
