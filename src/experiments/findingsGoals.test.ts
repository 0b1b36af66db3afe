import { describe, expect, it } from 'vitest';
import { seedRecord } from '../../test/support/seedRecord.js';
import { evaluateGoals, type FindingsGoal } from './findingsGoals.js';

const run = seedRecord;

const band: FindingsGoal = {
  id: 'band',
  label: 'every level in [0.1, 0.8]',
  kind: 'seeds',
  run: 'warm',
  keys: ['l1', 'l3'],
  min: 0.1,
  max: 0.8,
  share: 1,
};

describe('findings goals', () => {
  it('a seeds goal counts the seeds inside the band on every key, lists the others and the ranges', () => {
    const discovery = new Map([
      [
        'warm',
        [
          run(3, { l1: 0.5, l3: 0.081 }),
          run(1, { l1: 0.4, l3: 0.2 }),
          run(2, { l1: 0.8, l3: 0.1 }), // both bounds inclusive
        ],
      ],
    ]);
    const [g] = evaluateGoals([band], { discovery, confirmation: null });
    expect(g?.discovery).toEqual({
      n: 3,
      passing: 2,
      failing: [3],
      ranges: [
        [0.4, 0.8],
        [0.081, 0.2],
      ],
      met: false,
    });
    expect(g?.confirmation).toBeNull();
  });

  it('share: met at exactly the share of seeds, not below; a non-finite value fails its seed', () => {
    const goal: FindingsGoal = { ...band, keys: ['l3'], min: 0.5, max: undefined, share: 0.8 };
    const seeds = (values: (number | string)[]) =>
      new Map([['warm', values.map((v, i) => run(i + 1, { l3: v }))]]);
    const at = (values: (number | string)[]) =>
      evaluateGoals([goal], { discovery: seeds(values), confirmation: null })[0]?.discovery;
    expect(at([0.9, 0.9, 0.9, 0.9, 0.1])).toMatchObject({ passing: 4, met: true });
    expect(at([0.9, 0.9, 0.9, 0.1, 0.1])).toMatchObject({ passing: 3, met: false, failing: [4, 5] });
    expect(at([0.9, 0.9, 0.9, 0.9, 'NaN'])).toMatchObject({ n: 5, passing: 4, failing: [5], met: true });
  });

  it('an sd ratio divides the sample sds (n − 1) of the two runs; met at or below max', () => {
    const goal: FindingsGoal = {
      id: 'sd',
      label: 'sd at most half',
      kind: 'sd_ratio',
      run: 'warm',
      baseline: 'scratch',
      key: 's',
      max: 0.5,
    };
    const discovery = new Map([
      ['warm', [run(1, { s: 0.9 }), run(2, { s: 1 })]],
      ['scratch', [run(1, { s: 0.2 }), run(2, { s: 0.6 }), run(3, { s: 1 })]],
    ]);
    const confirmation = new Map([
      ['warm', [run(1, { s: 0 }), run(2, { s: 1 })]],
      ['scratch', [run(1, { s: 0 }), run(2, { s: 1 })]],
    ]);
    const [g] = evaluateGoals([goal], { discovery, confirmation });
    // sd(0.9, 1) = 0.1/√2; sd(0.2, 0.6, 1) = 0.4
    expect(g?.discovery).toMatchObject({ met: true });
    const d = g?.discovery as { sd: number; baseline_sd: number; ratio: number };
    expect(d.sd).toBeCloseTo(0.1 / Math.SQRT2, 12);
    expect(d.baseline_sd).toBeCloseTo(0.4, 12);
    expect(d.ratio).toBeCloseTo(0.1 / Math.SQRT2 / 0.4, 12);
    expect(g?.confirmation).toMatchObject({ ratio: 1, met: false });
  });

  it('an sd ratio over a constant baseline is null, met only when the run is constant too', () => {
    const goal: FindingsGoal = {
      id: 'sd',
      label: 'x',
      kind: 'sd_ratio',
      run: 'w',
      baseline: 'b',
      key: 's',
      max: 0.5,
    };
    const runs = (w: number[]) =>
      new Map([
        ['w', w.map((v, i) => run(i, { s: v }))],
        ['b', [run(0, { s: 1 }), run(1, { s: 1 })]],
      ]);
    expect(
      evaluateGoals([goal], { discovery: runs([1, 0]), confirmation: null })[0]?.discovery,
    ).toMatchObject({
      ratio: null,
      met: false,
    });
    expect(
      evaluateGoals([goal], { discovery: runs([1, 1]), confirmation: null })[0]?.discovery,
    ).toMatchObject({
      ratio: null,
      met: true,
    });
  });

  it('a key in no record of a run that ran is an error naming the goal, key and run', () => {
    const discovery = new Map([['warm', [run(1, { l1: 0.5 })]]]);
    expect(() => evaluateGoals([band], { discovery, confirmation: null })).toThrow(
      /goal band: l3 is not a metric of run warm/,
    );
    const sd: FindingsGoal = {
      id: 'sd',
      label: 'x',
      kind: 'sd_ratio',
      run: 'warm',
      baseline: 'warm',
      key: 'l1',
      max: 1,
    };
    expect(() => evaluateGoals([sd], { discovery, confirmation: null })).toThrow(
      /goal sd: l1 of run warm has 1 finite value\(s\); an sd needs 2/,
    );
  });
});
