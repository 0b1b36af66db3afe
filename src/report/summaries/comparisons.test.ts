import { describe, expect, it } from 'vitest';
import type { Comparison } from '../../experiments/types.js';
import { formatComparisons } from './comparisons.js';

describe('formatComparisons', () => {
  it('prints diff, CI, p, Holm p and mde80 per comparison and names the methods', () => {
    const c: Comparison = {
      arm: 'drop',
      baseline: 'zero_score',
      metric: 'verify_rate',
      n: 30,
      diff: 0.168,
      ci95: [0.07, 0.267],
      ci_method: 'bca',
      p: 0.00123,
      p_method: 'monte-carlo',
      p_holm: 0.0123,
      mde80: 0.1,
    };
    const text = formatComparisons([c], 'paired:');
    const row = text.split('\n').find((l) => l.startsWith('drop')) ?? '';
    expect(row.split(/\s{2,}/)).toEqual([
      'drop',
      'zero_score',
      'verify_rate',
      '30',
      '0.168',
      '[0.07, 0.267]',
      '0.00123',
      '0.0123',
      '0.1',
    ]);
    expect(text).toContain('Monte-Carlo sign-flip permutation');
    expect(text).toContain('Holm across these 1 comparisons');
    expect(formatComparisons([], 'x')).toBe('');
  });
});
