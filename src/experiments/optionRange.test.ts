import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { describeAccepted } from './optionRange.js';

describe('describeAccepted', () => {
  it('states bounds, openness, integer-ness and choices of option schemas', () => {
    expect(describeAccepted(z.number().int().min(1).max(10000))).toBe('integer in [1, 10000]');
    expect(describeAccepted(z.number().positive().finite())).toBe('number > 0');
    expect(describeAccepted(z.number().min(0).finite())).toBe('number >= 0');
    expect(describeAccepted(z.number().gt(0).max(1))).toBe('number in (0, 1]');
    expect(describeAccepted(z.number().max(5))).toBe('number <= 5');
    expect(describeAccepted(z.enum(['adam', 'sgd']))).toBe('one of adam|sgd');
    expect(describeAccepted(z.string().min(1))).toBe('text');
  });

  it("drops zod's safe-integer limits of a plain .int(), which bound nothing a user would set", () => {
    expect(describeAccepted(z.number().int())).toBe('integer');
    expect(describeAccepted(z.number().int().min(0))).toBe('integer >= 0');
  });

  it('agrees with what the schema accepts at and just beyond each stated bound', () => {
    const schema = z.number().int().min(4).max(1000);
    const [lo, hi] = (/\[(\d+), (\d+)\]/.exec(describeAccepted(schema)) ?? []).slice(1).map(Number);
    expect([lo, hi]).toEqual([4, 1000]);
    expect(schema.safeParse(lo).success && schema.safeParse(hi).success).toBe(true);
    expect(schema.safeParse((lo as number) - 1).success || schema.safeParse((hi as number) + 1).success).toBe(
      false,
    );
  });
});
