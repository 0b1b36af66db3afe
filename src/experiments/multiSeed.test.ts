import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LabError } from '../core/errors.js';
import { runSeeds } from './multiSeed.js';
import { defineOptions, option } from './options.js';
import type { Experiment, RunRecord } from './types.js';

// A toy experiment whose metric is a known function of the seed, so the summary can be checked by hand.
const TOY_OPTIONS = defineOptions({ k: option(z.number(), 1, 'scale') });
const toy: Experiment<typeof TOY_OPTIONS> = {
  name: 'toy',
  summary: 'metric = seed / 10',
  options: TOY_OPTIONS,
  run(config, ctx): RunRecord {
    const k = config.k;
    return {
      experiment: 'toy',
      seed: ctx.seed,
      version: '0.1.0',
      config: { k },
      metrics: { m: (k * ctx.seed) / 10, label: 'x' },
      curves: { update: [1, 2], 'c.a': [ctx.seed, 2 * ctx.seed] },
      tables: {},
      timing: { wall_ms: 0 },
    };
  },
};

describe('runSeeds', () => {
  it('names the seed that failed, keeping the error code', async () => {
    const flaky: Experiment<typeof TOY_OPTIONS> = {
      ...toy,
      run(config, ctx) {
        if (ctx.seed === 2) throw new LabError('NON_FINITE', 'update 3: logit 5 is Infinity');
        return toy.run(config, ctx);
      },
    };
    await expect(runSeeds(flaky, { k: 1 }, [1, 2, 3])).rejects.toMatchObject({
      code: 'NON_FINITE',
      message: 'seed 2: update 3: logit 5 is Infinity',
      details: { seed: 2 },
    });
  });

  it('runs each seed and summarises numeric metrics and curves', async () => {
    const progress: number[] = [];
    const rec = await runSeeds(toy, { k: 1 }, [1, 2, 3], (d) => progress.push(d));
    expect(rec.seeds).toEqual([1, 2, 3]);
    expect(rec.runs.map((r) => r.metrics.m)).toEqual([0.1, 0.2, 0.3]);
    const m = rec.summary.m!;
    expect(m.mean).toBeCloseTo(0.2, 12);
    expect(m.std).toBeCloseTo(0.1, 12);
    expect([m.min, m.max]).toEqual([0.1, 0.3]);
    // t_{0.975,2} = 4.303; half width = 4.303 * 0.1 / sqrt(3)
    expect(m.ci95[1] - m.mean).toBeCloseTo((4.303 * 0.1) / Math.sqrt(3), 10);
    expect(rec.summary.label).toBeUndefined();
    expect(rec.curve_summary?.['c.a']?.mean).toEqual([2, 4]);
    expect(rec.curve_summary?.update).toBeUndefined();
    expect(progress.at(-1)).toBe(3);
  });
});
