import { describe, expect, it } from 'vitest';
import { LabError } from '../core/errors.js';
import { normalizeRecord } from './recordShape.js';

const good = {
  experiment: 'agent',
  seed: 7,
  version: '0.1.0',
  config: { lr: 0.5 },
  metrics: { eval_success_after: 0.9 },
  curves: { update: [0, 1, 2], 'success.train': [0.1, 'NaN', 0.3], 'x.y': [null, 'Infinity', '-Infinity'] },
  tables: {},
  timing: { wall_ms: 5 },
};

function errorOf(fn: () => unknown): LabError {
  try {
    fn();
  } catch (e) {
    if (e instanceof LabError) return e;
    throw e;
  }
  throw new Error('expected a LabError');
}

describe('normalizeRecord', () => {
  it("decodes the on-disk spellings of non-finite numbers ('NaN', 'Infinity', null)", () => {
    const r = normalizeRecord(good, 'a.json');
    expect('runs' in r).toBe(false);
    if ('runs' in r) return;
    expect(r.curves['success.train']).toEqual([0.1, Number.NaN, 0.3]);
    expect(r.curves['x.y']).toEqual([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
  });

  it('names the file, the curve and the index of a value that is not a number', () => {
    const e = errorOf(() =>
      normalizeRecord(
        { ...good, curves: { update: [0, 1], 'success.train': [0.1, 'abc'] } },
        'runs/x/record.json',
      ),
    );
    expect(e.code).toBe('BAD_RECORD');
    expect(e.message).toBe('runs/x/record.json: curves.success.train[1] is "abc" (expected a number)');
  });

  it('rejects a curve whose length differs from curves.update', () => {
    const e = errorOf(() =>
      normalizeRecord({ ...good, curves: { update: [0, 1, 2], 'a.b': [1, 2] } }, 'f.json'),
    );
    expect(e.message).toBe('f.json: curves.a.b has 2 values but curves.update has 3');
  });

  it('rejects a bad plot hint kind and a hint without a y label', () => {
    expect(
      errorOf(() => normalizeRecord({ ...good, plots: { s: { title: 'S', y: 'u', kind: 'pie' } } }, 'f.json'))
        .message,
    ).toBe(`f.json: plots.s.kind is "pie" (expected 'line', 'stacked-area' or 'bar')`);
    expect(
      errorOf(() => normalizeRecord({ ...good, plots: { s: { title: 'S' } } }, 'f.json')).message,
    ).toContain('plots.s.y is missing');
  });

  it('rejects non-object records, missing metrics and table rows that are not objects', () => {
    expect(errorOf(() => normalizeRecord([1, 2], 'f.json')).message).toBe(
      'f.json: record is [1,2] (expected a JSON object)',
    );
    const { metrics: _m, ...noMetrics } = good;
    expect(errorOf(() => normalizeRecord(noMetrics, 'f.json')).message).toContain('metrics is undefined');
    expect(errorOf(() => normalizeRecord({ ...good, tables: { t: [1] } }, 'f.json')).message).toBe(
      'f.json: tables.t[0] is 1 (expected an object)',
    );
  });

  it('checks every run of a multi-seed record and names it', () => {
    const bad = { ...good, seed: 8, curves: { update: [0], 'a.b': [{}] } };
    const e = errorOf(() =>
      normalizeRecord({ experiment: 'agent', seeds: [7, 8], runs: [good, bad], summary: {} }, 'm.json'),
    );
    expect(e.message).toBe('m.json: runs[1].curves.a.b[0] is {} (expected a number)');
    expect(errorOf(() => normalizeRecord({ experiment: 'agent', runs: [] }, 'm.json')).message).toContain(
      'runs is [] (expected a non-empty array',
    );
  });

  it('decodes curve_summary and rejects mismatched band lengths', () => {
    const rec = { experiment: 'agent', seeds: [7], runs: [good], summary: {} };
    const ok = normalizeRecord(
      { ...rec, curve_summary: { 'a.b': { mean: [1], lo: ['NaN'], hi: [2] } } },
      'm.json',
    );
    expect('runs' in ok && ok.curve_summary?.['a.b']?.lo).toEqual([Number.NaN]);
    expect(
      errorOf(() =>
        normalizeRecord(
          { ...rec, curve_summary: { 'a.b': { mean: [1, 2], lo: [1], hi: [2, 3] } } },
          'm.json',
        ),
      ).message,
    ).toBe('m.json: curve_summary.a.b has mean/lo/hi of lengths 2/1/2 (expected equal)');
  });
});
