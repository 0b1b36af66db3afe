import { describe, expect, it } from 'vitest';
import { compareRecords, defaultCompareMetrics } from './compareRecords.js';
import { summarizeRuns } from './multiSeed.js';
import type { MultiSeedRecord, RunRecord } from './types.js';

function record(seeds: number[], lift: number, budget: number): MultiSeedRecord {
  const runs: RunRecord[] = seeds.map((seed) => ({
    experiment: 'toy',
    seed,
    version: '0.1.0',
    config: { budget },
    metrics: { 'rate.a': 0.3 + seed / 100 + lift, 'rate.b': 0.5 + lift, 'rate.b_minus_a': 0.2 },
    curves: {},
    tables: {},
    timing: { wall_ms: 0 },
  }));
  return summarizeRuns('toy', { budget }, runs, 0);
}

const plan = { baseline: 'a', arms: ['a', 'b'], metrics: ['rate'] };

describe('compareRecords', () => {
  it('pairs by seed (whatever the order) and reports B − A with exact p and Holm', () => {
    const a = record([1, 2, 3, 4, 5], 0, 24);
    const b = record([5, 4, 3, 2, 1], 0.1, 25); // same seeds, other order
    const r = compareRecords(
      { record: a, source: 'a.json', label: 'A' },
      { record: b, source: 'b.json', label: 'B' },
      [],
      plan,
    );
    expect(r.comparisons.map((c) => c.metric)).toEqual(['rate.a', 'rate.b']);
    for (const c of r.comparisons) {
      expect(c.diff).toBeCloseTo(0.1, 12); // paired by seed: every difference is exactly the lift
      expect(c.ci95[0]).toBeCloseTo(0.1, 12);
      expect(c.p).toBe(2 / 32);
      expect(c.p_holm).toBe(4 / 32); // Holm over the two: 2 x 2/32
      expect([c.arm, c.baseline]).toEqual(['B', 'A']);
    }
    expect(r.config_diff).toEqual({ budget: [24, 25] });
  });

  it('compares the chosen metrics, and by default the headline ones (else all but per-seed differences)', () => {
    const a = record([1, 2], 0, 24);
    const b = record([1, 2], 0.1, 25);
    expect(defaultCompareMetrics(a, b, plan)).toEqual(['rate.a', 'rate.b']);
    expect(defaultCompareMetrics(a, b, null)).toEqual(['rate.a', 'rate.b']);
    const r = compareRecords({ record: a, source: 'a', label: 'A' }, { record: b, source: 'b', label: 'B' }, [
      'rate.b',
    ]);
    expect(r.comparisons.map((c) => c.metric)).toEqual(['rate.b']);
  });

  it('lists a metric with one value in every seed of both records instead of testing it', () => {
    const withCount = (r: MultiSeedRecord) =>
      summarizeRuns(
        'toy',
        r.config,
        r.runs.map((run) => ({ ...run, metrics: { ...run.metrics, eval_tasks: 400 } })),
        0,
      );
    const a = withCount(record([1, 2, 3, 4, 5], 0, 24));
    const b = withCount(record([1, 2, 3, 4, 5], 0.1, 25));
    const r = compareRecords({ record: a, source: 'a', label: 'A' }, { record: b, source: 'b', label: 'B' });
    expect(r.comparisons.map((c) => c.metric)).toEqual(['rate.a', 'rate.b']);
    expect(r.constants).toEqual([{ metric: 'eval_tasks', value: 400 }]);
    // Holm over the two real comparisons, not three.
    expect(r.comparisons.map((c) => c.p_holm)).toEqual([4 / 32, 4 / 32]);
  });

  it('compares a repeated --metric once, so Holm counts it once', () => {
    const a = record([1, 2, 3, 4, 5], 0, 24);
    const b = record([1, 2, 3, 4, 5], 0.1, 25);
    const r = compareRecords({ record: a, source: 'a', label: 'A' }, { record: b, source: 'b', label: 'B' }, [
      'rate.b',
      'rate.b',
    ]);
    expect(r.comparisons.map((c) => c.metric)).toEqual(['rate.b']);
    expect(r.comparisons[0]?.p_holm).toBe(2 / 32); // was 4 / 32: the duplicate doubled it
  });

  it('refuses two records with no metric in common (two experiments) instead of printing an empty table', () => {
    const a = record([1, 2, 3], 0, 24);
    const other = summarizeRuns(
      'filter',
      {},
      a.runs.map((r) => ({ ...r, experiment: 'filter', metrics: { kept: 0.5 + r.seed / 10 } })),
      0,
    );
    expect(() =>
      compareRecords(
        { record: a, source: 'a.json', label: 'A' },
        { record: other, source: 'f.json', label: 'B' },
      ),
    ).toThrow(
      expect.objectContaining({
        code: 'BAD_CLI',
        message: expect.stringMatching(
          /no metric in common: a\.json \(toy\) and f\.json \(filter\).*--metric-a KEY --metric-b KEY/,
        ),
      }),
    );
  });

  it('pairs a named metric of each record across experiments (--metric-a / --metric-b)', () => {
    const a = record([1, 2, 3, 4, 5], 0, 24);
    const other = summarizeRuns(
      'filter',
      {},
      [5, 3, 1, 2, 4].map((seed) => ({
        ...(a.runs[0] as RunRecord),
        experiment: 'filter',
        seed,
        metrics: { 'kept.x': 0.3 + seed / 100 + 0.25 },
      })),
      0,
    );
    const r = compareRecords(
      { record: a, source: 'a.json', label: 'A' },
      { record: other, source: 'f.json', label: 'F' },
      [],
      null,
      [['rate.a', 'kept.x']],
    );
    expect(r.comparisons.map((c) => c.metric)).toEqual(['kept.x − rate.a']);
    // paired by seed although F lists its seeds in another order: every difference is 0.25
    expect(r.comparisons[0]?.diff).toBeCloseTo(0.25, 12);
    expect(r.comparisons[0]?.ci95[1]).toBeCloseTo(0.25, 12);
    expect(r.comparisons[0]?.p).toBe(2 / 32);
    expect([r.a.experiment, r.b.experiment]).toEqual(['toy', 'filter']);
    expect(() =>
      compareRecords(
        { record: a, source: 'a.json', label: 'A' },
        { record: other, source: 'f.json', label: 'F' },
        [],
        null,
        [['rate.a', 'kept.y']],
      ),
    ).toThrow('--metric-b kept.y: not a numeric metric of f.json (filter); its metrics: kept.x');
  });

  it('names what it leaves out: a metric in one record only, and seeds whose value is not finite', () => {
    const a = record([1, 2, 3, 4, 5], 0, 24);
    const withExtra = (r: MultiSeedRecord, bad: number) =>
      summarizeRuns(
        'toy',
        r.config,
        r.runs.map((run) => ({
          ...run,
          metrics: {
            ...run.metrics,
            'rate.b': run.seed === bad ? Number.NaN : (run.metrics['rate.b'] as number),
            len: run.seed,
          },
        })),
        0,
      );
    const b = withExtra(record([1, 2, 3, 4, 5], 0.1, 25), 2);
    const both = { a: { record: a, source: 'a', label: 'A' }, b: { record: b, source: 'b', label: 'B' } };
    // Default: rate.b is not summarised in B (seed 2 is NaN) and len is only in B; both named.
    const r = compareRecords(both.a, both.b);
    expect(r.comparisons.map((c) => c.metric)).toEqual(['rate.a']);
    expect(r.notes).toEqual([
      'not compared: rate.b (not a finite number in B seed 2); len (not in A); --metric KEY compares such a metric on the seeds where both are finite',
    ]);
    // Asked for: compared on the other seeds, n = 4, and the seed named.
    const asked = compareRecords(both.a, both.b, ['rate.b']);
    expect(asked.comparisons[0]?.n).toBe(4);
    expect(asked.notes).toEqual(['rate.b: seed 2 left out (not a finite number in B: 2), n = 4 of 5']);
  });

  it('refuses records on different seeds and unknown metrics as usage errors that say why', () => {
    const a = record([1, 2, 3], 0, 24);
    const b = record([2, 3, 4], 0, 24);
    expect(() =>
      compareRecords(
        { record: a, source: 'a.json', label: 'A' },
        { record: b, source: 'b.json', label: 'B' },
      ),
    ).toThrow(/different seeds \(only in a.json: 1; only in b.json: 4\)/);
    expect(() =>
      compareRecords(
        { record: a, source: 'a.json', label: 'A' },
        { record: a, source: 'c.json', label: 'B' },
        ['nope'],
      ),
    ).toThrow(
      expect.objectContaining({ code: 'BAD_CLI', message: expect.stringContaining('--metric nope') }),
    );
  });
});
