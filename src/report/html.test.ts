import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { LabError } from '../core/errors.js';
import { runSweep } from '../experiments/sweep.js';
import { truncation } from '../experiments/truncation/truncation.js';
import type { RunRecord } from '../experiments/types.js';
import { pngFileName, writeHtmlReport } from './html.js';
import { readRecord, toJson, writeFileAtomic } from './records.js';

// The real writer, wrapped so the tests can see which files went through the atomic path.
vi.mock('./records.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('./records.js')>();
  return { ...actual, writeFileAtomic: vi.fn(actual.writeFileAtomic) };
});

const record: RunRecord = {
  experiment: 'agent',
  seed: 3,
  version: '0.1.0',
  config: {},
  metrics: { m: 1 },
  curves: { update: [0, 1], 'success.train': [0.25, 0.75], 'group kind/odd.x': [1, 0] },
  tables: {},
  timing: { wall_ms: 1 },
};

describe('writeHtmlReport', () => {
  it('writes the page (creating its directory) and one PNG per plot, in page order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-report-'));
    const html = join(dir, 'nested', 'r.html');
    const result = await writeHtmlReport([record], { html, png: join(dir, 'png'), sources: ['r.json'] });
    expect(result.plotted).toEqual(['success', 'group kind/odd']);
    expect(await readdir(join(dir, 'png'))).toEqual(['01-success.png', '02-group_kind_odd.png']);
    const page = await readFile(html, 'utf8');
    expect(page.match(/<figure class="plot"/g)).toHaveLength(2);
    expect(page).toContain('<code>r.json</code>');
    // A registered experiment at its defaults reruns with no --set; an audit record gets no rerun line.
    const auditHtml = join(dir, 'audit.html');
    await writeHtmlReport([{ ...record, experiment: 'audit' }], {
      html: auditHtml,
      png: null,
      sources: ['a.json'],
    });
    expect(await readFile(auditHtml, 'utf8')).not.toContain('rerun:');
    expect(page).toContain('rerun: <code class="rerun">labs run --experiment agent --seed 3</code>');
    // Page and PNGs are all written temp-file-then-rename: an interrupted run leaves no half PNG.
    const written = vi.mocked(writeFileAtomic).mock.calls.map((c) => c[0]);
    expect(written).toEqual(
      expect.arrayContaining([
        html,
        join(dir, 'png', '01-success.png'),
        join(dir, 'png', '02-group_kind_odd.png'),
      ]),
    );
  });

  it('titles an audit page by its dump, not "seed 0", with integer step ticks and the labs audit rerun line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-report-'));
    const audit = JSON.parse(
      await readFile(new URL('../../docs/records/audit-generic-example.json', import.meta.url), 'utf8'),
    ) as RunRecord;
    const html = join(dir, 'audit.html');
    await writeHtmlReport([audit], { html, png: null, sources: ['audit.json'] });
    const page = await readFile(html, 'utf8');
    expect(page).toContain('<title>audit — examples/generic-rollouts.jsonl</title>');
    expect(page).not.toContain('seed 0');
    expect(page).toContain('audit of examples/generic-rollouts.jsonl');
    expect(page).toContain('rerun: <code class="rerun">labs audit examples/generic-rollouts.jsonl</code>');
    const steps = [...page.matchAll(/aria-label="x-axis tick label">(.*?)<\/g>/g)].flatMap((m) =>
      [...(m[1] as string).matchAll(/>([^<]*)<\/text>/g)].map((t) => t[1] as string),
    );
    expect(steps.length).toBeGreaterThan(1);
    for (const t of steps) expect(t).toMatch(/^\d+$/);
  });

  it('reopens a sweep record written to disk: its own page, PNGs, constants named, no overlay', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-report-'));
    const sweep = await runSweep(
      truncation,
      ['updates=10', 'eval_tasks=20', 'tasks_per_update=4'],
      { key: 'budget', values: ['24', '30'] },
      [1, 2],
    );
    const path = join(dir, 'record.json');
    await writeFileAtomic(path, `${toJson(sweep)}\n`);
    const data = await readRecord(path); // non-finite numbers come back as 'NaN' strings
    const result = await writeHtmlReport([data], {
      html: join(dir, 's.html'),
      png: join(dir, 'png'),
      sources: [path],
    });
    const page = await readFile(join(dir, 's.html'), 'utf8');
    expect(page).toContain('<title>truncation — sweep of budget</title>');
    expect(page).toContain(
      '<li>rerun: labs run --experiment truncation --sweep budget=24,30 --seeds 1..2 --set updates=10 --set tasks_per_update=4 --set eval_tasks=20</li>',
    );
    expect(result.plotted.length).toBeGreaterThan(0);
    expect(result.plotted.every((f) => f.startsWith('sweep'))).toBe(true);
    expect(result.pngs).toHaveLength(result.plotted.length);
    expect(await readdir(join(dir, 'png'))).toHaveLength(result.plotted.length);
    expect(page.match(/<figure class="plot"/g)).toHaveLength(result.plotted.length);
    const err = await writeHtmlReport([data, record], {
      html: join(dir, 'x.html'),
      png: null,
      sources: [path, 'r.json'],
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BAD_CLI' });
    expect((err as Error).message).toContain(`${path} is a sweep record, which gets a page of its own`);
  });

  it('rejects a malformed record with BAD_RECORD naming its source, before writing anything', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-report-'));
    const bad = { ...record, curves: { update: [0, 1], 'success.train': [0.25] } };
    const err = await writeHtmlReport([record, bad], {
      html: join(dir, 'r.html'),
      png: null,
      sources: ['good.json', 'bad.json'],
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).code).toBe('BAD_RECORD');
    expect((err as LabError).message).toBe(
      'bad.json: curves.success.train has 1 values but curves.update has 2',
    );
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('pngFileName', () => {
  it('numbers files and replaces characters that are unsafe in file names', () => {
    expect(pngFileName(0, 'group_kind')).toBe('01-group_kind.png');
    expect(pngFileName(11, 'a/b c')).toBe('12-a_b_c.png');
  });
});
