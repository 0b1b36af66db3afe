import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeedQueue } from './seedQueue.js';

describe('SeedQueue', () => {
  it('hands out every task once, in order, then -1; two views of one buffer share it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.array(fc.boolean(), { maxLength: 60 }),
        (total, who) => {
          const a = new SeedQueue(total);
          const b = new SeedQueue(total, a.buffer);
          const got: number[] = [];
          for (const useA of who) {
            const i = (useA ? a : b).claim();
            if (i >= 0) got.push(i);
          }
          let i = a.claim();
          while (i >= 0) {
            got.push(i);
            i = b.claim();
            if (i >= 0) got.push(i);
            i = a.claim();
          }
          expect(got).toEqual(Array.from({ length: total }, (_, k) => k));
          expect(a.claimed()).toBe(total);
          expect(b.claim()).toBe(-1);
        },
      ),
    );
  });

  it('a failure stops further claims; finished counts every finished task', () => {
    const q = new SeedQueue(5);
    const view = new SeedQueue(5, q.buffer);
    expect([q.claim(), view.claim()]).toEqual([0, 1]);
    view.finish(false);
    q.finish(true);
    expect(q.claim()).toBe(-1);
    expect(view.claim()).toBe(-1);
    expect(q.claimed()).toBe(2);
    expect(view.finished()).toBe(2);
  });

  it('stop() stops claims without counting a finished task', () => {
    const q = new SeedQueue(3);
    q.claim();
    q.stop();
    expect(q.claim()).toBe(-1);
    expect(q.finished()).toBe(0);
  });
});
