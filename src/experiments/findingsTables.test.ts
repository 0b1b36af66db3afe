import { describe, expect, it } from 'vitest';
import { seedRecord } from '../../test/support/seedRecord.js';
import { evaluateTables } from './findingsTables.js';

const run = seedRecord;

const table = {
  id: 'arms',
  run: 'r',
  row_label: 'arm',
  rows: ['a', 'b'],
  columns: [{ label: 'success', key: 'eval_success.{row}' }],
};

describe('findings descriptive tables', () => {
  it('means per seed set, the row put into the key, non-finite values left out', () => {
    const discovery = new Map([
      [
        'r',
        [
          run(1, { 'eval_success.a': 0.5, 'eval_success.b': 1 }),
          run(2, { 'eval_success.a': 0.7, 'eval_success.b': 'NaN' }),
        ],
      ],
    ]);
    const [t] = evaluateTables([table], { discovery, confirmation: null });
    expect(t?.columns).toEqual(['success']);
    expect(t?.rows.map((r) => r.row)).toEqual(['a', 'b']);
    expect(t?.rows[0]?.cells[0]?.discovery).toBeCloseTo(0.6, 12);
    expect(t?.rows[1]?.cells[0]).toEqual({ discovery: 1, confirmation: null });
  });

  it('names a key that no record has', () => {
    const discovery = new Map([['r', [run(1, { 'eval_success.a': 0.5 })]]]);
    expect(() => evaluateTables([table], { discovery, confirmation: null })).toThrow(
      'table arms: eval_success.b is not a metric of run r',
    );
  });

  it("reads a column's own run when it names one (a tabular and a neural column side by side)", () => {
    const discovery = new Map([
      ['r', [run(1, { 'eval_success.a': 0.5, 'eval_success.b': 1 })]],
      ['n', [run(1, { 'eval_success.a': 0.25, 'eval_success.b': 0.75 })]],
    ]);
    const sideBySide = {
      ...table,
      columns: [
        { label: 'table', key: 'eval_success.{row}' },
        { label: 'neural', key: 'eval_success.{row}', run: 'n' },
      ],
    };
    const [t] = evaluateTables([sideBySide], { discovery, confirmation: null });
    expect(t?.rows.map((r) => r.cells.map((c) => c.discovery))).toEqual([
      [0.5, 0.25],
      [1, 0.75],
    ]);
    expect(() =>
      evaluateTables([{ ...sideBySide, columns: [{ label: 'x', key: 'eval_success.{row}', run: 'm' }] }], {
        discovery,
        confirmation: null,
      }),
    ).not.toThrow(); // a run with no records in a set gives empty cells (the manifest check names unknown runs)
  });

  it('makes the rows runs with {row} in a column run (a knobs table)', () => {
    const discovery = new Map([
      ['base', [run(1, { eval_success: 0.5 }), run(2, { eval_success: 0.7 })]],
      ['lr-small', [run(1, { eval_success: 0.25 }), run(2, { eval_success: 0.25 })]],
    ]);
    const knobs = {
      id: 'knobs',
      run: 'base',
      row_label: 'run',
      rows: ['base', 'lr-small'],
      columns: [{ label: 'success', key: 'eval_success', run: '{row}' }],
    };
    const [t] = evaluateTables([knobs], { discovery, confirmation: null });
    expect(t?.rows[0]?.cells[0]?.discovery).toBeCloseTo(0.6, 12);
    expect(t?.rows[1]?.cells[0]?.discovery).toBe(0.25);
  });
});
