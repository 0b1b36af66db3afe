/**
 * The options of `labs run` and `labs findings`, declared once (commandOptions.ts says what an entry
 * declares), and the checks across options that no single flag can make.
 */
import { availableParallelism } from 'node:os';
import { LabError } from '../core/errors.js';
import { parseSweep } from '../experiments/sweepSpec.js';
import {
  flagError,
  listOption,
  numberOption,
  type OptionValues,
  parsedOption,
  required,
  textOption,
  withHelp,
} from './commandOptions.js';
import {
  checkShardCount,
  FORCE_OPTION,
  HTML_OPTION,
  JOBS_OPTION,
  JSON_OPTION,
  OUT_OPTION,
  PROGRESS_OPTION,
  SEED_RANGE,
  SEEDS_OPTION,
  SET_OPTION,
  SHARD_COUNT_OPTION,
  SHARD_OPTION,
} from './sharedOptions.js';

export const RUN_OPTIONS = {
  experiment: required(
    textOption('--experiment', 'name', 'experiment name (see `labs list`)', { short: '-e' }),
  ),
  seed: numberOption('--seed', 'n', 'random seed (integer >= 0; not together with --seeds)', {
    default: 7,
    ...SEED_RANGE,
    group: 'seed',
  }),
  seeds: SEEDS_OPTION,
  set: SET_OPTION,
  sweep: {
    // Collected so that a second --sweep is refused: it used to replace the first silently. A grid
    // is not supported: its dose-response tables and plots are drawn along one option.
    ...listOption(
      '--sweep',
      'key=v1,v2,...',
      'run at each value of one option (the same seeds at every value) and report the dose-response; one --sweep per run (no grid)',
    ),
    shownOnce: true,
    read: (raw: unknown) => {
      const given = Array.isArray(raw) ? (raw as string[]) : [];
      if (given.length > 1) {
        throw flagError(
          '--sweep',
          `is given ${given.length} times (${given.join(', ')}): one sweep per run, not a grid; sweep one option and fix the others with --set (one run per value)`,
        );
      }
      return given[0] === undefined ? null : parseSweep(given[0]);
    },
  },
  json: withHelp(JSON_OPTION, 'print the RunRecord as JSON instead of the summary'),
  out: withHelp(OUT_OPTION, 'write record.json into this directory instead of runs/<name>__<seed>__<time>/'),
  force: FORCE_OPTION,
  html: {
    ...withHelp(
      HTML_OPTION,
      'also write an HTML report with plots (default: report.html next to record.json)',
    ),
    optionalValue: true,
    /** The page's path; '' (`--html` alone): report.html next to the record; null: no page. */
    read: (raw: unknown): string | null => (typeof raw === 'string' ? raw : raw === true ? '' : null),
  },
  dump: textOption(
    '--dump',
    'dir',
    "write every update's tokens in prime-rl's token-export layout under DIR/<arm> (experiments that record tokens: mismatch; one seed)",
  ),
  progress: PROGRESS_OPTION,
  jobs: JOBS_OPTION,
  shard: SHARD_OPTION,
  shardCount: SHARD_COUNT_OPTION,
} as const;

export type RunValues = OptionValues<typeof RUN_OPTIONS>;

/**
 * The checks across `labs run`'s options beyond `--seed` with `--seeds` (one synopsis group, refused
 * by readOptions): `--shard` without `--seeds` or `--sweep`, without `--out` or with `--html`,
 * `--shard-count` without `--shard auto`, `--jobs` without `--seeds`.
 */
export function checkRunOptions(o: RunValues): void {
  const cli = (field: string, message: string) => new LabError('BAD_CLI', message, { details: { field } });
  if (o.shard !== null) {
    if (o.seeds === null && o.sweep === null)
      throw cli('--shard', '--shard splits the runs of --seeds or --sweep; give one of them');
    if (o.out === null)
      throw cli(
        '--out',
        '--shard needs --out DIR: every shard writes its per-seed records there for labs merge',
      );
    if (o.html !== null)
      throw cli(
        '--html',
        '--html with --shard: a shard writes no record to report; run labs report on the record labs merge writes',
      );
  }
  checkShardCount(o.shard, o.shardCount);
  if (o.jobs !== null && o.seeds === null) {
    // It was accepted and ignored: one seed (or a sweep over one seed) runs on this thread.
    throw cli(
      '--jobs',
      `--jobs ${o.jobs} applies to --seeds (the seeds are shared among the threads); a single seed runs on one thread`,
    );
  }
}

/** `--jobs` given, else the number of cores (the seed pool starts its workers only once they pay). */
export function jobsOf(jobs: number | null): number {
  return jobs ?? availableParallelism();
}

export const FINDINGS_OPTIONS = {
  out: withHelp(OUT_OPTION, 'write every run under this directory (default runs/findings/NAME/)'),
  seeds: withHelp(SEEDS_OPTION, "run these seeds instead of the manifest's"),
  set: withHelp(SET_OPTION, "set an option of every run (repeatable; wins over the manifest's)"),
  jobs: withHelp(JOBS_OPTION, 'run this many seeds at once (as labs run --jobs)'),
  shard: withHelp(SHARD_OPTION, "run only share K of N of all the runs' seeds (as labs run --shard)"),
  shardCount: withHelp(SHARD_COUNT_OPTION, 'with --shard auto: the number of shards (as labs run)'),
  phase: parsedOption(
    '--phase',
    'discovery|confirmation',
    'format-2 manifests: run only the discovery or the confirmation seeds (default: both)',
    (text): 'discovery' | 'confirmation' => {
      if (text === 'discovery' || text === 'confirmation') return text;
      throw flagError('--phase', `expects discovery or confirmation, got '${text}'`);
    },
  ),
  results: textOption(
    '--results',
    'file',
    'format-2 manifests: write the claims here (default: NAME.results.json beside the manifest)',
    { nonEmpty: 'expects a file path' },
  ),
  json: withHelp(JSON_OPTION, 'print the findings (records and comparisons) as JSON'),
  progress: PROGRESS_OPTION,
} as const;

export type FindingsValues = OptionValues<typeof FINDINGS_OPTIONS>;
