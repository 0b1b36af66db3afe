import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { type LabeledRecord, planPlots, recordLabels, splitCurveKey } from './plotData.js';

function run(seed: number, curves: Record<string, number[]>, extra: Partial<RunRecord> = {}): RunRecord {
  return {
    experiment: 'agent',
    seed,
    version: '0.1.0',
    config: { lr: 0.5 },
    metrics: {},
    curves,
    tables: {},
    timing: { wall_ms: 1 },
    ...extra,
  };
}

const alone = (record: RunRecord | MultiSeedRecord): LabeledRecord[] => [
  { record, label: '', source: 'r.json' },
];

describe('splitCurveKey', () => {
  it('splits at the first dot; a key without a dot is its own family and series', () => {
    expect(splitCurveKey('group_kind.all_wrong')).toEqual(['group_kind', 'all_wrong']);
    expect(splitCurveKey('ratio.p99.9')).toEqual(['ratio', 'p99.9']);
    expect(splitCurveKey('loss')).toEqual(['loss', 'loss']);
  });
});

describe('planPlots on one record', () => {
  const record = run(
    7,
    {
      update: [0, 1, 2],
      'success.train': [0.1, 0.5, 0.9],
      'group_kind.all_wrong': [0.8, 0.5, 0.2],
      'group_kind.all_right': [0.2, 0.5, 0.8],
      entropy: [1, 0.5, 0.25],
    },
    {
      plots: {
        group_kind: { title: 'Group kinds', y: 'fraction of groups', kind: 'stacked-area' },
        ratio: { title: 'Ratio tails', y: 'ratio', table: 'ratios', xField: 'lag', yFields: ['p99'] },
      },
    },
  );

  it('puts hinted families first, groups series by family, keeps the hinted kind and labels', () => {
    const plan = planPlots(alone(record));
    expect(plan.plots.map((p) => p.family)).toEqual(['group_kind', 'success', 'entropy']);
    const groups = plan.plots[0];
    expect(groups).toMatchObject({
      title: 'Group kinds',
      yLabel: 'fraction of groups',
      xLabel: 'update',
      kind: 'stacked-area',
      series: ['all_wrong', 'all_right'],
      band: false,
    });
    expect(groups?.points).toContainEqual({ x: 2, y: 0.2, series: 'all_wrong' });
    expect(groups?.points).toHaveLength(6);
    // Unhinted: line, title from the family name.
    expect(plan.plots[1]).toMatchObject({ title: 'success', kind: 'line', series: ['train'] });
    expect(plan.plots[2]?.series).toEqual(['entropy']);
  });

  it('omits a hinted plot whose table is absent, with a note naming the record', () => {
    const plan = planPlots(alone(record));
    expect(plan.omitted).toEqual(["'Ratio tails' omitted: r.json: no table 'ratios'"]);
  });

  it('keeps non-finite values as NaN points (drawn as gaps), never as numbers', () => {
    const plan = planPlots(alone(run(1, { update: [0, 1, 2], 'loss.total': [1, Number.NaN, 3] })));
    expect(plan.plots[0]?.points.map((p) => p.y)).toEqual([1, Number.NaN, 3]);
  });

  it('omits a family with no finite value and notes a series with none', () => {
    const plan = planPlots(
      alone(
        run(1, {
          update: [0, 1],
          'a.b': [Number.NaN, Number.NaN],
          'c.d': [1, 2],
          'c.e': [Number.NaN, Number.NaN],
        }),
      ),
    );
    expect(plan.plots.map((p) => p.family)).toEqual(['c']);
    expect(plan.omitted).toEqual(["'a' omitted: no finite values in b"]);
    expect(plan.plots[0]?.notes).toEqual(['no finite values (not drawn): e']);
    expect(planPlots(alone(run(1, { update: [], 'a.b': [] }))).omitted).toEqual([
      "'a' omitted: no finite values in b",
    ]);
  });

  it('uses the index as x (and says so) when there is no curves.update', () => {
    const plan = planPlots(alone(run(1, { 'loss.total': [5, 6] })));
    expect(plan.plots[0]?.points.map((p) => p.x)).toEqual([0, 1]);
    expect(plan.plots[0]?.notes).toContain('no curves.update: x is the index');
  });

  it('plots a table hint: x from xField, one series per yField', () => {
    const rec = run(
      1,
      {},
      {
        tables: {
          lags: [
            { lag: 0, n: 5, m: 1 },
            { lag: 1, n: 3, m: 2 },
          ],
        },
        plots: {
          lag: { title: 'Lag', y: 'count', kind: 'bar', table: 'lags', xField: 'lag', yFields: ['n', 'm'] },
        },
      },
    );
    const plot = planPlots(alone(rec)).plots[0];
    expect(plot).toMatchObject({ kind: 'bar', xLabel: 'lag', series: ['n', 'm'] });
    expect(plot?.points).toEqual([
      { x: 0, y: 5, series: 'n' },
      { x: 1, y: 3, series: 'n' },
      { x: 0, y: 1, series: 'm' },
      { x: 1, y: 2, series: 'm' },
    ]);
  });
});

