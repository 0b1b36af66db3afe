import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { labErrorOf } from '../../test/support/labError.js';
import { LabError } from '../core/errors.js';
import {
  configOf,
  defaultConfig,
  defineOptions,
  option,
  optionList,
  parseSetPair,
  resolveConfig,
  runExperiment,
  withDefault,
} from './options.js';
import type { Experiment, RunRecord } from './types.js';

const OPTIONS = defineOptions({
  lr: option(z.number().positive(), 0.5, 'learning rate', 'per step'),
  std: option(z.enum(['unbiased', 'population', 'none']), 'population', 'std kind'),
  updates: option(z.number().int().min(1), 300, 'updates'),
  tag: option(z.enum(['1', '2']), '1', 'enum of numeric strings'),
});

/** A toy experiment that echoes its config, to see exactly what `run` receives. */
const toy: Experiment<typeof OPTIONS> = {
  name: 'toy',
  summary: 'echo',
  options: OPTIONS,
  run(config, ctx): RunRecord {
    const typed: { lr: number; std: 'unbiased' | 'population' | 'none'; updates: number } = config;
    return {
      experiment: 'toy',
      seed: ctx.seed,
      version: '0',
      config: { ...typed, tag: config.tag },
      metrics: {},
      curves: {},
      tables: {},
      timing: { wall_ms: 0 },
    };
  },
};

describe('resolveConfig (the CLI)', () => {
  it('merges defaults with --set values of the right types, in declaration order', () => {
    const c = resolveConfig(toy, ['std=none', 'lr=0.25']);
    expect(c).toEqual({ lr: 0.25, std: 'none', updates: 300, tag: '1' });
    expect(Object.keys(c)).toEqual(['lr', 'std', 'updates', 'tag']);
  });

  it('matches enum choices that look like numbers', () => {
    expect(resolveConfig(toy, ['tag=2']).tag).toBe('2');
  });

  it('rejects unknown keys naming the key and listing the known ones', () => {
    const e = labErrorOf(() => resolveConfig(toy, ['learning_rate=1']));
    expect(e.code).toBe('UNKNOWN_OPTION');
    expect(e.message).toContain("'learning_rate'");
    expect(e.message).toContain('known: lr, std, tag, updates');
  });

  it('rejects invalid values naming the key, the value and the range violation', () => {
    for (const bad of ['lr=-1', 'updates=2.5', 'std=sample', 'lr=fast']) {
      const e = labErrorOf(() => resolveConfig(toy, [bad]));
      expect(e.code).toBe('BAD_OPTION_VALUE');
      expect(e.message).toContain(`toy: option ${bad.split('=')[0]}=`);
    }
    const e = labErrorOf(() => resolveConfig(toy, ['lr=-1']));
    expect(e.message).not.toMatch(/received string/);
    expect(e.message).toMatch(/option lr=-1: /);
  });

  it('says what was given and what is accepted (not zod\'s "expected number, received string")', () => {
    const message = (pair: string) => labErrorOf(() => resolveConfig(toy, [pair])).message;
    expect(message('lr=NaN')).toBe(
      'toy: option lr=NaN: expected a number, got NaN, which is not a finite number (lr accepts number > 0)',
    );
    expect(message('lr=fast')).toBe(
      "toy: option lr=fast: expected a number, got the text 'fast' (lr accepts number > 0)",
    );
    expect(message('lr=1e309')).toBe(
      'toy: option lr=1e309: expected a number, got 1e309, which is not a finite number (lr accepts number > 0)',
    );
    expect(message('lr=-1')).toBe('toy: option lr=-1: out of range (lr accepts number > 0)');
    expect(message('std=sample')).toBe(
      'toy: option std=sample: not one of the choices (std accepts one of unbiased|population|none)',
    );
  });

  it('names an element of a list option as key[i], not as a dotted key of its own', () => {
    const listy: Experiment = {
      name: 'toy',
      summary: 'list option',
      run: toy.run as Experiment['run'],
      options: defineOptions({ ratios: option(z.array(z.number().min(0.001)), [0.2], 'ratios') }),
    };
    const e = labErrorOf(() => resolveConfig(listy, ['ratios=[-1,0.2]']));
    expect(e.message).toBe(
      'toy: option ratios=[-1,0.2]: ratios[0] = -1: too small: expected number to be >=0.001',
    );
    expect(e.message).not.toContain('ratios.0');
    expect(e.details).toMatchObject({ field: 'ratios', path: ['ratios', '0'] });
  });

  it("runs the experiment's check across options as part of the validation (BAD_OPTION_VALUE)", () => {
    const checked: Experiment<typeof OPTIONS> = {
      ...toy,
      check: (config) => {
        if (config.updates > 10 && config.std === 'none')
          throw new LabError('BAD_ARGUMENT', 'updates > 10 needs a std');
      },
    };
    expect(resolveConfig(checked, ['updates=5', 'std=none']).updates).toBe(5);
    expect(labErrorOf(() => configOf(checked, { updates: 20, std: 'none' }))).toMatchObject({
      code: 'BAD_OPTION_VALUE',
      message: 'updates > 10 needs a std',
    });
  });

  it('rejects a --set without key=value', () => {
    expect(labErrorOf(() => parseSetPair('lr')).code).toBe('BAD_CLI');
    expect(labErrorOf(() => parseSetPair('=3')).code).toBe('BAD_CLI');
  });
});

