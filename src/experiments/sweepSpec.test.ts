import { describe, expect, it } from 'vitest';
import { parseSweep } from './sweepSpec.js';

describe('parseSweep', () => {
  it('reads key=v1,v2,...', () => {
    expect(parseSweep('budget=22, 24,30')).toEqual({ key: 'budget', values: ['22', '24', '30'] });
  });

  it('refuses malformed sweeps with BAD_CLI naming --sweep', () => {
    for (const [text, why] of [
      ['budget', /expected key=v1,v2/],
      ['budget=22', /at least two values/],
      ['budget=22,,25', /a value is empty/],
      ['budget=22,22', /listed twice/],
    ] as const) {
      expect(() => parseSweep(text)).toThrow(why);
      expect(() => parseSweep(text)).toThrow(expect.objectContaining({ code: 'BAD_CLI' }));
    }
  });
});
