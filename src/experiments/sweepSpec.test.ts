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
      ['lr=1,1.0', /values 1 and 1\.0 are the same number/],
      ['lr=0.1,1e-1,0.2', /values 0\.1 and 1e-1 are the same number/],
      ['lr=0,-0', /values 0 and -0 are the same number/],
    ] as const) {
      expect(() => parseSweep(text)).toThrow(why);
      expect(() => parseSweep(text)).toThrow(expect.objectContaining({ code: 'BAD_CLI' }));
    }
  });

  it('keeps different numbers and texts apart', () => {
    expect(parseSweep('lr=1,1.5,10').values).toEqual(['1', '1.5', '10']);
    expect(parseSweep('optimizer=adam,Adam').values).toEqual(['adam', 'Adam']);
  });
});
