import { describe, expect, it } from 'vitest';
import { LabError } from '../errors.js';
import { compareValues, resolveInputs, runConformance } from './runner.js';
import type { AdapterTable, GoldenCase, GoldenFile } from './types.js';

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
      { name: 'other', fn: 'nope', inputs: {}, config: {}, outputs: { y: [1] } },
    ],
  };
  const adapters: AdapterTable = {
    double: {
      run(inputs) {
        const x = inputs.x as number[];
        if (x.some((v) => v < 0)) throw new LabError('BAD_ARGUMENT', 'negative');
        return { y: x.map((v) => 2 * v) };
      },
      configKeys: ['special'],
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

describe('malformed cases are errors naming the file and the case', () => {
  const adapters: AdapterTable = {
    sum: {
      maskArg: 'mask',
      ignoreKeys: { note: 'not compared' },
      run(inputs) {
        const x = inputs.x as number[];
        const m = inputs.mask as number[];
        return { s: x.reduce((a, v, i) => a + v * (m[i] as number), 0), note: 'x' };
      },
    },
  };
  const base: GoldenCase = {
    name: 'c1',
    fn: 'sum',
    inputs: { x: [1, 2, 4], mask: [1, 1, 1], mask_alt: [1, 0, 1] },
    config: {},
    outputs: { s: 7 },
  };
  const run = (c: Partial<GoldenCase>) =>
    runConformance({ meta: {}, cases: [base, { ...base, name: 'bad', ...c }] }, adapters, 'g.json');
  const fails = (c: Partial<GoldenCase>, problem: RegExp) => {
    const err = (() => {
      try {
        run(c);
      } catch (e) {
        return e as LabError;
      }
      throw new Error('expected a LabError');
    })();
    expect(err).toBeInstanceOf(LabError);
    expect(err.code).toBe('PARSE_ERROR');
    expect(err.message).toMatch(/^g\.json: case 1 'bad' \(sum\): /);
    expect(err.message).toMatch(problem);
    expect(err.details).toMatchObject({ file: 'g.json', case: 'bad', row: 1 });
  };

  it('outputs {} (or only ignored keys) checks nothing: an error, never a pass', () => {
    fails({ outputs: {} }, /checks nothing/);
    fails({ outputs: { note: 'x' } }, /checks nothing/);
  });

  it('a case without outputs is an error naming the case (not a TypeError)', () => {
    const { outputs: _o, ...noOutputs } = base;
    expect(() => runConformance({ meta: {}, cases: [noOutputs as GoldenCase] }, adapters, 'g.json')).toThrow(
      /g\.json: case 0 'c1' \(sum\): has no "outputs"/,
    );
    fails({ outputs: [1] }, /must be an object/);
  });

  it('an unsupported function with empty outputs is an error too', () => {
    expect(() =>
      runConformance({ meta: {}, cases: [{ ...base, fn: 'nope', outputs: {} }] }, adapters, 'g.json'),
    ).toThrow(/case 0 'c1' \(nope\): "outputs" has no compared output/);
  });

  it('a config key the format does not document is an error naming the case', () => {
    fails({ config: { mask_inptu: 'mask_alt' } }, /config key 'mask_inptu' is not in the golden format/);
  });

  it('config.mask_input feeds the adapter mask argument (maskArg); a missing input is an error', () => {
    const r = run({ config: { mask_input: 'mask_alt' }, outputs: { s: 5 } });
    expect(r.cases.map((c) => c.status)).toEqual(['matched', 'matched']);
    const wrong = run({ config: { mask_input: 'mask_alt' }, outputs: { s: 7 } });
    expect(wrong.cases[1]?.status).toBe('mismatched');
    fails(
      { config: { mask_input: 'nope' } },
      /config\.mask_input names "nope", which is not one of the inputs/,
    );
  });

  it('config.index_input feeds index; arg_map names must exist', () => {
    const c: GoldenCase = {
      ...base,
      inputs: { ...base.inputs, idx2: ['a'] },
      config: { index_input: 'idx2' },
    };
    expect(resolveInputs(c, undefined).index).toEqual(['a']);
    fails({ config: { arg_map: { x: 'missing' } } }, /config\.arg_map\.x names "missing"/);
  });
});