describe('configOf / runExperiment (the library)', () => {
  it('gives a library caller the same defaults as the CLI', () => {
    expect(defaultConfig(toy)).toEqual(resolveConfig(toy, []));
    expect(configOf(toy, { lr: 2 })).toEqual({ lr: 2, std: 'population', updates: 300, tag: '1' });
  });

  it('returns a resolved config unchanged, key order included', () => {
    const resolved = resolveConfig(toy, ['updates=7', 'std=none']);
    expect(JSON.stringify(configOf(toy, resolved))).toBe(JSON.stringify(resolved));
  });

  it('refuses unknown keys and invalid values with the same messages as the CLI', () => {
    const unknown = labErrorOf(() => configOf(toy, { learning_rate: 1 }));
    expect(unknown.code).toBe('UNKNOWN_OPTION');
    expect(unknown.message).toContain("toy: unknown option 'learning_rate'");
    const bad = labErrorOf(() => runExperiment(toy, { updates: 0 }, { seed: 1 }));
    expect(bad.code).toBe('BAD_OPTION_VALUE');
    expect(bad.message).toMatch(/^toy: option updates=0: /);
  });

  it('runs with the parsed config', async () => {
    const r = await runExperiment(toy, { lr: 3 }, { seed: 1 });
    expect(r.config).toEqual({ lr: 3, std: 'population', updates: 300, tag: '1' });
  });
});

describe('optionList / withDefault', () => {
  it('reads default, help, unit and the value schema from the declaration', () => {
    const list = optionList(OPTIONS);
    expect(list.map((o) => o.key)).toEqual(['lr', 'std', 'updates', 'tag']);
    expect(list[0]).toMatchObject({ key: 'lr', default: 0.5, help: 'learning rate', unit: 'per step' });
    expect(list[0]?.schema.safeParse(-1).success).toBe(false);
    expect(list[0]?.schema.safeParse(undefined).success).toBe(false); // the schema without its default
  });

  it('withDefault changes only the default', () => {
    const shared = OPTIONS.shape.updates;
    const tight = withDefault(shared, 25);
    const schema = defineOptions({ updates: tight });
    expect(optionList(schema)[0]).toMatchObject({ default: 25, help: 'updates' });
    expect(tight.safeParse(0).success).toBe(false);
    expect(optionList(OPTIONS)[2]?.default).toBe(300); // the shared declaration is untouched
  });

  it('omit/extend keep the object strict (unknown keys are still refused)', () => {
    const derived = OPTIONS.omit({ tag: true }).extend({ extra: option(z.boolean(), false, 'x') });
    expect(derived.safeParse({ tag: '1' }).success).toBe(false);
    expect(derived.parse({})).toEqual({ lr: 0.5, std: 'population', updates: 300, extra: false });
  });
});

describe('a conditional default (option(..., defaultWhen))', () => {
  const WHEN = defineOptions({
    init: option(z.enum(['scratch', 'sft']), 'scratch', 'where training starts'),
    step: option(z.number().positive(), 0.01, 'step size', '', {
      when: { option: 'init', equals: 'sft' },
      value: 0.001,
    }),
  });
  const exp: Experiment<typeof WHEN> = { ...toy, name: 'when', options: WHEN } as never;

  it('applies only when its condition holds and the option was not set', () => {
    expect(configOf(exp, {})).toEqual({ init: 'scratch', step: 0.01 });
    expect(configOf(exp, { init: 'sft' })).toEqual({ init: 'sft', step: 0.001 });
    expect(resolveConfig(exp, ['init=sft'])).toEqual({ init: 'sft', step: 0.001 });
    // a value that was set wins, even one equal to the unconditional default
    expect(resolveConfig(exp, ['init=sft', 'step=0.01'])).toEqual({ init: 'sft', step: 0.01 });
  });

  it('is idempotent on a resolved config (a record config read back)', () => {
    const resolved = resolveConfig(exp, ['init=sft']);
    expect(JSON.stringify(configOf(exp, resolved))).toBe(JSON.stringify(resolved));
  });

  it('is listed beside the default, and dropped by withDefault', () => {
    const info = optionList(WHEN).find((o) => o.key === 'step');
    expect(info?.default).toBe(0.01);
    expect(info?.defaultWhen).toEqual({ when: { option: 'init', equals: 'sft' }, value: 0.001 });
    const pinned = defineOptions({ init: WHEN.shape.init, step: withDefault(WHEN.shape.step, 0.05) });
    expect(optionList(pinned).find((o) => o.key === 'step')?.defaultWhen).toBeUndefined();
    expect(configOf({ ...exp, options: pinned } as never, { init: 'sft' })).toEqual({
      init: 'sft',
      step: 0.05,
    });
  });

  it('refuses a conditional default outside the option range at declaration', () => {
    expect(() =>
      option(z.number().positive(), 1, 'x', '', { when: { option: 'init', equals: 'sft' }, value: -1 }),
    ).toThrow();
  });
});
