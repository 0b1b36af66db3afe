import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LabError } from '../core/errors.js';
import { defineOptions, option } from './options.js';
import { runSweep } from './sweep.js';
import type { Experiment, RunRecord } from './types.js';

// Two arms; the metric is a known function of (budget, seed), and every run logs the seed it saw.
const seen: { budget: number; seed: number }[] = [];
const toy: Experiment = {
  name: 'toy',
  summary: 'rate = budget/100 + seed/1000 (arm b: +0.01)',
  options: defineOptions({
    budget: option(z.number().int().min(1), 10, 'budget'),
    other: option(z.number(), 0, 'other'),
  }),
  comparisons: () => ({ baseline: 'a', arms: ['a', 'b'], metrics: ['rate'] }),
  run(config, ctx): RunRecord {
    const budget = config.budget as number;
    seen.push({ budget, seed: ctx.seed });
    const rate = budget / 100 + ctx.seed / 1000;
    return {
      experiment: 'toy',
      seed: ctx.seed,
      version: '0.1.0',
      config: { budget, other: config.other as number },
      metrics: { 'rate.a': rate, 'rate.b': rate + 0.01 },
      curves: {},
      tables: {},
      timing: { wall_ms: 0 },
    };
  },
};

describe('runSweep', () => {
  it('runs every value over the same seeds and collects the dose-response with paired differences', async () => {
    seen.length = 0;
    const rec = await runSweep(toy, ['other=1'], { key: 'budget', values: ['20', '40'] }, [1, 2, 3]);
    // common random numbers: the same seeds, in the same order, at every value
    expect(seen).toEqual([1, 2, 3, 1, 2, 3].map((seed, i) => ({ budget: i < 3 ? 20 : 40, seed })));
    expect(rec.sweep).toEqual({ key: 'budget', values: [20, 40] });
    expect(rec.points.map((p) => p.record.config)).toEqual([
      { budget: 20, other: 1 },
      { budget: 40, other: 1 },
    ]);
    expect(rec.baseline).toBe('a');
    const row = (arm: string, value: number) =>
      rec.dose_response.find((r) => r.arm === arm && r.value === value && r.metric === 'rate');
    expect(row('a', 20)?.mean).toBeCloseTo(0.202, 12);
    expect(row('b', 40)?.mean).toBeCloseTo(0.412, 12);
    expect(row('a', 40)?.interval).toBe('bootstrap-percentile');
    expect(row('a', 20)?.diff).toBeUndefined(); // the baseline has no difference from itself
    expect(row('b', 20)?.diff).toBeCloseTo(0.01, 12);
    expect(row('b', 20)?.p_holm).toBe(0.25); // 3 equal differences: exact p = 2/8, one comparison
  });

  it('validates every value before running any, and refuses --set of the swept key', async () => {
    seen.length = 0;
    await expect(runSweep(toy, [], { key: 'budget', values: ['20', '0'] }, [1])).rejects.toMatchObject({
      code: 'BAD_OPTION_VALUE',
    });
    expect(seen).toEqual([]);
    // A check across options (Experiment.check) is part of the validation: it used to run inside the
    // first seed of the bad value, after the good values had run, and came out as "seed 7: ...".
    const checked: Experiment = {
      ...toy,
      check: (config) => {
        if ((config.budget as number) > (config.other as number) + 100) {
          throw new LabError('BAD_ARGUMENT', `budget=${config.budget} exceeds other + 100`);
        }
      },
    };
    const e = await runSweep(checked, [], { key: 'budget', values: ['20', '500'] }, [7]).then(
      () => null,
      (err: LabError) => err,
    );
    expect(e).toMatchObject({ code: 'BAD_OPTION_VALUE', message: 'budget=500 exceeds other + 100' });
    expect(seen).toEqual([]);
    await expect(runSweep(toy, [], { key: 'nope', values: ['1', '2'] }, [1])).rejects.toMatchObject({
      code: 'UNKNOWN_OPTION',
    });
    await expect(
      runSweep(toy, ['budget=5'], { key: 'budget', values: ['1', '2'] }, [1]),
    ).rejects.toMatchObject({
      code: 'BAD_CLI',
      message: expect.stringContaining('exclude each other'),
    });
  });
});
