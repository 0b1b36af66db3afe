import { describe, expect, it } from 'vitest';
import { startStopwatch } from './stopwatch.js';

describe('startStopwatch', () => {
  it('measures milliseconds of wall time, monotonically', () => {
    const elapsed = startStopwatch();
    const first = elapsed();
    const until = Date.now() + 25;
    while (Date.now() < until) {
      // busy wait: a sleep would make this a timing test of the scheduler
    }
    const second = elapsed();
    expect(first).toBeGreaterThanOrEqual(0);
    expect(second).toBeGreaterThanOrEqual(first);
    // at least the 25 ms waited (in ms, not ns or s), and not absurdly more
    expect(second).toBeGreaterThanOrEqual(20);
    expect(second).toBeLessThan(60_000);
  });
});
