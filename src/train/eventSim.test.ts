import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type EventSimOptions,
  type GroupRecord,
  type SimHooks,
  type SimResult,
  simulateRollout,
} from './eventSim.js';

/** Hooks that return fixed generation times by group id (the last one repeats) and log the calls. */
function fixedDurations(durations: number[]) {
  const generated: { id: number; version: number; worker: number; start: number }[] = [];
  const trained: { index: number; version: number; start: number; groups: number[]; lags: number[] }[] = [];
  const hooks: SimHooks = {
    generate: (r) => {
      generated.push({ ...r });
      return durations[Math.min(r.id, durations.length - 1)] as number;
    },
    train: (r) => {
      trained.push({
        index: r.index,
        version: r.version,
        start: r.start,
        groups: r.groups.map((g) => g.id),
        lags: r.groups.map((g) => g.lag),
      });
    },
  };
  return { hooks, generated, trained };
}

const pick = (g: GroupRecord) => [g.id, g.worker, g.version, g.start, g.end, g.status, g.update, g.lag];

describe('simulateRollout: hand-computed schedules', () => {
  it('sync, W=2, K=2: generate a batch, train, publish, repeat', () => {
    // g0=3 s, g1=1 s, g2=2 s, g3=5 s; step 2 s; publication 1 s after the step ends.
    const { hooks, trained } = fixedDurations([3, 1, 2, 5]);
    const r = simulateRollout(
      { mode: 'sync', workers: 2, groupsPerBatch: 2, updates: 2, trainStepTime: 2, publishDelay: 1 },
      hooks,
    );
    // t=0 both workers start (v0); batch full at t=3 -> step 3..5; v1 visible at 6; g2 (6..8), g3 (6..11);
    // step 11..13.
    expect(r.groups.map(pick)).toEqual([
      [0, 0, 0, 0, 3, 'consumed', 0, 0],
      [1, 1, 0, 0, 1, 'consumed', 0, 0],
      [2, 0, 1, 6, 8, 'consumed', 1, 0],
      [3, 1, 1, 6, 11, 'consumed', 1, 0],
    ]);
    expect(r.updates.map((u) => [u.index, u.version, u.start, u.end, u.groups])).toEqual([
      [0, 0, 3, 5, [1, 0]],
      [1, 1, 11, 13, [2, 3]],
    ]);
    expect(trained.map((t) => t.groups)).toEqual([
      [1, 0],
      [2, 3],
    ]);
    expect(r.endTime).toBe(13);
    expect(r.trainerIdle).toBeCloseTo(9 / 13, 14);
    expect(r.workerIdle).toBeCloseTo(15 / 26, 14); // busy 3+1+2+5 = 11 of 2*13
    expect(r.publishTimes).toEqual([6]);
  });

  it('unbounded, W=2, K=1: a long group waits while short ones are consumed with growing lag', () => {
    const { hooks, trained } = fixedDurations([5, 1]);
    const r = simulateRollout(
      { mode: 'unbounded', workers: 2, groupsPerBatch: 1, updates: 3, trainStepTime: 2, publishDelay: 1 },
      hooks,
    );
    // t=1 step0 on g1 (v0); t=3 step1 on g2 (v0 at trainer v1: lag 1); t=5 step2 on g3 (v0, lag 2);
    // v1 visible at 4 (g5 starts with it), v2 at 6 (g8, g9).
    expect(r.groups.map((g) => [g.id, g.worker, g.version, g.start, g.end])).toEqual([
      [0, 0, 0, 0, 5],
      [1, 1, 0, 0, 1],
      [2, 1, 0, 1, 2],
      [3, 1, 0, 2, 3],
      [4, 1, 0, 3, 4],
      [5, 1, 1, 4, 5],
      [6, 0, 1, 5, 6],
      [7, 1, 1, 5, 6],
      [8, 0, 2, 6, 7],
      [9, 1, 2, 6, 7],
    ]);
    expect(trained).toEqual([
      { index: 0, version: 0, start: 1, groups: [1], lags: [0] },
      { index: 1, version: 1, start: 3, groups: [2], lags: [1] },
      { index: 2, version: 2, start: 5, groups: [3], lags: [2] },
    ]);
    expect(r.endTime).toBe(7);
    expect(r.trainerIdle).toBeCloseTo(1 / 7, 14);
    expect(r.workerIdle).toBeCloseTo(0, 14);
    expect((r.groups[0] as GroupRecord).status).toBe('queued');
    expect(r.dropped).toBe(0);
  });

  it('unbounded with dropBeyond=1 discards the stale queue at consumption', () => {
    const { hooks, trained } = fixedDurations([5, 1]);
    const r = simulateRollout(
      {
        mode: 'unbounded',
        dropBeyond: 1,
        workers: 2,
        groupsPerBatch: 1,
        updates: 3,
        trainStepTime: 2,
        publishDelay: 1,
      },
      hooks,
    );
    // At t=5 the trainer is at v2: queue [g3 v0, g4 v0, g0 v0, g5 v1] -> g3, g4, g0 dropped (lag 2).
    expect(trained.map((t) => [t.groups, t.lags])).toEqual([
      [[1], [0]],
      [[2], [1]],
      [[5], [1]],
    ]);
    const u2 = r.updates[2];
    expect(u2?.dropped).toEqual([3, 4, 0]);
    expect(u2?.queueLength).toBe(4);
    expect(r.dropped).toBe(3);
    expect(r.workerWasted).toBe(1 + 1 + 5);
    expect(r.groups.filter((g) => g.status === 'dropped').map((g) => [g.id, g.lag, g.update])).toEqual([
      [0, 2, 2],
      [3, 2, 2],
      [4, 2, 2],
    ]);
  });

  it('bounded eta=1 (AReaL admission): workers wait for a publication instead of running ahead', () => {
    const { hooks, trained } = fixedDurations([5, 1]);
    const r = simulateRollout(
      {
        mode: 'bounded',
        eta: 1,
        workers: 2,
        groupsPerBatch: 1,
        updates: 3,
        trainStepTime: 2,
        publishDelay: 1,
      },
      hooks,
    );
    // Admission: started - rejected < (1 + v_pub + 1) * 1.
    expect(r.groups.map((g) => [g.id, g.worker, g.version, g.start, g.end])).toEqual([
      [0, 0, 0, 0, 5],
      [1, 1, 0, 0, 1],
      [2, 1, 1, 4, 5],
      [3, 0, 2, 8, 9],
    ]);
    expect(trained).toEqual([
      { index: 0, version: 0, start: 1, groups: [1], lags: [0] },
      { index: 1, version: 1, start: 5, groups: [0], lags: [1] },
      { index: 2, version: 2, start: 7, groups: [2], lags: [1] },
    ]);
    expect(r.endTime).toBe(9);
    expect(r.trainerIdle).toBeCloseTo(3 / 9, 14);
    expect(r.workerIdle).toBeCloseTo(1 - 8 / 18, 14);
  });

  it('bounded eta=1: a group that finishes out of order beyond eta is dropped at consumption', () => {
    // W=3, K=1, step 1 s, no publication delay; g0 takes 10 s, everything else 1 s.
    const { hooks } = fixedDurations([10, 1]);
    const r = simulateRollout(
      {
        mode: 'bounded',
        eta: 1,
        workers: 3,
        groupsPerBatch: 1,
        updates: 6,
        trainStepTime: 1,
        publishDelay: 0,
      },
      hooks,
    );
    expect(r.updates.map((u) => [u.index, u.start, u.groups, u.dropped])).toEqual([
      [0, 1, [1], []],
      [1, 3, [2], []],
      [2, 5, [3], []],
      [3, 7, [4], []],
      [4, 9, [5], []],
      [5, 11, [6], [0]],
    ]);
    const g0 = r.groups[0] as GroupRecord;
    expect([g0.status, g0.lag, g0.update]).toEqual(['dropped', 5, 5]);
    // After the drop frees admission, two groups start at t=10 with v5; worker 2 was never admitted.
    expect(r.groups.slice(6).map((g) => [g.id, g.worker, g.version, g.start])).toEqual([
      [6, 0, 5, 10],
      [7, 1, 5, 10],
    ]);
    expect(r.groups.some((g) => g.worker === 2)).toBe(false);
    expect(r.endTime).toBe(12);
  });
});

