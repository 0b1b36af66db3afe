import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LabError } from '../core/errors.js';
import { runSeeds, type SeedOutcome, type SeedRunner, type SeedTask } from './multiSeed.js';
import { defineOptions, option } from './options.js';
import { curveBands } from './seedStatistics.js';
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
    const rec = await runSeeds(toy, { k: 10 }, [1, 2, 3], (d) => progress.push(d));
    expect(rec.seeds).toEqual([1, 2, 3]);
    expect(rec.runs.map((r) => r.metrics.m)).toEqual([1, 2, 3]);
    const m = rec.summary.m!;
    expect(m.mean).toBeCloseTo(2, 12);
    expect(m.std).toBeCloseTo(1, 12);
    expect([m.min, m.max]).toEqual([1, 3]);
    // values outside [0, 1]: t interval, t_{0.975,2} = 4.303; half width = 4.303 * 1 / sqrt(3)
    expect(m.interval).toBe('t');
    expect(m.ci95[1] - m.mean).toBeCloseTo(4.303 / Math.sqrt(3), 10);
    expect(rec.summary.label).toBeUndefined();
    expect(rec.curve_summary?.['c.a']?.mean).toEqual([2, 4]);
    expect(rec.curve_summary?.['c.a']?.interval).toBe('t');
    expect(rec.comparisons).toBeUndefined(); // the toy declares no arms
    expect(rec.curve_summary?.update).toBeUndefined();
    expect(progress.at(-1)).toBe(3);
  });

  describe('on a SeedRunner (the --jobs pool)', () => {
    /**
     * A runner that finishes the tasks in `order` (task indices), failing the seeds `fail` picks;
     * tasks after index `claimedUpTo` get no outcome (never claimed after a failure).
     */
    const scrambled = (
      order: number[],
      fail: (seed: number) => boolean = () => false,
      claimedUpTo = Number.POSITIVE_INFINITY,
    ): SeedRunner => ({
      jobs: 2,
      async runAll(tasks: readonly SeedTask[], onFinished?: (done: number, total: number) => void) {
        const outcomes: (SeedOutcome | undefined)[] = new Array(tasks.length);
        let done = 0;
        for (const i of order) {
          const t = tasks[i] as SeedTask;
          if (i > claimedUpTo) continue;
          outcomes[i] = fail(t.seed)
            ? { ok: false, error: new LabError('NON_FINITE', `logit is NaN at seed ${t.seed}`) }
            : {
                ok: true,
                record: (await toy.run({ k: t.config.k as number }, { seed: t.seed })) as RunRecord,
              };
          onFinished?.(++done, tasks.length);
        }
        return outcomes;
      },
    });

    it('gives the serial record (in seed order) with finished seeds counted', async () => {
      const seeds = [5, 1, 4, 2, 3];
      const progress: [number, number][] = [];
      const runner = scrambled([3, 1, 4, 0, 2]);
      const rec = await runSeeds(toy, { k: 1 }, seeds, (d, t) => progress.push([d, t]), runner);
      const serial = await runSeeds(toy, { k: 1 }, seeds);
      expect({ ...rec, timing: null }).toEqual({ ...serial, timing: null });
      expect(progress).toEqual([1, 2, 3, 4, 5].map((d) => [d, 5]));
    });

    it('throws the first failing seed in list order, as a serial run does', async () => {
      // Seeds 3 and 4 fail, 4 first: a serial run reports seed 3, and so must the pool.
      const runner = scrambled([3, 0, 1, 2], (s) => s >= 3, 3);
      await expect(runSeeds(toy, { k: 1 }, [1, 2, 3, 4, 5, 6], undefined, runner)).rejects.toMatchObject({
        code: 'NON_FINITE',
        message: 'seed 3: logit is NaN at seed 3',
        details: { seed: 3 },
      });
    });

    it('a runner that left out a task before any failure is an error, not a short record', async () => {
      const runner = scrambled([0, 2, 3], () => false);
      await expect(runSeeds(toy, { k: 1 }, [1, 2, 3, 4], undefined, runner)).rejects.toThrow(
        'the seed runner gave no outcome for seed 2 (task 1)',
      );
    });

    it('takes the curve bands from the runner when it computes them', async () => {
      const seeds = [1, 2, 3];
      const serial = await runSeeds(toy, { k: 1 }, seeds);
      const asked: string[] = [];
      const runner: SeedRunner = {
        ...scrambled([2, 0, 1]),
        async bandAll(items) {
          asked.push(...items.map((it) => it.key));
          // computed last to first, as another thread might: same bands
          return items
            .map((it, i) => [i, curveBands(it.series, it.key)] as const)
            .reverse()
            .sort((a, b) => a[0] - b[0])
            .map(([, band]) => band);
        },
      };
      const rec = await runSeeds(toy, { k: 1 }, seeds, undefined, runner);
      expect(asked).toEqual(['c.a']); // `update` is not banded
      expect({ ...rec, timing: null }).toEqual({ ...serial, timing: null });
      // and they are used as given
      const marked: SeedRunner = {
        ...runner,
        bandAll: async (items) => items.map(() => ({ mean: [7], lo: [7], hi: [7], interval: 't' as const })),
      };
      expect((await runSeeds(toy, { k: 1 }, seeds, undefined, marked)).curve_summary?.['c.a']?.mean).toEqual([
        7,
      ]);
    });

    it('a one-thread runner is not used: the seeds run here', async () => {
      const runner = { ...scrambled([]), jobs: 1 };
      const rec = await runSeeds(toy, { k: 1 }, [1, 2], undefined, runner);
      expect(rec.seeds).toEqual([1, 2]);
    });
  });
});

