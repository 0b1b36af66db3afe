/**
 * Run one experiment over many seeds and summarise every numeric metric (mean, std, min, max, 95%
 * interval: t, or a bootstrap over seeds for rates) and every per-update curve (mean and 95% band),
 * plus the experiment's paired comparisons, as `--seeds A..B` prints.
 */
import type { z } from 'zod';
import { isLabError, LabError } from '../core/errors.js';
import type { OptionsSchema } from './options.js';
import { compareArms, curveBands, statisticsDescription, summarizeAcrossSeeds } from './seedStatistics.js';
import type {
  ComparisonPlan,
  Experiment,
  JsonValue,
  MetricSummary,
  MultiSeedRecord,
  RunRecord,
} from './types.js';
import { VERSION } from './version.js';

/**
 * The `--seeds` record: per numeric metric (finite in every run) its summary across runs — mean,
 * sample std, min, max, 95% interval (t, or bootstrap over seeds when every value is in [0, 1]; see
 * seedStatistics.ts) — per curve (except `update`) the per-update mean and 95% band over the runs
 * whose value is finite there, truncated to the shortest run, and, when `plan` is given, the paired
 * comparisons it declares (with Holm-adjusted p-values across them).
 */
export function summarizeRuns(
  experiment: string,
  config: Record<string, JsonValue>,
  runs: RunRecord[],
  wallMs: number,
  plan: ComparisonPlan | null = null,
): MultiSeedRecord {
  const summary: Record<string, MetricSummary> = {};
  const first = runs[0];
  if (first) {
    for (const key of Object.keys(first.metrics)) {
      const values = runs.map((r) => r.metrics[key]);
      if (values.every((v): v is number => typeof v === 'number' && Number.isFinite(v))) {
        summary[key] = summarizeAcrossSeeds(values, key);
      }
    }
  }
  const curve_summary: NonNullable<MultiSeedRecord['curve_summary']> = {};
  if (first) {
    for (const key of Object.keys(first.curves)) {
      const series = runs.map((r) => r.curves[key] ?? []);
      const len = Math.min(...series.map((s) => s.length));
      if (len === 0 || key === 'update') continue;
      curve_summary[key] = curveBands(series, key);
    }
  }
  const comparisons = plan ? compareArms(runs, plan) : [];
  return {
    experiment,
    seeds: runs.map((r) => r.seed),
    version: VERSION,
    config,
    runs,
    summary,
    curve_summary,
    ...(plan ? { comparisons } : {}),
    statistics: statisticsDescription(comparisons.length),
    timing: { wall_ms: wallMs },
  };
}

/**
 * Runs one seed somewhere other than this thread (a worker pool, see src/cli/seedPool.ts): `run` must
 * return exactly what `experiment.run(config, { seed })` returns here (same record, byte for byte;
 * only `timing` may differ) or throw what it throws. At most `jobs` calls are in flight at once.
 */
export interface SeedRunner {
  jobs: number;
  run(seed: number): Promise<RunRecord>;
}

/** `e` thrown by seed `seed`, with the seed named: `--seeds 1..20` failing at 13 is rerun with `--seed 13`. */
function namingSeed(e: unknown, seed: number): unknown {
  if (!isLabError(e)) return e;
  return new LabError(e.code, `seed ${seed}: ${e.message}`, {
    cause: e,
    details: { ...e.details, seed },
  });
}

/**
 * Runs `seeds` through `runner` with up to `runner.jobs` seeds in flight, keeping the records in seed
 * order. Seeds start in list order; after a failure no later seed starts, the seeds already running
 * finish, and the error of the first failing seed in list order is thrown, so the error is the one a
 * serial run reports. `onProgress(done, total)` counts finished seeds.
 */
async function runOnRunner(
  runner: SeedRunner,
  seeds: readonly number[],
  onProgress?: (done: number, total: number) => void,
): Promise<RunRecord[]> {
  const runs: (RunRecord | undefined)[] = new Array(seeds.length);
  const failures = new Map<number, unknown>();
  let next = 0;
  let done = 0;
  const lane = async (): Promise<void> => {
    while (next < seeds.length && failures.size === 0) {
      const i = next++;
      try {
        runs[i] = await runner.run(seeds[i] as number);
      } catch (e) {
        failures.set(i, e);
        return;
      }
      done++;
      onProgress?.(done, seeds.length);
    }
  };
  const lanes = Math.max(1, Math.min(runner.jobs, seeds.length));
  await Promise.all(Array.from({ length: lanes }, lane));
  if (failures.size > 0) {
    const first = Math.min(...failures.keys());
    throw namingSeed(failures.get(first), seeds[first] as number);
  }
  return runs as RunRecord[];
}

/**
 * Runs `experiment` for every seed (deterministic per seed) and summarises. Without `runner` the
 * seeds run one after another on this thread; with one they run on it (in parallel, the same
 * records). Either way the records are in `seeds` order and a failure names its seed.
 */
export async function runSeeds<S extends OptionsSchema>(
  experiment: Experiment<S>,
  config: z.output<S>,
  seeds: readonly number[],
  onProgress?: (done: number, total: number) => void,
  runner?: SeedRunner,
): Promise<MultiSeedRecord> {
  const start = performance.now();
  let runs: RunRecord[];
  if (runner && runner.jobs > 1 && seeds.length > 1) {
    runs = await runOnRunner(runner, seeds, onProgress);
  } else {
    runs = [];
    for (let i = 0; i < seeds.length; i++) {
      const seed = seeds[i] as number;
      const ctx = onProgress
        ? { seed, onProgress: (d: number, t: number) => onProgress(i + (t > 0 ? d / t : 1), seeds.length) }
        : { seed };
      try {
        runs.push(await experiment.run(config, ctx));
      } catch (e) {
        throw namingSeed(e, seed);
      }
      onProgress?.(i + 1, seeds.length);
    }
  }
  const plan = experiment.comparisons?.(config) ?? null;
  return summarizeRuns(
    experiment.name,
    config as Record<string, JsonValue>,
    runs,
    performance.now() - start,
    plan,
  );
}