describe('simulateRollout: admission only', () => {
  it('the same schedule as the drop case, but the late group is consumed with lag 5 > eta', () => {
    const { hooks, trained } = fixedDurations([10, 1]);
    const r = simulateRollout(
      {
        mode: 'admission',
        eta: 1,
        workers: 3,
        groupsPerBatch: 1,
        updates: 6,
        trainStepTime: 1,
        publishDelay: 0,
      },
      hooks,
    );
    expect(r.updates.map((u) => [u.index, u.start, u.groups, u.dropped])).toEqual([
      [0, 1, [1], []],
      [1, 3, [2], []],
      [2, 5, [3], []],
      [3, 7, [4], []],
      [4, 9, [5], []],
      [5, 10, [0], []],
    ]);
    expect(trained[5]?.lags).toEqual([5]);
    // Without a rejection the admission count stays full: only one new group starts at t=10.
    expect(r.groups.slice(6).map((g) => [g.id, g.worker, g.version, g.start])).toEqual([[6, 0, 5, 10]]);
    expect(r.endTime).toBe(11);
    expect(r.dropped).toBe(0);
  });
});

describe('simulateRollout: invariants', () => {
  const arbOptions = fc.record({
    workers: fc.integer({ min: 1, max: 6 }),
    groupsPerBatch: fc.integer({ min: 1, max: 4 }),
    updates: fc.integer({ min: 1, max: 8 }),
    trainStepTime: fc.integer({ min: 1, max: 4 }),
    publishDelay: fc.integer({ min: 0, max: 3 }),
    eta: fc.integer({ min: 0, max: 3 }),
  });
  const arbDurations = fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 40 });
  const run = (o: EventSimOptions, d: number[]): SimResult => simulateRollout(o, fixedDurations(d).hooks);

  it('sync: every lag is 0 and step k trains exactly K groups of version k', () => {
    fc.assert(
      fc.property(arbOptions, arbDurations, (o, d) => {
        const r = run({ ...o, mode: 'sync' }, d);
        for (const u of r.updates) {
          expect(u.groups.length).toBe(o.groupsPerBatch);
          for (const id of u.groups) expect(r.groups[id]?.version).toBe(u.index);
        }
        for (const g of r.groups) if (g.status === 'consumed') expect(g.lag).toBe(0);
        expect(r.dropped).toBe(0);
      }),
    );
  });

  it('bounded: no consumed group exceeds eta; unbounded+dropBeyond: none exceeds dropBeyond', () => {
    fc.assert(
      fc.property(arbOptions, arbDurations, (o, d) => {
        const b = run({ ...o, mode: 'bounded' }, d);
        for (const g of b.groups) if (g.status === 'consumed') expect(g.lag).toBeLessThanOrEqual(o.eta);
        const u = run({ ...o, mode: 'unbounded', dropBeyond: o.eta }, d);
        for (const g of u.groups) if (g.status === 'consumed') expect(g.lag).toBeLessThanOrEqual(o.eta);
      }),
    );
  });

  it('bounded with eta=0 is exactly the sync schedule', () => {
    fc.assert(
      fc.property(arbOptions, arbDurations, (o, d) => {
        const s = run({ ...o, mode: 'sync' }, d);
        const b = run({ ...o, mode: 'bounded', eta: 0 }, d);
        expect(b.groups).toEqual(s.groups);
        expect(b.updates).toEqual(s.updates);
      }),
    );
  });

  it('conservation and non-overlap: K per step, steps back to back at most, one group per worker at a time', () => {
    fc.assert(
      fc.property(
        arbOptions,
        arbDurations,
        fc.constantFrom('sync', 'bounded', 'admission', 'unbounded'),
        (o, d, mode) => {
          const r = run({ ...o, mode }, d);
          expect(r.consumed).toBe(o.updates * o.groupsPerBatch);
          expect(r.updates.length).toBe(o.updates);
          for (let i = 1; i < r.updates.length; i++) {
            expect((r.updates[i] as { start: number }).start).toBeGreaterThanOrEqual(
              (r.updates[i - 1] as { end: number }).end,
            );
          }
          for (let w = 0; w < o.workers; w++) {
            const mine = r.groups.filter((g) => g.worker === w);
            for (let i = 1; i < mine.length; i++) {
              expect((mine[i] as GroupRecord).start).toBeGreaterThanOrEqual((mine[i - 1] as GroupRecord).end);
            }
          }
          // A consumed group finished before its step started, and was generated with a version <= trainer's.
          for (const g of r.groups) {
            if (g.status !== 'consumed') continue;
            const u = r.updates[g.update] as { start: number; version: number };
            expect(g.end).toBeLessThanOrEqual(u.start);
            expect(g.lag).toBe(u.version - g.version);
            expect(g.lag).toBeGreaterThanOrEqual(0);
          }
          expect(r.trainerIdle).toBeGreaterThanOrEqual(0);
          expect(r.workerIdle).toBeGreaterThanOrEqual(-1e-12);
          expect(r.endTime).toBe((r.updates[r.updates.length - 1] as { end: number }).end);
        },
      ),
    );
  });

  it('rejects bad options and bad generation times with named fields', () => {
    const { hooks } = fixedDurations([1]);
    expect(() => simulateRollout({ mode: 'sync', workers: 0 }, hooks)).toThrow(
      /workers must be a positive integer/,
    );
    expect(() => simulateRollout({ mode: 'bounded', eta: -1 }, hooks)).toThrow(/eta must be an integer >= 0/);
    expect(() => simulateRollout({ mode: 'weird' as 'sync' }, hooks)).toThrow(
      /mode must be sync, bounded, admission or unbounded/,
    );
    expect(() => simulateRollout({ mode: 'sync', updates: 1 }, fixedDurations([0]).hooks)).toThrow(
      /generation time of group 0/,
    );
  });
});
