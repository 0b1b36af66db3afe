// bench/results.json after a full or a partial `bench/run.ts` (bench/results.ts), and the line the docs
// print above its table: a partial run must not wipe the other groups' rows, and must say when it ran.
import { describe, expect, it } from 'vitest';
import {
  type BenchResults,
  type BenchRow,
  type BenchRun,
  benchGroups,
  mergeResults,
  parseResults,
  resultsNote,
  selectGroups,
  unknownGroupMessage,
} from '../bench/results.js';
import { renderDocument } from '../scripts/docsTables.js';

const FULL = '2026-12-01T07:32:14.241Z';
const LATER = '2026-12-03T10:00:00.000Z';
const LATEST = '2026-12-04T09:00:00.000Z';
const ALL = ['advantage', 'loss', 'startup', 'tokenlab'];

const row = (group: string, name: string, ms = 1): BenchRow => ({ group, name, ms });

/** A partial run of `groups` with `rows`, finished at `date` (LATER) on `node` (v20.20.2). */
function partialRun(groups: string[], rows: BenchRow[], date = LATER, node = 'v20.20.2'): BenchRun {
  return { groups, rows, date, node, full: false };
}

/** A full run of ALL on FULL, two rows per group. */
function fullRun(): BenchResults {
  return mergeResults(undefined, {
    groups: ALL,
    rows: ALL.flatMap((g) => [row(g, `${g} 1`), row(g, `${g} 2`)]),
    date: FULL,
    node: 'v20.20.2',
    full: true,
  });
}

describe('groups and their selection', () => {
  it('a group is a bench file name without .bench.ts, in file name order', () => {
    expect(benchGroups(['tokenlab.bench.ts', 'run.ts', 'advantage.bench.ts', 'results.json'])).toEqual([
      'advantage',
      'tokenlab',
    ]);
  });

  it('an argument selects the files whose name contains it; none selects all', () => {
    expect(selectGroups(ALL, undefined)).toEqual(ALL);
    expect(selectGroups(ALL, 'start')).toEqual(['startup']);
    expect(selectGroups(ALL, 'nope')).toEqual([]);
  });

  it('the message for an unknown group names the argument and lists the groups', () => {
    const m = unknownGroupMessage('nope', ALL);
    expect(m).toContain("'nope'");
    expect(m).toContain('advantage, loss, startup, tokenlab');
  });
});

describe('mergeResults', () => {
  it('a full run dates every group with the run', () => {
    const r = fullRun();
    expect(r.date).toBe(FULL);
    expect(r.node).toBe('v20.20.2');
    expect(Object.keys(r.groups)).toEqual(ALL);
    expect(Object.values(r.groups).every((g) => g.date === FULL && g.node === 'v20.20.2')).toBe(true);
    expect(r.rows).toHaveLength(8);
  });

  it('a partial run replaces the rerun group and keeps every other group, in full-run order', () => {
    const r = mergeResults(fullRun(), partialRun(['startup'], [row('startup', 'startup new', 5)]));
    expect(r.rows.map((x) => x.name)).toEqual([
      'advantage 1',
      'advantage 2',
      'loss 1',
      'loss 2',
      'startup new',
      'tokenlab 1',
      'tokenlab 2',
    ]);
    expect(r.date).toBe(FULL); // still the last full run
    expect(r.groups.startup).toEqual({ date: LATER, node: 'v20.20.2' });
    expect(r.groups.loss).toEqual({ date: FULL, node: 'v20.20.2' });
    expect(Object.keys(r.groups)).toEqual(ALL);
  });

  it('a group that ran with no rows loses its old rows but stays dated', () => {
    const r = mergeResults(fullRun(), partialRun(['loss'], []));
    expect(r.rows.some((x) => x.group === 'loss')).toBe(false);
    expect(r.groups.loss?.date).toBe(LATER);
  });

  it('successive partial runs keep their own dates', () => {
    const once = mergeResults(fullRun(), partialRun(['tokenlab'], [row('tokenlab', 't')]));
    const twice = mergeResults(once, partialRun(['advantage'], [row('advantage', 'a')], LATEST, 'v22.1.0'));
    expect(twice.groups.tokenlab?.date).toBe(LATER);
    expect(twice.groups.advantage).toEqual({ date: LATEST, node: 'v22.1.0' });
    expect(twice.rows.map((x) => x.name)).toEqual(['a', 'loss 1', 'loss 2', 'startup 1', 'startup 2', 't']);
  });

  it('a full run replaces everything, dropping groups it did not produce', () => {
    const partial = mergeResults(fullRun(), partialRun(['startup'], [row('startup', 'old startup')]));
    const r = mergeResults(partial, {
      groups: ['advantage', 'startup'],
      rows: [row('advantage', 'fresh a'), row('startup', 'fresh s')],
      date: LATEST,
      node: 'v20.20.2',
      full: true,
    });
    expect(r.date).toBe(LATEST);
    expect(r.rows.map((x) => x.name)).toEqual(['fresh a', 'fresh s']);
    expect(Object.keys(r.groups)).toEqual(['advantage', 'startup']);
    expect(resultsNote(r)).toBe(`Run of ${LATEST} on Node v20.20.2.`);
  });

  it('a partial run with no earlier file records no full run', () => {
    const r = mergeResults(undefined, partialRun(['loss'], [row('loss', 'l')]));
    expect(r.date).toBeNull();
    expect(r.node).toBeNull();
    expect(resultsNote(r)).toBe(`No full run on record; group loss run on ${LATER} on Node v20.20.2.`);
  });
});

