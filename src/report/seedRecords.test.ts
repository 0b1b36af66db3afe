import { describe, expect, it } from 'vitest';
import {
  differingOption,
  firstDifference,
  planTasks,
  SEED_PLAN_FORMAT,
  seedRecordPath,
} from './seedRecords.js';

describe('per-seed records', () => {
  const plan = {
    format: SEED_PLAN_FORMAT,
    experiment: 'mask',
    version: '1',
    seeds: [3, 5],
    sweep: { key: 'policy', values: ['a/b', 'c'] },
    configs: [{ policy: 'a/b' }, { policy: 'c' }],
  } as const;

  it('lays the job list out value-major, one file per value x seed, a value made a safe name', () => {
    const p = { ...plan, seeds: [...plan.seeds], sweep: { ...plan.sweep, values: [...plan.sweep.values] } };
    const tasks = planTasks({ ...p, configs: [...p.configs] });
    expect(tasks.map((t) => [t.config.policy, t.seed])).toEqual([
      ['a/b', 3],
      ['a/b', 5],
      ['c', 3],
      ['c', 5],
    ]);
    const paths = tasks.map((_, i) => seedRecordPath('D', { ...p, configs: [...p.configs] }, i));
    expect(paths).toEqual([
      'D/seeds/policy=a%2Fb/3.json',
      'D/seeds/policy=a%2Fb/5.json',
      'D/seeds/policy=c/3.json',
      'D/seeds/policy=c/5.json',
    ]);
    expect(seedRecordPath('D', { ...p, configs: [{}], sweep: null }, 1)).toBe('D/seeds/5.json');
  });

  it('names the option and the field that differ', () => {
    expect(differingOption({ lr: 0.1, b: 1 }, { lr: 0.1, b: 2 })).toBe('b');
    expect(differingOption({ lr: 0.1 }, { lr: 0.1, extra: 1 })).toBe('extra');
    expect(differingOption({ lr: 0.1 }, { lr: 0.1 })).toBeNull();
    expect(firstDifference({ m: { a: 1, b: [1, 2] } }, { m: { a: 1, b: [1, 3] } })).toBe('m.b[1]');
    expect(firstDifference({ x: Number.NaN }, { x: Number.NaN })).toBeNull();
    expect(firstDifference({ x: 1 }, { x: 1, y: null })).toBe('y');
  });
});
