import { describe, expect, it } from 'vitest';
import { seedRecord as run } from '../../../test/support/seedRecord.js';
import { summarizeRuns } from '../../experiments/multiSeed.js';
import { formatMultiSeed, seedsLabel } from './index.js';

describe('formatMultiSeed', () => {
  it('names non-consecutive seeds as a list, not as a range that includes seeds never run', () => {
    const rec = summarizeRuns('demo', {}, [run(1, { a: 1 }), run(5, { a: 2 }), run(9, { a: 3 })], 1000);
    const head = formatMultiSeed(rec).split('\n')[0];
    expect(head).toContain('seeds 1,5,9 (3 runs');
    expect(head).not.toContain('1..9');
    expect(seedsLabel([3, 4, 5])).toBe('3..5');
  });

  it('says how many threads ran the seeds when more than one did', () => {
    const rec = summarizeRuns('demo', {}, [run(1, { a: 1 }), run(2, { a: 2 })], 1500);
    expect(formatMultiSeed(rec).split('\n')[0]).toBe('demo  seeds 1..2 (2 runs, 1.5 s)');
    rec.timing.threads = 2;
    expect(formatMultiSeed(rec).split('\n')[0]).toBe('demo  seeds 1..2 (2 runs, 1.5 s on 2 threads)');
  });

  it('shows no confidence interval for a single seed (it is undefined, not [x, x])', () => {
    const rec = summarizeRuns('demo', {}, [run(2, { a: 0.25 })], 1000);
    const text = formatMultiSeed(rec);
    expect(text).toContain('(1 run,');
    expect(text).toContain('n/a (1 seed)');
    expect(text).not.toContain('[0.25, 0.25]');
  });

  it('says which metrics were left out because a seed gave a non-finite value, and which seeds', () => {
    const rec = summarizeRuns(
      'demo',
      {},
      [
        run(1, { ok: 1, len: 3, note: 'text' }),
        run(2, { ok: 2, len: Number.NaN, note: 'text' }),
        run(3, { ok: 3, len: 'NaN', note: 'text' }),
      ],
      1000,
    );
    const text = formatMultiSeed(rec);
    // ok: mean 2, sample sd 1, t(2) = 4.303 -> half-width 4.303 / sqrt(3) = 2.4843.
    expect(text).toMatch(/ok\s+2\s+1\s+1\s+3\s+\[-0\.4843, 4\.484\]/);
    expect(text).toContain('not summarised, not a finite number in every seed: len (seeds 2,3)');
    expect(text).not.toMatch(/not summarised.*note/);
  });

  it('also names a metric that some seeds do not report at all (e.g. steps to 0.9 never reached)', () => {
    const rec = summarizeRuns(
      'demo',
      {},
      [run(1, { a: 1 }), run(2, { a: 2, steps_to_0_9: 40 }), run(3, { a: 3, steps_to_0_9: 35 })],
      1000,
    );
    expect(formatMultiSeed(rec)).toContain(
      'not summarised, not a finite number in every seed: steps_to_0_9 (seed 1)',
    );
  });
});