describe('parseResults', () => {
  it('reads a file from before groups existed as one full run', () => {
    const r = parseResults({ date: FULL, node: 'v20.20.2', rows: [row('loss', 'l'), row('agent', 'a')] });
    expect(r.groups).toEqual({
      loss: { date: FULL, node: 'v20.20.2' },
      agent: { date: FULL, node: 'v20.20.2' },
    });
    expect(resultsNote(r)).toBe(`Run of ${FULL} on Node v20.20.2.`);
  });

  it('round-trips what mergeResults writes, and refuses a row whose group is undated', () => {
    const r = fullRun();
    expect(parseResults(JSON.parse(JSON.stringify(r)))).toEqual(r);
    expect(() => parseResults({ ...r, groups: { loss: { date: FULL, node: 'v20.20.2' } } })).toThrow(
      /group 'advantage'/,
    );
    expect(() => parseResults({ date: FULL })).toThrow(/rows is missing/);
  });
});

describe('the note above the docs table', () => {
  it('names the groups rerun since the full run, by date, and a Node version that differs', () => {
    let r = fullRun();
    for (const [g, date, node] of [
      ['tokenlab', LATER, 'v20.20.2'],
      ['startup', LATER, 'v20.20.2'],
      ['loss', LATEST, 'v22.1.0'],
    ] as const) {
      r = mergeResults(r, partialRun([g], [row(g, 'x')], date, node));
    }
    expect(resultsNote(r)).toBe(
      `Run of ${FULL} on Node v20.20.2; groups startup, tokenlab rerun on ${LATER}; ` +
        `group loss rerun on ${LATEST} on Node v22.1.0.`,
    );
  });

  it('the bench-results table prints the note over every kept and rerun row', () => {
    const r = mergeResults(fullRun(), partialRun(['startup'], [row('startup', 'startup new', 5)]));
    const md = [
      '<!-- generated:table bench-results from bench/results.json -->',
      '<!-- /generated -->',
      '',
    ].join('\n');
    const out = renderDocument(md, 'docs/bench.md', () => JSON.parse(JSON.stringify(r)));
    expect(out).toContain(`Run of ${FULL} on Node v20.20.2; group startup rerun on ${LATER}.\n\n| group |`);
    expect(out).toContain('| startup | startup new | 5.0 |');
    expect(out).toContain('| tokenlab | tokenlab 2 |');
    expect(out).not.toContain('startup 1');
  });
});
