import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  collectSeedDirs,
  differingOption,
  firstDifference,
  openSeedDir,
  planTasks,
  SEED_PLAN_FORMAT,
  type SeedPlan,
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

describe('records of another version or experiment', () => {
  const dirOf = () => mkdtempSync(join(tmpdir(), 'labs-seedrecords-'));
  const plan = (version: string): SeedPlan => ({
    format: SEED_PLAN_FORMAT,
    experiment: 'mask',
    version,
    seeds: [1, 2],
    sweep: null,
    configs: [{ lr: 0.1 }],
  });
  const record = (seed: number, over: Record<string, unknown> = {}) => ({
    experiment: 'mask',
    seed,
    version: '1',
    config: { lr: 0.1 },
    metrics: { x: seed },
    curves: {},
    tables: {},
    notes: [],
    plots: {},
    timing: { wall_ms: 1 },
    ...over,
  });

  it('resume: a seed file of another version or experiment is named with its field', () => {
    const dir = dirOf();
    const store = openSeedDir(dir, plan('1'));
    store.write(0, record(1) as never);
    writeFileSync(join(dir, 'seeds', '2.json'), JSON.stringify(record(2, { version: '0.9' })));
    expect(() => openSeedDir(dir, plan('1'))).toThrow(/seeds\/2\.json: version is "0\.9", expected "1"/);
    writeFileSync(join(dir, 'seeds', '2.json'), JSON.stringify(record(2, { experiment: 'agent' })));
    expect(() => openSeedDir(dir, plan('1'))).toThrow(
      /seeds\/2\.json: experiment is "agent", expected "mask"/,
    );
    // a plan of another version: the whole directory is refused
    expect(() => openSeedDir(dir, plan('2'))).toThrow(/plan\.json: version is "1", this command's is "2"/);
  });

  it('merge: plans of different versions are refused, naming the field', () => {
    const a = dirOf();
    const b = dirOf();
    openSeedDir(a, plan('1')).write(0, record(1) as never);
    openSeedDir(b, plan('2')).write(1, record(2, { version: '2' }) as never);
    expect(() => collectSeedDirs([a, b])).toThrow(
      new RegExp(`${b}/plan\\.json: version is "2", ${a}/plan\\.json's is "1"`),
    );
    // one directory alone: the seed it lacks is named
    expect(() => collectSeedDirs([a])).toThrow(/1 of 2 seed runs have no record in .*: seed 2;/);
  });
});