describe('planPlots on a multi-seed record', () => {
  // Three seeds with constant curves 1, 2, 3: mean 2, sample std 1, t(0.975, 2) = 4.303,
  // half-width 4.303 / sqrt(3) = 2.48434 (hand-computed).
  const runs = [1, 2, 3].map((v) =>
    run(
      v,
      { update: [0, 1], 'group_kind.all_wrong': [v, v], 'group_kind.all_right': [v, v] },
      {
        plots: { group_kind: { title: 'Group kinds', y: 'fraction', kind: 'stacked-area' } },
        tables: { lags: [{ lag: 0, n: v }] },
      },
    ),
  );
  const multi: MultiSeedRecord = {
    experiment: 'agent',
    seeds: [1, 2, 3],
    version: '0.1.0',
    config: {},
    runs,
    summary: {},
    timing: { wall_ms: 3 },
  };

  it('draws the mean with the 95% band (computed from the runs when curve_summary is absent)', () => {
    const plot = planPlots(alone(multi)).plots[0];
    expect(plot?.band).toBe(true);
    const p = plot?.points[0];
    expect(p?.y).toBeCloseTo(2, 12);
    expect(p?.lo).toBeCloseTo(2 - 2.48434, 4);
    expect(p?.hi).toBeCloseTo(2 + 2.48434, 4);
  });

  it('uses curve_summary when present', () => {
    const withSummary: MultiSeedRecord = {
      ...multi,
      curve_summary: {
        'group_kind.all_wrong': { mean: [0.5, 0.4], lo: [0.4, 0.3], hi: [0.6, 0.5] },
      },
    };
    const plot = planPlots(alone(withSummary)).plots[0];
    expect(plot?.series).toEqual(['all_wrong']);
    expect(plot?.points).toEqual([
      { x: 0, y: 0.5, lo: 0.4, hi: 0.6, series: 'all_wrong' },
      { x: 1, y: 0.4, lo: 0.3, hi: 0.5, series: 'all_wrong' },
    ]);
  });

  it('turns a stacked area into lines with bands, and says so', () => {
    const plot = planPlots(alone(multi)).plots[0];
    expect(plot?.kind).toBe('line');
    expect(plot?.notes.join(' ')).toContain('a stacked area cannot show bands');
  });

  it('averages table rows across seeds with a band', () => {
    const rec: MultiSeedRecord = {
      ...multi,
      runs: runs.map((r) => ({
        ...r,
        plots: { lag: { title: 'Lag', y: 'count', table: 'lags', xField: 'lag', yFields: ['n'] } },
      })),
    };
    const plot = planPlots(alone(rec)).plots.find((p) => p.family === 'lag');
    expect(plot?.points).toHaveLength(1);
    expect(plot?.points[0]?.y).toBeCloseTo(2, 12);
    expect(plot?.points[0]?.hi).toBeCloseTo(2 + 2.48434, 4);
  });
});

