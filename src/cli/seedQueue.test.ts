import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COLD_SEED_FACTOR, SeedQueue, WORKER_START_MS, worthStartingWorkers } from './seedQueue.js';

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
  it("starts workers only when the main thread would stay busy twice a worker's start and cold seed", () => {
    const need = (pace: number) => 2 * (WORKER_START_MS + COLD_SEED_FACTOR * pace);
    // three more 25 ms seeds (the agent experiment's defaults): far too little
    expect(worthStartingWorkers(3, 25)).toBe(false);
    // the boundary, either side
    expect(worthStartingWorkers(need(100) / 100, 100)).toBe(true);
    expect(worthStartingWorkers(need(100) / 100 - 1, 100)).toBe(false);
    // 38 seeds of 300 ms (mask): start
    expect(worthStartingWorkers(38, 300)).toBe(true);
    // never with nothing left
    expect(worthStartingWorkers(0, 1e6)).toBe(false);
  });
});
