/**
 * `--shard K/N` and `--shard auto`: which share of a multi-seed run's job list (every seed, or every
 * sweep value x seed, value-major: src/report/seedRecords.ts planTasks) this process runs. Job `i`
 * (0-based) belongs to shard `(i mod N) + 1`: a round robin, so shards get neighbouring seeds and
 * equal shares when seeds take alike, and the assignment depends on nothing but K, N and the list.
 *
 * `auto` reads the scheduler's own variables (docs/scale-out.md):
 * - Slurm job arrays: `SLURM_ARRAY_TASK_ID` minus `SLURM_ARRAY_TASK_MIN` of `SLURM_ARRAY_TASK_COUNT`
 *   (an array with a step or a list, where the ids are not MIN..MAX, is refused);
 * - Kubernetes Indexed Jobs: `JOB_COMPLETION_INDEX` (0-based); the count (the Job's `completions`,
 *   which Kubernetes does not put in the environment) from `--shard-count` or `LABS_SHARD_COUNT`;
 * - GNU parallel: `PARALLEL_SEQ` (1-based job number); the count from `--shard-count` or
 *   `LABS_SHARD_COUNT`.
 */
import { LabError } from '../core/errors.js';

/** Shard `index` (1-based) of `count`. */
export interface Shard {
  index: number;
  count: number;
}

function bad(message: string, field: string): never {
  throw new LabError('BAD_CLI', message, { details: { field } });
}

function count(text: string, flag: string): number {
  const n = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!(n >= 1 && n <= 1_000_000)) bad(`${flag} expects an integer in [1, 1000000], got '${text}'`, flag);
  return n;
}

/** `K/N` with 1 <= K <= N, else BAD_CLI naming `--shard`. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) bad(`--shard expects K/N (this process runs share K of N) or auto, got '${text}'`, '--shard');
  const index = Number(m[1]);
  const n = Number(m[2]);
  if (n < 1) bad(`--shard ${text}: the number of shards N must be at least 1`, '--shard');
  if (index < 1 || index > n) bad(`--shard ${text}: K must be in 1..${n}`, '--shard');
  return { index, count: n };
}

/** An environment variable holding an integer, or BAD_CLI naming it. */
function envInt(env: Readonly<Record<string, string | undefined>>, name: string): number {
  const text = env[name] ?? '';
  if (!/^\d+$/.test(text.trim())) bad(`--shard auto: ${name} is '${text}', not an integer`, name);
  return Number(text.trim());
}

/**
 * The shard of `--shard auto` from the scheduler's variables in `env` (see the file comment), with
 * `countFlag` (`--shard-count`, else `LABS_SHARD_COUNT`) as the count where the scheduler gives none.
 */
export function shardFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  countFlag: string | null,
): Shard {
  const given =
    countFlag !== null
      ? count(countFlag, '--shard-count')
      : env.LABS_SHARD_COUNT !== undefined
        ? count(env.LABS_SHARD_COUNT, 'LABS_SHARD_COUNT')
        : null;
  const checked = (zeroBased: number, n: number, from: string): Shard => {
    if (zeroBased >= n) bad(`--shard auto: ${from} gives shard ${zeroBased + 1} of only ${n}`, from);
    return { index: zeroBased + 1, count: n };
  };
  if (env.SLURM_ARRAY_TASK_ID !== undefined) {
    const id = envInt(env, 'SLURM_ARRAY_TASK_ID');
    const n = envInt(env, 'SLURM_ARRAY_TASK_COUNT');
    const min = env.SLURM_ARRAY_TASK_MIN === undefined ? 0 : envInt(env, 'SLURM_ARRAY_TASK_MIN');
    if (env.SLURM_ARRAY_TASK_MAX !== undefined) {
      const max = envInt(env, 'SLURM_ARRAY_TASK_MAX');
      if (max - min + 1 !== n) {
        bad(
          `--shard auto: the Slurm array's ids are not ${min}..${max} without gaps (SLURM_ARRAY_TASK_COUNT=${n}); use --array=${min}-${min + n - 1}, or --shard K/N`,
          'SLURM_ARRAY_TASK_COUNT',
        );
      }
    }
    if (given !== null && given !== n) {
      bad(`--shard auto: --shard-count ${given} but SLURM_ARRAY_TASK_COUNT=${n}`, '--shard-count');
    }
    if (id < min)
      bad(
        `--shard auto: SLURM_ARRAY_TASK_ID=${id} is below SLURM_ARRAY_TASK_MIN=${min}`,
        'SLURM_ARRAY_TASK_ID',
      );
    return checked(id - min, n, 'SLURM_ARRAY_TASK_ID');
  }
  const needCount = (from: string): number =>
    given ??
    bad(
      `--shard auto: ${from} is set but not the number of shards; give it with --shard-count N (or LABS_SHARD_COUNT)`,
      '--shard-count',
    );
  if (env.JOB_COMPLETION_INDEX !== undefined) {
    return checked(
      envInt(env, 'JOB_COMPLETION_INDEX'),
      needCount('JOB_COMPLETION_INDEX'),
      'JOB_COMPLETION_INDEX',
    );
  }
  if (env.PARALLEL_SEQ !== undefined) {
    const seq = envInt(env, 'PARALLEL_SEQ');
    if (seq < 1) bad(`--shard auto: PARALLEL_SEQ=${seq} (GNU parallel counts from 1)`, 'PARALLEL_SEQ');
    return checked(seq - 1, needCount('PARALLEL_SEQ'), 'PARALLEL_SEQ');
  }
  return bad(
    '--shard auto: no scheduler variables (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or PARALLEL_SEQ) are set; give --shard K/N',
    '--shard',
  );
}

/** Whether job `i` (0-based, in the job list) belongs to `shard`. */
export function inShard(i: number, shard: Shard): boolean {
  return i % shard.count === shard.index - 1;
}
