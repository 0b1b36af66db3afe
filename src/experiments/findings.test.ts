import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { checkPhaseSeeds, type FindingsV2, parseFindings, runSets } from './findings.js';

describe('findings manifests', () => {
  it("docs/scale-out.md's example is a valid manifest", () => {
    const doc = readFileSync('docs/scale-out.md', 'utf8').split('## Findings manifests')[1] ?? '';
    const block = /```json\n([\s\S]*?)```/.exec(doc)?.[1] as string;
    const m = parseFindings(JSON.parse(block), 'docs/scale-out.md');
    expect(m.runs.map((r) => r.name)).toEqual(['mask-table', 'mask-neural', 'mask-lr']);
    expect((m as { comparisons: { metrics: string[] }[] }).comparisons[0]?.metrics).toEqual([
      'eval_success.correct',
    ]);
  });

  it('fills defaults, and the command line options come after (and win over) the manifest ones', () => {
    const m = parseFindings(
      {
        format: 'labs-findings/1',
        title: 't',
        seeds: '1..2',
        runs: [{ name: 'a', experiment: 'mask', set: { lr: 0.1, policy: 'table', x: true } }],
      },
      'f.json',
    );
    expect((m as { comparisons: unknown[] }).comparisons).toEqual([]);
    expect(runSets(m.runs[0] as never, ['lr=0.2'])).toEqual(['lr=0.1', 'policy=table', 'x=true', 'lr=0.2']);
  });

  it.each([
    [{ format: 'labs-findings/3' }, /f\.json: format: /],
    [{ runs: [] }, /f\.json: runs: /],
    [{ runs: [{ name: 'A B', experiment: 'mask' }] }, /f\.json: runs\[0\]\.name: lower-case/],
    [
      {
        runs: [
          { name: 'a', experiment: 'mask' },
          { name: 'a', experiment: 'agent' },
        ],
      },
      /f\.json: runs\[1\]\.name: 'a' names two runs/,
    ],
    [
      { runs: [{ name: 'a', experiment: 'mask', sweep: 'lr=1,2' }], comparisons: [{ a: 'a', b: 'a' }] },
      /f\.json: comparisons\[0\]\.a: 'a' is a sweep/,
    ],
  ])('refuses %j naming the field', (fields, message) => {
    const base = {
      format: 'labs-findings/1',
      title: 't',
      seeds: '1..2',
      runs: [{ name: 'a', experiment: 'mask' }],
    };
    expect(() => parseFindings({ ...base, ...fields }, 'f.json')).toThrow(message);
  });

  describe('format 2: discovery and confirmation seeds, claims', () => {
    const base = {
      format: 'labs-findings/2',
      title: 't',
      discovery: '1..3',
      confirmation: '1001..1003',
      runs: [
        { name: 'agg', experiment: 'aggregation' },
        { name: 'mask', experiment: 'mask' },
        { name: 'sw', experiment: 'mask', sweep: 'lr=0.1,0.2' },
      ],
    };

    it('resolves both claim forms to two RUN:METRIC sides, B − A', () => {
      const m = parseFindings(
        {
          ...base,
          claims: [
            {
              id: 'smm',
              run: 'agg',
              arm: 'seq-mean-token-mean',
              baseline: 'token-mean',
              metric: 'eval_success',
              expect: 'down',
              without_collapsed: true,
            },
            {
              id: 'x',
              a: 'agg:eval_success.token-mean',
              b: 'mask:eval_success.correct',
              label: 'mask vs agg',
            },
          ],
        },
        'f.json',
      ) as FindingsV2;
      expect(m.claims).toEqual([
        {
          id: 'smm',
          label: 'seq-mean-token-mean − token-mean: eval_success',
          a: { run: 'agg', metric: 'eval_success.token-mean' },
          b: { run: 'agg', metric: 'eval_success.seq-mean-token-mean' },
          expect: 'down',
          withoutCollapsed: true,
        },
        {
          id: 'x',
          label: 'mask vs agg',
          a: { run: 'agg', metric: 'eval_success.token-mean' },
          b: { run: 'mask', metric: 'eval_success.correct' },
          expect: null,
          withoutCollapsed: false,
        },
      ]);
    });

    it.each([
      [{ claims: [] }, /f\.json: claims: /],
      [{ claims: [{ id: 'a', run: 'agg', arm: 'x', metric: 'm' }] }, /claims\[0\]\.baseline: missing/],
      [{ claims: [{ id: 'a', a: 'agg:m' }] }, /claims\[0\]\.b: missing/],
      [{ claims: [{ id: 'a', a: 'agg:m', b: 'mask:m', run: 'agg' }] }, /claims\[0\]: give either/],
      [{ claims: [{ id: 'a', a: 'agg m', b: 'mask:m' }] }, /claims\[0\]\.a: RUN:METRIC_KEY/],
      [{ claims: [{ id: 'a', a: 'nope:m', b: 'mask:m' }] }, /claims\[0\]\.a: no run is named 'nope'/],
      [{ claims: [{ id: 'a', a: 'sw:m', b: 'mask:m' }] }, /claims\[0\]\.a: 'sw' is a sweep/],
      [
        {
          claims: [
            { id: 'a', a: 'agg:m', b: 'mask:m' },
            { id: 'a', a: 'agg:n', b: 'mask:n' },
          ],
        },
        /claims\[1\]\.id: 'a' names two claims/,
      ],
      [
        { seeds: '1..2', claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }] },
        /f\.json: \(manifest\): Unrecognized key/,
      ],
      [{ claims: [{ id: 'a', a: 'agg:m', b: 'mask:m', expect: 'more' }] }, /claims\[0\]\.expect: /],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          tables: [
            {
              id: 't',
              run: 'agg',
              row_label: 'arm',
              rows: ['x'],
              columns: [{ label: 'c', key: 'k', run: 'nope' }],
            },
          ],
        },
        /tables\[0\]\.columns\[0\]\.run: no run is named 'nope'/,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          tables: [
            {
              id: 't',
              run: 'agg',
              row_label: 'run',
              rows: ['agg', 'typo'],
              columns: [{ label: 'c', key: 'k', run: '{row}' }],
            },
          ],
        },
        /tables\[0\]\.columns\[0\]\.run: no run is named 'typo'/,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          goals: [{ id: 'g', label: 'x', kind: 'seeds', run: 'nope', keys: ['k'], min: 0, share: 1 }],
        },
        /goals\[0\]\.run: no run is named 'nope'/,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          goals: [{ id: 'g', label: 'x', kind: 'sd_ratio', run: 'agg', baseline: 'sw', key: 'k', max: 0.5 }],
        },
        /goals\[0\]\.baseline: 'sw' is a sweep/,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          goals: [{ id: 'g', label: 'x', kind: 'seeds', run: 'agg', keys: ['k'], share: 1 }],
        },
        /goals\[0\]: a seeds goal needs min, max or both/,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          goals: [
            { id: 'g', label: 'x', kind: 'seeds', run: 'agg', keys: ['k'], min: 0.9, max: 0.1, share: 1 },
          ],
        },
        /goals\[0\]\.min: min 0\.9 is above max 0\.1/,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          goals: [{ id: 'g', label: 'x', kind: 'seeds', run: 'agg', keys: ['k'], min: 0, share: 0 }],
        },
        /goals\[0\]\.share: /,
      ],
      [
        {
          claims: [{ id: 'a', a: 'agg:m', b: 'mask:m' }],
          goals: [
            { id: 'g', label: 'x', kind: 'seeds', run: 'agg', keys: ['k'], min: 0, share: 1 },
            { id: 'g', label: 'y', kind: 'seeds', run: 'agg', keys: ['k'], max: 1, share: 1 },
          ],
        },
        /goals\[1\]\.id: 'g' names two goals/,
      ],
    ])('refuses %j naming the field', (fields, message) => {
      expect(() => parseFindings({ ...base, ...fields }, 'f.json')).toThrow(message);
    });

    it('discovery and confirmation seeds must be disjoint', () => {
      expect(() => checkPhaseSeeds([1, 2, 3], [3, 4], 'f.json')).toThrow(
        'f.json: confirmation: seeds 3 are also discovery seeds; the confirmation set must be disjoint',
      );
      expect(() => checkPhaseSeeds([1, 2], [1001, 1002], 'f.json')).not.toThrow();
    });
  });
});
