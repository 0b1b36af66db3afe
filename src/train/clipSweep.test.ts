import { describe, expect, it } from 'vitest';
import { fixedTokenBatch, randomTablePolicy } from '../../test/support/tokenBatch.js';
import { Optimizer } from './adam.js';
import { measureDrift, recordStepTotals } from './clipSweep.js';
import { tabularModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';

describe('recordStepTotals', () => {
  it('sums verl metrics over every step of ppoUpdate, and counts clipped tokens moved further out', () => {
    const p = randomTablePolicy(3);
    const fixed = fixedTokenBatch(p, 4);
    const model = tabularModel(p);
    const loss = { clipRatio: 0.2 };
    const { totals, onStep } = recordStepTotals(model, loss);
    const seen: number[] = [];
    const stats = ppoUpdate(model, new Optimizer(p.logits.length, { learningRate: 0.1 }), fixed, {
      epochs: 5,
      miniBatches: 2,
      loss,
      onStep,
      onEpoch: (e) => seen.push(e * 100 + totals.steps),
    });
    expect(seen).toEqual([102, 204, 306, 408, 510]);
    expect(totals.steps).toBe(10);
    expect(totals.pgClipfrac).toBeCloseTo(
      stats.steps.reduce((s, e) => s + (e.metrics?.pg_clipfrac ?? 0), 0),
      12,
    );
    expect(totals.ppoKl).toBeCloseTo(
      stats.steps.reduce((s, e) => s + (e.metrics?.ppo_kl ?? 0), 0),
      12,
    );
    expect(totals.clipped).toBeGreaterThan(0); // Adam at lr 0.1 over 5 epochs leaves the band
    expect(totals.movedFurther).toBeLessThanOrEqual(totals.clipped);
    expect(totals.klLoss).toBe(0);
  });
});

describe('measureDrift', () => {
  it('is zero drift before any step and matches the kernels after one', () => {
    const p = randomTablePolicy(11);
    const fixed = fixedTokenBatch(p, 12);
    const model = tabularModel(p);
    const oldRows = p.logProbabilities();
    const oldParams = Float64Array.from(p.logits);
    const band = { low: 0.2, high: 0.2 };
    const d0 = measureDrift(model, fixed, oldRows, oldParams, band, {});
    expect(d0.kl_true_mean).toBe(0);
    expect(d0.update_norm).toBe(0);
    expect(d0.ratio_max).toBe(1);
    expect(d0.frac_outside_clip).toBe(0);
    ppoUpdate(model, new Optimizer(p.logits.length, { learningRate: 0.3 }), fixed, { epochs: 3 });
    const d = measureDrift(model, fixed, oldRows, oldParams, band, {});
    expect(d.kl_true_mean).toBeGreaterThan(0);
    expect(d.kl_true_max).toBeGreaterThanOrEqual(d.kl_true_mean);
    let sq = 0;
    for (let i = 0; i < p.logits.length; i++) sq += ((p.logits[i] as number) - (oldParams[i] as number)) ** 2;
    expect(d.update_norm).toBeCloseTo(Math.sqrt(sq), 12);
  });
});
