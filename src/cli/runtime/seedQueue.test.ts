import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coldSeedMs, SeedQueue, warmPaceFromCold, worthStartingWorkers } from './seedQueue.js';

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

  it('claimForWorker claims freely until the main thread publishes a pace', () => {
    const q = new SeedQueue(3);
    expect(q.pace()).toBe(0);
    expect(q.claimForWorker(1e9)).toBe(0);
    q.publishPace(20);
    expect(q.pace()).toBe(20);
    // 2 unclaimed x 20 ms = 40 ms: a worker expecting 41 ms declines, one expecting 40 claims
    expect(q.claimForWorker(41)).toBe(-1);
    expect(q.claimForWorker(40)).toBe(1);
    expect(q.claim()).toBe(2);
    expect(q.claimForWorker(0)).toBe(-1);
  });

  it('claimForWorker and claim together hand out every task once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 30 }),
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 200 })), { maxLength: 50 }),
        fc.integer({ min: 0, max: 50 }),
        (total, steps, pace) => {
          const main = new SeedQueue(total);
          const worker = new SeedQueue(total, main.buffer);
          if (pace > 0) main.publishPace(pace);
          const got: number[] = [];
          for (const [byWorker, expected] of steps) {
            const i = byWorker ? worker.claimForWorker(expected) : main.claim();
            if (i >= 0) got.push(i);
          }
          for (let i = main.claim(); i >= 0; i = main.claim()) got.push(i);
          expect(got).toEqual(Array.from({ length: total }, (_, k) => k));
        },
      ),
    );
  });

  it('claimForWorker stops after a failure', () => {
    const q = new SeedQueue(4);
    q.claim();
    q.finish(true);
    expect(q.claimForWorker(0)).toBe(-1);
  });
});

describe('worthStartingWorkers', () => {
  it('keeps a few short seeds on the main thread and shares two long ones', () => {
    // the agent experiment's ~25 ms seeds: a worker's start and cold seed cost more than 18 of them
    expect(worthStartingWorkers(3, 25)).toBe(false);
    expect(worthStartingWorkers(18, 25)).toBe(false);
    expect(worthStartingWorkers(19, 25)).toBe(true);
    // mask's ~0.3 s seeds: not for 2 left, yes for 15
    expect(worthStartingWorkers(2, 300)).toBe(false);
    expect(worthStartingWorkers(15, 300)).toBe(true);
    // two neural seeds of 6 s: yes; one left: never
    expect(worthStartingWorkers(2, 6000)).toBe(true);
    expect(worthStartingWorkers(1, 1e9)).toBe(false);
    expect(worthStartingWorkers(0, 1e9)).toBe(false);
  });

  it("a cold seed's time gives back at most the warm pace it was estimated from", () => {
    fc.assert(
      fc.property(fc.double({ min: 0.01, max: 1e7, noNaN: true }), (pace) => {
        const cold = coldSeedMs(pace);
        expect(cold).toBeGreaterThanOrEqual(pace);
        expect(warmPaceFromCold(cold)).toBeCloseTo(pace, 6);
        // a part of a cold seed never gives a higher pace than the whole
        expect(warmPaceFromCold(cold / 2)).toBeLessThanOrEqual(warmPaceFromCold(cold));
      }),
    );
  });
});
