import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inShard, parseShard, shardFromEnv } from './shard.js';

describe('--shard', () => {
  it('K/N: every job is in exactly one shard, round robin', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 200 }), (n, i) => {
        const owners = Array.from({ length: n }, (_, k) => k + 1).filter((k) =>
          inShard(i, parseShard(`${k}/${n}`)),
        );
        expect(owners).toEqual([(i % n) + 1]);
      }),
    );
  });

  it.each(['3/2', '0/0', '0/3', '1/', 'a/b', '2'])('refuses %s naming --shard', (text) => {
    expect(() => parseShard(text)).toThrow(/--shard/);
  });

  it('auto: Slurm ids counted from SLURM_ARRAY_TASK_MIN', () => {
    const slurm = (id: string) => ({
      SLURM_ARRAY_TASK_ID: id,
      SLURM_ARRAY_TASK_MIN: '1',
      SLURM_ARRAY_TASK_MAX: '3',
      SLURM_ARRAY_TASK_COUNT: '3',
    });
    expect(shardFromEnv(slurm('1'), null)).toEqual({ index: 1, count: 3 });
    expect(shardFromEnv(slurm('3'), null)).toEqual({ index: 3, count: 3 });
    expect(shardFromEnv({ SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2' }, null)).toEqual({
      index: 1,
      count: 2,
    });
    // --array=0-10:2 has 6 tasks whose ids are not 0..5
    expect(() =>
      shardFromEnv(
        {
          SLURM_ARRAY_TASK_ID: '4',
          SLURM_ARRAY_TASK_MIN: '0',
          SLURM_ARRAY_TASK_MAX: '10',
          SLURM_ARRAY_TASK_COUNT: '6',
        },
        null,
      ),
    ).toThrow(/not 0\.\.10 without gaps/);
    expect(() => shardFromEnv(slurm('2'), '4')).toThrow(/--shard-count 4 but SLURM_ARRAY_TASK_COUNT=3/);
  });

  it('auto: Kubernetes and GNU parallel take the count from --shard-count or LABS_SHARD_COUNT', () => {
    expect(shardFromEnv({ JOB_COMPLETION_INDEX: '0' }, '3')).toEqual({ index: 1, count: 3 });
    expect(shardFromEnv({ JOB_COMPLETION_INDEX: '2', LABS_SHARD_COUNT: '3' }, null)).toEqual({
      index: 3,
      count: 3,
    });
    expect(() => shardFromEnv({ JOB_COMPLETION_INDEX: '3' }, '3')).toThrow(
      /JOB_COMPLETION_INDEX gives shard 4 of only 3/,
    );
    expect(() => shardFromEnv({ JOB_COMPLETION_INDEX: '0' }, null)).toThrow(/--shard-count N/);
    expect(shardFromEnv({ PARALLEL_SEQ: '2' }, '3')).toEqual({ index: 2, count: 3 });
    expect(() => shardFromEnv({ PARALLEL_SEQ: 'x' }, '3')).toThrow(/PARALLEL_SEQ is 'x'/);
    expect(() => shardFromEnv({}, '3')).toThrow(/no scheduler variables/);
  });
});