describe('several records overlaid', () => {
  it('prefixes series by record label and notes a family missing from one record', () => {
    const a = run(1, { update: [0], 'success.train': [0.1], 'group_kind.mixed': [1] });
    const b = run(2, { update: [0], 'success.train': [0.2] });
    const plan = planPlots([
      { record: a, label: 'seed 1', source: 'a.json' },
      { record: b, label: 'seed 2', source: 'b.json' },
    ]);
    const success = plan.plots.find((p) => p.family === 'success');
    expect(success?.series).toEqual(['seed 1', 'seed 2']);
    const groups = plan.plots.find((p) => p.family === 'group_kind');
    expect(groups?.series).toEqual(['seed 1']);
    expect(groups?.notes).toEqual(["not in seed 2 (b.json): no curves 'group_kind.*'"]);
  });
});

describe('overlaid line plots: colour by series, line style by record', () => {
  it("records each series' record and name within it, and says which line style is which record", () => {
    const a = run(1, {
      update: [0],
      'group_kind.mixed': [0.5],
      'group_kind.all_right': [0.1],
      'success.train': [0.1],
    });
    const b = run(2, {
      update: [0],
      'group_kind.mixed': [0.4],
      'group_kind.all_right': [0.2],
      'success.train': [0.2],
    });
    const plan = planPlots([
      { record: a, label: 'seed 1', source: 'a.json' },
      { record: b, label: 'seed 2', source: 'b.json' },
    ]);
    const groups = plan.plots.find((p) => p.family === 'group_kind');
    expect(groups?.overlay).toEqual({
      record: [0, 0, 1, 1],
      base: ['mixed', 'all_right', 'mixed', 'all_right'],
      labels: ['seed 1', 'seed 2'],
    });
    expect(groups?.notes).toContain('line style by record: solid = seed 1; dashed = seed 2');
    // One series per record: the name within the record is empty, so both share one colour.
    expect(plan.plots.find((p) => p.family === 'success')?.overlay?.base).toEqual(['', '']);
    // A single record is never an overlay.
    expect(planPlots([{ record: a, label: '', source: 'a.json' }]).plots[0]?.overlay).toBeUndefined();
  });
});

describe('recordLabels', () => {
  it('names what differs: experiment, seed, config keys', () => {
    const a = run(1, {}, { config: { lr: 0.5, mode: 'token-mean' } });
    const b = run(2, {}, { config: { lr: 0.5, mode: 'seq-mean-token-sum' } });
    expect(recordLabels([a, b])).toEqual(['seed 1 mode=token-mean', 'seed 2 mode=seq-mean-token-sum']);
    expect(recordLabels([a, { ...a, experiment: 'rollout' }])).toEqual(['agent', 'rollout']);
    expect(recordLabels([a])).toEqual(['']);
  });

  it('falls back to #i when nothing differs', () => {
    const a = run(1, {});
    expect(recordLabels([a, a])).toEqual(['#1', '#2']);
  });

  it('always gives distinct labels (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ seed: fc.integer({ min: 0, max: 3 }), lr: fc.constantFrom(0.1, 0.5) }), {
          minLength: 2,
          maxLength: 6,
        }),
        (specs) => {
          const labels = recordLabels(specs.map((s) => run(s.seed, {}, { config: { lr: s.lr } })));
          expect(new Set(labels).size).toBe(labels.length);
        },
      ),
    );
  });
});

describe('planPlots on long curves', () => {
  it('plans a curve of 300,000 updates (a spread of that many points would overflow the call stack)', () => {
    const n = 300_000;
    const update = Array.from({ length: n }, (_, i) => i + 1);
    const plan = planPlots(alone(run(1, { update, 'loss.a': update.map((u) => 1 / u) })));
    const points = plan.plots[0]?.points ?? [];
    expect(points.length).toBe(n);
    expect(points[n - 1]).toMatchObject({ x: n, y: 1 / n });
  });
});
