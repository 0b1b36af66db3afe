/**
 * The job list of `labs run --seeds` and `--sweep` on disk: the one place that decides what a
 * multi-seed run does with its output directory (the output-directory policy for per-seed records).
 *
 * - Every finished (value x) seed is written at once to `DIR/seeds/...` (src/report/seedRecords.ts),
 *   so Ctrl-C or a crash keeps what finished.
 * - The same command run again into the same `--out DIR` skips the seeds already there (each checked
 *   to be the same experiment, version, seed and config: a mismatch is a BAD_SEED_RECORD usage error
 *   naming the option) and says how many it skipped on stderr.
 * - `--shard K/N` runs only its share of the list (src/cli/shard.ts) and writes no aggregate;
 *   `labs merge` builds it from the shards' records.
 * - Without `--out` the directory is a fresh `runs/<name>__<seeds>__<start time>/`.
 */
import { join } from 'node:path';
import { runTasks } from '../../experiments/multiSeed.js';
import type { Experiment, JsonValue, RunRecord } from '../../experiments/types.js';
import { VERSION } from '../../experiments/version.js';
import { runDirName, seedsDirLabel, toJson } from '../../report/records.js';
import { openSeedDir, SEED_PLAN_FORMAT, type SeedDir, type SeedPlan } from '../../report/seedRecords.js';
import { noteSeedRecord, runBreakingOnInterrupt } from '../interrupt.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';
import type { SeedPool } from '../runtime/seedPool.js';
import { inShard, type Shard, shardFromEnv } from '../shard.js';

type RunCli = Extract<ParsedCli, { command: 'run' }>;

/** `--out`, or a fresh `runs/<label>__<seeds>__<now>/`. */
export function outputDir(p: RunCli, label: string): string {
  return p.out ?? join('runs', runDirName(label, seedsDirLabel(p.seeds), new Date()));
}

/** The plan of this command: `configs` one per sweep value (one without a sweep). */
export function planOf(
  p: RunCli,
  experiment: Experiment,
  configs: readonly Record<string, JsonValue>[],
): SeedPlan {
  const key = p.sweep?.key;
  return {
    format: SEED_PLAN_FORMAT,
    experiment: experiment.name,
    version: VERSION,
    seeds: [...p.seeds],
    sweep: key === undefined ? null : { key, values: configs.map((c) => c[key] as JsonValue) },
    configs: [...configs],
  };
}

/** The shard this process runs: `--shard K/N`, `--shard auto` from the environment, or null (all). */
export function shardOf(p: { shard: Shard | 'auto' | null; shardCount: string | null }): Shard | null {
  return p.shard === 'auto' ? shardFromEnv(process.env, p.shardCount) : p.shard;
}

/**
 * The jobs `0..total-1` of a list that `shard` runs, when the list starts at job `offset` of a longer
 * one (a findings manifest shards all its runs' jobs as one list): all of them without a shard.
 */
export function shardJobs(total: number, shard: Shard | null, offset = 0): number[] {
  return Array.from({ length: total }, (_, i) => i).filter((i) => !shard || inShard(offset + i, shard));
}

/** What {@link runJobList} did: every record (null for a shard), and how many runs it ran and skipped. */
export interface JobListResult {
  runs: RunRecord[] | null;
  ran: number;
  skipped: number;
  shard: Shard | null;
}

/** What {@link runJobList} runs: the jobs `mine` of `store`'s plan, those it does not hold yet. */
export interface JobList {
  experiment: Experiment;
  store: SeedDir;
  /** The jobs of the plan this process runs ({@link shardJobs}). */
  mine: readonly number[];
  shard: Shard | null;
  pool: SeedPool | null;
  /** The progress bar's label, and whether to show one. */
  label: string;
  progress: boolean;
}

/**
 * Runs the jobs `mine` of the plan that the directory does not hold yet, writing each record as it
 * finishes, with `pool`'s threads (stderr says how many were skipped). Returns every record in
 * job-list order, or for a shard null once its share is written.
 */
export async function runJobList(job: JobList): Promise<JobListResult> {
  const { experiment, store, mine, shard } = job;
  const skipped = mine.filter((i) => store.done[i]).length;
  if (skipped > 0) {
    process.stderr.write(
      `labs: ${skipped} of ${mine.length} seed runs already in ${join(store.dir, 'seeds')} (same config), skipped; running ${mine.length - skipped}\n`,
    );
  }
  const progress = createProgress(
    `${job.label}${shard ? ` shard ${shard.index}/${shard.count}` : ''} x${mine.length - skipped}`,
    job.progress,
  );
  try {
    const records = await runTasks(
      experiment,
      mine.map((i) => store.tasks[i] as (typeof store.tasks)[number]),
      {
        runner: job.pool?.runner(experiment),
        interruptible: runBreakingOnInterrupt,
        onProgress: (d, t) => progress.update(d, t),
        done: mine.map((i) => store.done[i]),
        onRecord: (k, record) => {
          store.write(mine[k] as number, record);
          noteSeedRecord(join(store.dir, 'seeds'));
        },
      },
    );
    const ran = mine.length - skipped;
    if (shard) {
      store.writePlan();
      return { runs: null, ran, skipped, shard };
    }
    return { runs: records, ran, skipped, shard };
  } finally {
    progress.stop();
  }
}

/**
 * The job list of a `labs run --seeds/--sweep` command in `dir`: opened (every record already there
 * checked, before anything runs) and run ({@link runJobList}).
 */
export async function runCommandJobs(
  p: RunCli,
  experiment: Experiment,
  plan: SeedPlan,
  dir: string,
  pool: SeedPool | null,
  label: string,
): Promise<JobListResult> {
  const shard = shardOf(p);
  const mine = shardJobs(plan.configs.length * plan.seeds.length, shard);
  const store = openSeedDir(dir, plan, mine);
  return runJobList({ experiment, store, mine, shard, pool, label, progress: p.progress });
}

/** What a shard prints when its share is done: one line, or with `json` the same as a JSON object. */
export function shardDoneLine(r: JobListResult, dir: string, json = false): string {
  const s = r.shard as Shard;
  if (json) return toJson({ shard: `${s.index}/${s.count}`, ran: r.ran, skipped: r.skipped, out: dir });
  return `shard ${s.index}/${s.count}: ran ${r.ran} seed runs, skipped ${r.skipped} already in ${join(dir, 'seeds')}; once every shard has finished: labs merge ${dir} --out ${dir}`;
}
