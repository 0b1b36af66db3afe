import { describe, expect, it } from 'vitest';
import { LabError } from '../errors.js';
import { compareValues, resolveInputs, runConformance } from './runner.js';
import type { AdapterTable, GoldenFile } from './types.js';

const tol = { rel: 1e-5, abs: 1e-6 };

describe('compareValues', () => {
  it('accepts values within rel/abs tolerance and -0 vs 0', () => {
    expect(compareValues([[1, -0]], [[1 + 5e-6, 0]], tol, 'x')).toBeNull();
    expect(compareValues({ a: 2 }, { a: 2.0001, b: 9 }, tol, 'm')).toMatch(/m\.a: expected 2, got 2\.0001/);
  });

  it('matches NaN/Infinity strings only with the same non-finite value', () => {
    expect(compareValues('NaN', Number.NaN, tol, 'v')).toBeNull();
    expect(compareValues('Infinity', Number.POSITIVE_INFINITY, tol, 'v')).toBeNull();
    expect(compareValues('Infinity', 1e300, tol, 'v')).not.toBeNull();
    expect(compareValues(1, Number.NaN, tol, 'v')).not.toBeNull();
  });

  it('reports shape differences with the path', () => {
    expect(compareValues([1, 2], [1], tol, 'adv')).toMatch(/adv: expected length 2/);
    expect(compareValues([1, 2], Float32Array.of(1, 3), tol, 'adv')).toMatch(/adv\[1\]/);
  });
});

describe('runConformance', () => {
  const file: GoldenFile = {
    meta: {},
    fixtures: { fx: { x: [1, 2], y: [3, 4] } },
    cases: [
      { name: 'ok', fn: 'double', inputs: { x: [1, 2] }, config: {}, outputs: { y: [2, 4] } },
      { name: 'wrong', fn: 'double', inputs: { x: [1, 2] }, config: {}, outputs: { y: [2, 5] } },
      {
        name: 'raise',
        fn: 'double',
        inputs: { x: [-1] },
        config: {},
        outputs: { raises: 'ValueError', message: '' },
      },
      { name: 'nan', fn: 'double', inputs: { x: [-2] }, config: {}, outputs: { y: ['NaN'] } },
      {
        name: 'raise-but-value',
        fn: 'double',
        inputs: { x: [3] },
        config: {},
        outputs: { raises: 'ValueError', message: '' },
      },
      {
        name: 'fixture',
        fn: 'double',
        inputs: { $fixture: 'fx' },
        config: { arg_map: { x: 'y' } },
        outputs: { y: [6, 8] },
      },
      { name: 'dev', fn: 'double', inputs: { x: [0] }, config: { special: true }, outputs: { y: [1] } },
      { name: 'other', fn: 'nope', inputs: {}, config: {}, outputs: {} },
    ],
  };
  const adapters: AdapterTable = {
    double: {
      run(inputs) {
        const x = inputs.x as number[];
        if (x.some((v) => v < 0)) throw new LabError('BAD_ARGUMENT', 'negative');
        return { y: x.map((v) => 2 * v) };
      },
      deviation: (c) => (c.config.special ? 'on purpose' : null),
    },
  };

  it('counts matched, mismatched, deviations and unsupported by the documented rules', () => {
    const r = runConformance(file, adapters);
    const status = Object.fromEntries(r.cases.map((c) => [c.name, c.status]));
    expect(status).toEqual({
      ok: 'matched',
      wrong: 'mismatched',
      raise: 'matched',
      nan: 'matched',
      'raise-but-value': 'mismatched',
      fixture: 'matched',
      dev: 'deviation',
      other: 'unsupported',
    });
    expect([r.matched, r.mismatched, r.deviations, r.unsupported]).toEqual([4, 2, 1, 1]);
  });

  it('resolves fixtures and arg_map', () => {
    const c = file.cases[5]!;
    expect(resolveInputs(c, file.fixtures)).toEqual({ x: [3, 4], y: [3, 4] });
  });
});
