import fc from 'fast-check';
import { parseHTML } from 'linkedom';
import { describe, expect, it } from 'vitest';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { escapeHtml, renderPage } from './page.js';

function run(seed: number, over: Partial<RunRecord> = {}): RunRecord {
  return {
    experiment: 'agent',
    seed,
    version: '0.1.0',
    config: { lr: 0.5, group_size: 8 },
    metrics: { eval_success_after: 0.875, note: 'ok' },
    curves: {},
    tables: {},
    timing: { wall_ms: 1500 },
    ...over,
  };
}

const doc = (html: string) => parseHTML(html).document;

describe('escapeHtml', () => {
  it('leaves no markup characters and round-trips through an HTML parser (property)', () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        const e = escapeHtml(s);
        expect(e).not.toMatch(/[<>"']/);
        expect(doc(`<p title="${e}">${e}</p>`).querySelector('p')?.textContent).toBe(s);
      }),
      { numRuns: 200 },
    );
  });
});

describe('renderPage', () => {
  it('labels a seed-specific note of a --seeds record with its seed; shared notes appear once, unlabelled', () => {
    const multi: MultiSeedRecord = {
      experiment: 'agent',
      seeds: [1, 2],
      version: '0.1.0',
      config: {},
      runs: [
        run(1, { notes: ['no PPO clip', 'success 0.65 at budget 25'] }),
        run(2, { notes: ['no PPO clip', 'success 0.94 at budget 25'] }),
      ],
      summary: {},
      timing: { wall_ms: 10 },
    };
    const d = doc(
      renderPage({
        records: [{ record: multi, label: '', source: 'm.json' }],
        plots: [],
        omitted: [],
        version: '0.1.0',
      }),
    );
    const items = [...d.querySelectorAll('ul.notes li')].map((li) => li.textContent);
    expect(items).toEqual(['no PPO clip', 'seed 1 (1 of 2, varies by seed): success 0.65 at budget 25']);
  });

  it('shows no 95% CI for a one-seed record (undefined, not [x, x]), alone or beside another record', () => {
    const one: MultiSeedRecord = {
      experiment: 'agent',
      seeds: [3],
      version: '0.1.0',
      config: { lr: 0.5 },
      runs: [run(3)],
      summary: {
        eval_success_after: { mean: 0.875, std: 0, min: 0.875, max: 0.875, ci95: [0.875, 0.875], n: 1 },
      },
      timing: { wall_ms: 10 },
    };
    const alone = doc(
      renderPage({
        records: [{ record: one, label: '', source: 'a.json' }],
        plots: [],
        omitted: [],
        version: '0.1.0',
      }),
    );
    const row = [...alone.querySelectorAll('tr')].find((tr) =>
      tr.textContent?.startsWith('eval_success_after'),
    );
    expect(row?.textContent).toContain('n/a (1 seed)');
    expect(row?.textContent).not.toContain('[0.875, 0.875]');
    const overlaid = renderPage({
      records: [
        { record: one, label: 'seeds 3', source: 'a.json' },
        { record: run(7), label: 'seed 7', source: 'b.json' },
      ],
      plots: [],
      omitted: [],
      version: '0.1.0',
    });
    expect(overlaid).toContain('0.875 n/a (1 seed)');
  });

  it('is one self-contained document: no scripts, no links, no URLs', () => {
    const html = renderPage({
      records: [{ record: run(7, { notes: ['<script>alert(1)</script>'] }), label: '', source: 'r.json' }],
      plots: [],
      omitted: ["'X' omitted: r.json: no table 't'"],
      version: '0.1.0',
    });
    const d = doc(html);
    expect(d.querySelectorAll('script, link, img, iframe').length).toBe(0);
    expect(html).not.toMatch(/https?:\/\//);
    expect(d.querySelector('ul.notes li')?.textContent).toBe('<script>alert(1)</script>');
    expect(d.querySelector('ul.omitted li')?.textContent).toBe("'X' omitted: r.json: no table 't'");
    expect(d.querySelector('h1')?.textContent).toBe('agent — seed 7');
    const cells = [...d.querySelectorAll('table')][0]?.textContent ?? '';
    expect(cells).toContain('eval_success_after');
    expect(cells).toContain('0.875');
  });

  it('compares records side by side and highlights the config rows that differ', () => {
    const a = run(1);
    const b = run(2, { config: { lr: 0.1, group_size: 8 } });
    const d = doc(
      renderPage({
        records: [
          { record: a, label: 'seed 1 lr=0.5', source: 'a.json' },
          { record: b, label: 'seed 2 lr=0.1', source: 'b.json' },
        ],
        plots: [],
        omitted: [],
        version: '0.1.0',
      }),
    );
    const config = [...d.querySelectorAll('table')][1];
    const headers = [...(config?.querySelectorAll('th') ?? [])].map((t) => t.textContent);
    expect(headers).toEqual(['option', 'seed 1 lr=0.5', 'seed 2 lr=0.1']);
    const diffRows = [...(config?.querySelectorAll('tr.diff') ?? [])].map(
      (r) => r.querySelector('td')?.textContent,
    );
    expect(diffRows).toEqual(['lr']);
  });

  it('shows a multi-seed summary with the CI of the mean', () => {
    const multi: MultiSeedRecord = {
      experiment: 'agent',
      seeds: [1, 2, 3],
      version: '0.1.0',
      config: {},
      runs: [run(1), run(2), run(3)],
      summary: { eval_success_after: { mean: 0.5, std: 0.1, min: 0.4, max: 0.6, ci95: [0.25, 0.75], n: 3 } },
      timing: { wall_ms: 10 },
    };
    const d = doc(
      renderPage({
        records: [{ record: multi, label: '', source: 'm.json' }],
        plots: [],
        omitted: [],
        version: '0.1.0',
      }),
    );
    expect(d.querySelector('h1')?.textContent).toBe('agent — 3 seeds (1, 2, 3)');
    const row = [...d.querySelectorAll('table')][0]?.querySelectorAll('tbody tr')[0];
    expect([...(row?.querySelectorAll('td') ?? [])].map((c) => c.textContent)).toEqual([
      'eval_success_after',
      '0.5',
      '0.1',
      '0.4',
      '0.6',
      '[0.25, 0.75]',
      't', // a record without `interval` predates the bootstrap for rates: its interval is the t one
      '3',
    ]);
  });

  it('shows the paired comparisons of a multi-seed record in a table with their methods', () => {
    const multi: MultiSeedRecord = {
      experiment: 'agent',
      seeds: [1, 2, 3],
      version: '0.1.0',
      config: {},
      runs: [run(1), run(2), run(3)],
      summary: {},
      timing: { wall_ms: 10 },
    };
    multi.comparisons = [
      {
        arm: 'b',
        baseline: 'a',
        metric: 'eval_success',
        n: 3,
        diff: 0.1,
        ci95: [0.05, 0.15],
        ci_method: 'bca',
        p: 0.25,
        p_method: 'exact',
        p_holm: 0.5,
        mde80: 0.2,
      },
    ];
    const d = doc(
      renderPage({
        records: [{ record: multi, label: '', source: 'm.json' }],
        plots: [],
        omitted: [],
        version: '0.1.0',
      }),
    );
    const h2 = [...d.querySelectorAll('h2')].map((h) => h.textContent);
    expect(h2).toContain('Paired comparisons');
    const row = [...d.querySelectorAll('table')][0]?.querySelectorAll('tbody tr')[0];
    expect([...(row?.querySelectorAll('td') ?? [])].map((c) => c.textContent)).toEqual([
      'b',
      'a',
      'eval_success',
      '3',
      '0.1',
      '[0.05, 0.15]',
      '0.25',
      '0.5',
      '0.2',
    ]);
    expect(d.body.textContent).toContain('BCa bootstrap');
  });
});
