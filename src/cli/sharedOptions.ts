/**
 * The options several `labs` commands share with one meaning, declared once here and placed into
 * each command's table (runOptions.ts, auditOptions.ts, commandTables.ts), worded for the command
 * with `withHelp` where it helps. See commandOptions.ts for what an entry declares.
 */
import { LabError } from '../core/errors.js';
import {
  type CommandOption,
  flagOption,
  listOption,
  numberOption,
  parsedOption,
  textOption,
} from './commandOptions.js';
import { parseShard, type Shard } from './shard.js';

/**
 * A seed: an integer in [0, 2^31-1] (`--seed`, each of `--seeds`). A plain check rather than a zod
 * schema: `labs --help` and `--version` then never load zod, whose import is most of the CLI's
 * start-up (docs/bench-startup.md).
 */
export const SEED_RANGE = { integer: true, min: 0, max: 2 ** 31 - 1, rangeText: 'in [0, 2^31-1]' } as const;

function isSeed(n: number): boolean {
  return Number.isInteger(n) && n >= SEED_RANGE.min && n <= SEED_RANGE.max;
}

function seedsError(message: string): LabError {
  return new LabError('BAD_CLI', message, { details: { field: '--seeds' } });
}

/** `A..B` (inclusive) or a comma list `1,4,9`. */
export function parseSeeds(text: string): number[] {
  const range = /^(\d+)\.\.(\d+)$/.exec(text.trim());
  let seeds: number[];
  if (range) {
    const a = Number(range[1]);
    const b = Number(range[2]);
    if (b < a) throw seedsError(`--seeds ${text}: the range is empty (B < A)`);
    if (b - a >= 10_000) throw seedsError(`--seeds ${text}: at most 10000 seeds`);
    seeds = Array.from({ length: b - a + 1 }, (_, i) => a + i);
  } else if (/^\d+(,\d+)*$/.test(text.trim())) {
    seeds = text.trim().split(',').map(Number);
  } else {
    throw seedsError(`--seeds expects A..B or a comma list like 1,2,3, got '${text}'`);
  }
  const seen = new Set<number>();
  for (const s of seeds) {
    // A repeated seed is the same run twice: it would shrink the CI without adding evidence.
    if (seen.has(s)) throw seedsError(`--seeds ${text}: seed ${s} is listed twice`);
    seen.add(s);
    if (!isSeed(s)) throw seedsError(`--seeds: seed ${s} is out of range [0, 2^31-1]`);
  }
  return seeds;
}

export const JSON_OPTION = flagOption('--json', 'print the result as JSON');

export const OUT_OPTION = textOption('--out', 'dir', 'write record.json into this directory');

export const FORCE_OPTION = flagOption(
  '--force',
  'replace a record.json already in --out (never done without it)',
);

export const HTML_OPTION = textOption('--html', 'file', 'also write an HTML page');

export const SEEDS_OPTION = parsedOption(
  '--seeds',
  'A..B',
  'run many seeds (A..B inclusive, or 1,2,3) and summarise each metric with a 95% CI',
  parseSeeds,
  { group: 'seed' },
);

export const SET_OPTION = listOption(
  '--set',
  'key=value',
  'set an experiment option (repeatable); `labs list` shows the keys, defaults and accepted ranges',
);

export const PROGRESS_OPTION = flagOption('--no-progress', 'never show a progress bar');

export const JOBS_OPTION = numberOption(
  '--jobs',
  'n',
  'with --seeds (also --sweep ... --seeds): run this many seeds at once, on this thread and N-1 worker threads (1 = serial; default: the number of cores, the workers started only once the seeds are long or many enough to pay for them)',
  { integer: true, min: 1, max: 256 },
);

export const SHARD_OPTION: CommandOption<Shard | 'auto' | null> = parsedOption(
  '--shard',
  'K/N|auto',
  'with --seeds or --sweep and --out: run only share K of N of the (sweep value x seed) runs, writing their per-seed records into --out for `labs merge` (auto: from SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or PARALLEL_SEQ)',
  (text) => (text.trim() === 'auto' ? 'auto' : parseShard(text)),
);

/** Checked (with the scheduler's variables) where the shard is resolved: src/cli/shard.ts shardFromEnv. */
export const SHARD_COUNT_OPTION = textOption(
  '--shard-count',
  'n',
  'with --shard auto: the number of shards, where the scheduler does not give it (Kubernetes, GNU parallel; or LABS_SHARD_COUNT)',
  { within: '--shard' },
);

/** `--shard-count` without `--shard auto`: refused (`--shard K/N` names the count). */
export function checkShardCount(shard: Shard | 'auto' | null, shardCount: string | null): void {
  if (shardCount !== null && shard !== 'auto') {
    throw new LabError('BAD_CLI', '--shard-count goes with --shard auto (--shard K/N names the count)', {
      details: { field: '--shard-count' },
    });
  }
}