describe('runSeeds: rates and paired comparisons', () => {
  // Two arms whose per-seed rates are known: 'b' beats 'a' by 0.1 on every seed but one.
  const armed: Experiment = {
    name: 'armed',
    summary: 'two arms with known rates',
    options: defineOptions({}),
    comparisons: () => ({ baseline: 'a', arms: ['a', 'b'], metrics: ['rate', 'len'] }),
    run(_config, ctx): RunRecord {
      const base = ctx.seed === 1 ? 1 : 0.5 + 0.02 * ctx.seed;
      const lift = ctx.seed === 5 ? -0.05 : 0.1;
      return {
        experiment: 'armed',
        seed: ctx.seed,
        version: '0.1.0',
        config: {},
        metrics: {
          'rate.a': base,
          'rate.b': Math.min(1, base + lift),
          'len.a': 10 + ctx.seed,
          'len.b': ctx.seed === 3 ? Number.NaN : 12 + ctx.seed,
          // a per-seed difference is never summarised as a rate, even when all values are in [0, 1]
          'rate.b_minus_a': Math.min(1, base + lift) - base,
        },
        curves: { update: [1], 'success.a': [base] },
        tables: {},
        timing: { wall_ms: 0 },
      };
    },
  };

  it('summarises rates with a bootstrap interval inside [0, 1] and says so', async () => {
    const rec = await runSeeds(armed, {}, [1, 2, 3, 4, 5, 6]);
    const s = rec.summary['rate.b']!;
    expect(s.interval).toBe('bootstrap-percentile');
    expect(s.ci95[0]).toBeGreaterThanOrEqual(s.min);
    expect(s.ci95[1]).toBeLessThanOrEqual(1);
    expect(rec.summary['len.a']!.interval).toBe('t');
    expect(rec.summary['rate.b_minus_a']!.interval).toBe('t');
    expect(rec.curve_summary?.['success.a']?.interval).toBe('bootstrap-percentile');
    expect(rec.statistics?.stats_seed).toBe(0);
  });

  it('reports every arm vs baseline per metric with exact p, Holm p and mde80', async () => {
    const rec = await runSeeds(armed, {}, [1, 2, 3, 4, 5, 6]);
    const cmp = rec.comparisons ?? [];
    expect(cmp.map((c) => `${c.arm}-${c.baseline}:${c.metric}`)).toEqual(['b-a:rate', 'b-a:len']);
    const rate = cmp[0]!;
    // differences: seed 1 capped at 1 -> 0; seeds 2,3,4,6 -> 0.1; seed 5 -> -0.05
    expect(rate.n).toBe(6);
    expect(rate.diff).toBeCloseTo(0.35 / 6, 12);
    // sign flips of (0, .1, .1, .1, .1, -.05): |sum| >= 0.35 exactly when the four 0.1s share a sign
    // (0.4 ± 0.05; three against one reach only 0.25): 2 (their sign) x 2 (the 0.05) x 2 (the zero) = 8 of 64
    expect(rate.p).toBeCloseTo(8 / 64, 12);
    expect(rate.p_method).toBe('exact');
    const len = cmp[1]!;
    // seed 3 has NaN for len.b: 5 pairs, every difference 2 -> p = 2/32, CI [2, 2], mde80 0
    expect(len.n).toBe(5);
    expect(len.diff).toBe(2);
    expect(len.ci95).toEqual([2, 2]);
    expect(len.p).toBe(2 / 32);
    expect(len.mde80).toBe(0);
    // Holm over the two: sorted 1/16 -> 2·1/16 = 1/8, then max(1/8, 1·1/8) = 1/8
    expect(rate.p_holm).toBeCloseTo(2 / 16, 12);
    expect(len.p_holm).toBeCloseTo(2 / 16, 12);
    // deterministic: the same seeds give the same statistics
    expect((await runSeeds(armed, {}, [1, 2, 3, 4, 5, 6])).comparisons).toEqual(cmp);
  });
});
