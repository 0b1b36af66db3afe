import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { labErrorOf } from '../../test/support/labError.js';
import { parseConfig, parseSetPair, resolveConfig } from './options.js';
import type { OptionTable } from './types.js';

const table: OptionTable = {
  lr: { schema: z.number().positive(), default: 0.5, help: 'learning rate' },
  std: { schema: z.enum(['unbiased', 'population', 'none']), default: 'population', help: 'std kind' },
  updates: { schema: z.number().int().min(1), default: 300, help: 'updates' },
  tag: { schema: z.enum(['1', '2']), default: '1', help: 'enum of numeric strings' },
};

describe('resolveConfig', () => {
  it('merges defaults with --set values of the right types', () => {
    expect(resolveConfig('x', table, ['lr=0.25', 'std=none'])).toEqual({
      lr: 0.25,
      std: 'none',
      updates: 300,
      tag: '1',
    });
  });

  it('matches enum choices that look like numbers', () => {
    expect(resolveConfig('x', table, ['tag=2']).tag).toBe('2');
  });

  it('rejects unknown keys naming the key and listing the known ones', () => {
    const e = labErrorOf(() => resolveConfig('agent', table, ['learning_rate=1']));
    expect(e.code).toBe('UNKNOWN_OPTION');
    expect(e.message).toContain("'learning_rate'");
    expect(e.message).toContain('lr');
  });

  it('rejects invalid values naming the key', () => {
    for (const bad of ['lr=-1', 'updates=2.5', 'std=sample', 'lr=fast']) {
      const e = labErrorOf(() => resolveConfig('agent', table, [bad]));
      expect(e.code).toBe('BAD_OPTION_VALUE');
      expect(e.message).toContain(bad.split('=')[0]);
    }
  });

  it('rejects a --set without key=value', () => {
    expect(labErrorOf(() => parseSetPair('lr')).code).toBe('BAD_CLI');
    expect(labErrorOf(() => parseSetPair('=3')).code).toBe('BAD_CLI');
  });
});

describe('resolveConfig error reasons', () => {
  it('reports the range violation of a numeric value, not a type confusion', () => {
    const e = labErrorOf(() => resolveConfig('x', table, ['lr=-1']));
    expect(e.message).not.toMatch(/received string/);
    expect(e.message).toMatch(/lr=-1/);
  });
});

describe('parseConfig (run() called without the CLI)', () => {
  it('fills defaults for missing keys and returns a resolved config unchanged, key order included', () => {
    expect(parseConfig('x', table, { lr: 2 })).toEqual({ lr: 2, std: 'population', updates: 300, tag: '1' });
    const resolved = resolveConfig('x', table, ['updates=7', 'std=none']);
    expect(JSON.stringify(parseConfig('x', table, resolved))).toBe(JSON.stringify(resolved));
  });

  it('refuses unknown keys and invalid values, naming the experiment and the option', () => {
    const unknown = labErrorOf(() => parseConfig('mask', table, { learning_rate: 1 }));
    expect(unknown.code).toBe('BAD_OPTION_VALUE');
    expect(unknown.message).toContain('mask: option');
    expect(unknown.message).toContain('learning_rate');
    const bad = labErrorOf(() => parseConfig('mask', table, { updates: 0 }));
    expect(bad.message).toMatch(/^mask: option 'updates': /);
  });
});
