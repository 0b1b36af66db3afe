import { describe, expect, it } from 'vitest';
import { Optimizer } from './adam.js';

describe('Optimizer', () => {
  it('sgd: theta - lr * g', () => {
    const opt = new Optimizer(3, { kind: 'sgd', learningRate: 0.5 });
    const p = Float64Array.from([1, 2, 3]);
    opt.step(p, [2, -4, 0]);
    expect(Array.from(p)).toEqual([0, 4, 3]);
  });

  it('adam: the first step is lr * sign(g) whatever the gradient scale (bias correction)', () => {
    for (const scale of [1e-4, 1, 1e4]) {
      const opt = new Optimizer(3, { kind: 'adam', learningRate: 0.1, epsilon: 0 });
      const p = new Float64Array(3);
      opt.step(p, [2 * scale, -3 * scale, 0]);
      expect(p[0]).toBeCloseTo(-0.1, 12);
      expect(p[1]).toBeCloseTo(0.1, 12);
      // 0/0 with epsilon 0 would be NaN; a zero gradient must not move the parameter... with eps > 0
    }
    const opt = new Optimizer(1, { learningRate: 0.1 });
    const p = new Float64Array(1);
    opt.step(p, [0]);
    expect(p[0]).toBe(0);
  });

  it('adam: second step with hand-computed moments', () => {
    const opt = new Optimizer(1, { learningRate: 1, beta1: 0.5, beta2: 0.5, epsilon: 0 });
    const p = new Float64Array(1);
    opt.step(p, [1]);
    opt.step(p, [3]);
    // m2 = 0.5*0.5 + 0.5*3 = 1.75, v2 = 0.5*0.5 + 0.5*9 = 4.75, corrections 1 - 0.25 = 0.75
    // step2 = (1.75/0.75) / sqrt(4.75/0.75)
    expect(p[0]).toBeCloseTo(-1 - 1.75 / 0.75 / Math.sqrt(4.75 / 0.75), 12);
  });

  it('adam minimises a quadratic', () => {
    const opt = new Optimizer(2, { learningRate: 0.05 });
    const p = Float64Array.from([3, -2]);
    for (let i = 0; i < 2000; i++) opt.step(p, [2 * (p[0]! - 1), 2 * (p[1]! + 0.5)]);
    expect(p[0]).toBeCloseTo(1, 3);
    expect(p[1]).toBeCloseTo(-0.5, 3);
  });

  it('rejects bad options and sizes', () => {
    expect(() => new Optimizer(2, { learningRate: 0 })).toThrow(/learningRate/);
    expect(() => new Optimizer(2, { kind: 'rmsprop' as 'adam' })).toThrow(/unknown kind/);
    expect(() => new Optimizer(2).step(new Float64Array(3), [1, 2, 3])).toThrow(/expected 2/);
  });
});

describe('Optimizer.clone', () => {
  it('continues exactly as the original (moments and step count copied), independently of it', () => {
    const a = new Optimizer(2, { kind: 'adam', learningRate: 0.1 });
    const p = Float64Array.of(1, 2);
    a.step(p, [0.5, -1]);
    const b = a.clone();
    const pa = p.slice();
    const pb = p.slice();
    a.step(pa, [0.2, 0.3]);
    b.step(pb, [0.2, 0.3]);
    expect(Array.from(pb)).toEqual(Array.from(pa));
    a.step(pa, [1, 1]); // a moves on; b's state is its own
    const fresh = new Optimizer(2, { kind: 'adam', learningRate: 0.1 });
    const pf = p.slice();
    fresh.step(pf, [0.2, 0.3]);
    expect(Array.from(pf)).not.toEqual(Array.from(pb)); // a fresh optimizer (step 1, zero moments) differs
  });
});
