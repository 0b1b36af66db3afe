import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { holmAdjust } from './holm.js';

describe('holmAdjust', () => {
  it('reproduces a worked example', () => {
    // m = 4, sorted 0.005, 0.01, 0.03, 0.04 -> 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06,
    // max(0.06, 1·0.04) = 0.06 (the step-down keeps the adjusted values monotone). R:
    // p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") = 0.03 0.06 0.06 0.02.
    const adj = holmAdjust([0.01, 0.04, 0.03, 0.005]);
    const want = [0.03, 0.06, 0.06, 0.02];
    adj.forEach((v, i) => {
      expect(v).toBeCloseTo(want[i] as number, 15);
    });
    // capped at 1
    expect(holmAdjust([0.5, 0.6])).toEqual([1, 1]);
    expect(holmAdjust([])).toEqual([]);
    expect(holmAdjust([0.2])).toEqual([0.2]);
  });

  it('adjusted p >= raw, <= 1, and in the same order as the raw p', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }), (p) => {
        const adj = holmAdjust(p);
        p.forEach((v, i) => {
          expect(adj[i]).toBeGreaterThanOrEqual(v);
          expect(adj[i]).toBeLessThanOrEqual(1);
        });
        for (let i = 0; i < p.length; i++)
          for (let j = 0; j < p.length; j++)
            if ((p[i] as number) < (p[j] as number)) expect(adj[i]).toBeLessThanOrEqual(adj[j] as number);
      }),
    );
  });

  it('refuses a value that is not a p-value, naming its position', () => {
    expect(() => holmAdjust([0.1, 1.2])).toThrow(/position 1/);
    expect(() => holmAdjust([Number.NaN])).toThrow(/position 0/);
  });
});
