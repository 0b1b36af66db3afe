/**
 * `labs run --experiment NAME --sweep key=v1,v2,... [--seeds A..B]`: the experiment at each value of
 * one option, over the same seeds at every value. An experiment derives every stream from its seed,
 * so the seeds are common random numbers across values: a difference between two values is not
 * also a difference of task draws. Each value gives a full multi-seed record (summaries with
 * intervals, paired comparisons); the dose-response rows collect, per headline metric and arm, the
 * mean and 95% interval at each value.
 */
import { LabError } from '../core/errors.js';
import {
  curvesToBand,
  runTasks,
  type SeedRunner,
  type SeedTask,
  summarizeRuns,
  usesRunner,
} from './multiSeed.js';
import { parseSetPair, resolveConfig } from './options.js';
import { isDifferenceKey, metricKey } from './seedStatistics.js';
import { startStopwatch } from './stopwatch.js';
import type { SweepSpec } from './sweepSpec.js';
import type { Experiment, JsonValue, MultiSeedRecord, RunRecord, SummaryInterval } from './types.js';
import { VERSION } from './version.js';

/** One value of a sweep, its multi-seed record (its own config, summaries and comparisons). */
export interface SweepPoint {
  value: JsonValue;
  record: MultiSeedRecord;
}

/** One point of a dose-response curve: a metric of an arm at one value, mean over seeds and its 95% interval. */
export interface DoseRow {
  metric: string;
  /** '' for an experiment without declared arms (every metric is its own curve). */
  arm: string;
  value: JsonValue;
  mean: number;
  ci95: [number, number];
  interval: SummaryInterval;
  n: number;
  /** Paired difference from the baseline arm at the same value (absent for the baseline and without arms). */
  diff?: number;
  diff_ci95?: [number, number];
  p_holm?: number;
}

export interface SweepRecord {
  experiment: string;
  sweep: { key: string; values: JsonValue[] };
  seeds: number[];
  version: string;
  /** Options shared by every point (the swept key holds its first value here; each point has its own config). */
  config: Record<string, JsonValue>;
  /** Baseline arm of the paired differences, or null when the experiment declares no arms. */
  baseline: string | null;
  points: SweepPoint[];
  dose_response: DoseRow[];
  timing: { wall_ms: number };
}

/**
 * The config of every value of `spec`, with the other options from `sets`, all validated before
 * anything runs (a bad last value fails in a second, not after the others have run). Errors:
 * BAD_CLI when `sets` also sets the swept key; the experiment's own UNKNOWN_OPTION /
 * BAD_OPTION_VALUE for a bad key or value.
 */
export function sweepConfigs(
  experiment: Experiment,
  sets: readonly string[],
  spec: SweepSpec,
): Record<string, JsonValue>[] {
  if (sets.some((pair) => parseSetPair(pair)[0] === spec.key)) {
    throw new LabError('BAD_CLI', `--sweep ${spec.key}=... and --set ${spec.key}=... exclude each other`, {
      details: { field: '--sweep', key: spec.key },
    });
  }
  return spec.values.map(
    (v) => resolveConfig(experiment, [...sets, `${spec.key}=${v}`]) as Record<string, JsonValue>,
  );
}

/**
 * A sweep's job list: every (value, seed) run, value-major (the serial order), so `--jobs` threads
 * stay busy across values and the first failure is the serial one.
 */
export function sweepTasks(
  configs: readonly Record<string, JsonValue>[],
  seeds: readonly number[],
): SeedTask[] {
  return configs.flatMap((config) => seeds.map((seed) => ({ config, seed })));
}

/**
 * The sweep record from every (value, seed) run of {@link sweepTasks}' list (`runs`, in its order):
 * each value's multi-seed record (its `wall_ms` the sum of its runs', since with `--jobs` the values'
 * runs interleave), and the dose-response rows. With `runner` the curve bands of every value are
 * computed in one share-out on its threads (the same numbers).
 */
export async function assembleSweep(
  experiment: Experiment,
  spec: Pick<SweepSpec, 'key'>,
  seeds: readonly number[],
  configs: readonly Record<string, JsonValue>[],
  runs: readonly RunRecord[],
  wallMs: number,
  runner?: SeedRunner,
): Promise<SweepRecord> {
  const perValue = configs.map((_, i) => runs.slice(i * seeds.length, (i + 1) * seeds.length));
  const items = perValue.map((own) => curvesToBand(own));
  const all = usesRunner(runner, runs.length) ? await runner.bandAll?.(items.flat()) : undefined;
  const points: SweepPoint[] = [];
  let at = 0;
  for (const [i, config] of configs.entries()) {
    const own = perValue[i] as RunRecord[];
    const bands = all?.slice(at, at + (items[i] as unknown[]).length);
    at += (items[i] as unknown[]).length;
    const pointWallMs = own.reduce((sum, r) => sum + r.timing.wall_ms, 0);
    const plan = experiment.comparisons?.(config) ?? null;
    const record = summarizeRuns(experiment.name, config, own, pointWallMs, plan, bands);
    points.push({ value: config[spec.key] as JsonValue, record });
  }
  const plan = configs[0] ? (experiment.comparisons?.(configs[0]) ?? null) : null;
  return {
    experiment: experiment.name,
    sweep: { key: spec.key, values: points.map((p) => p.value) },
    seeds: [...seeds],
    version: VERSION,
    config: (configs[0] ?? {}) as Record<string, JsonValue>,
    baseline: plan?.baseline ?? null,
    points,
    dose_response: doseResponse(experiment, points),
    timing: { wall_ms: wallMs },
  };
}

/**
 * Runs `experiment` at every value of `spec` over `seeds` (the same seeds, in order, at every value),
 * with the other options from `sets` (validated first: {@link sweepConfigs}). With `runner`
 * (`--jobs`) every (value, seed) run goes to it as one task list ({@link sweepTasks}): the same record
 * except `timing`.
 */
export async function runSweep(
  experiment: Experiment,
  sets: readonly string[],
  spec: SweepSpec,
  seeds: readonly number[],
  onProgress?: (done: number, total: number) => void,
  runner?: SeedRunner,
): Promise<SweepRecord> {
  const elapsedMs = startStopwatch();
  const configs = sweepConfigs(experiment, sets, spec);
  const runs = await runTasks(experiment, sweepTasks(configs, seeds), { runner, onProgress });
  return assembleSweep(experiment, spec, seeds, configs, runs, elapsedMs(), runner);
}

/**
 * The dose-response rows: per headline metric (the experiment's declared comparison metrics and arms,
 * else every summarised metric except per-seed differences (`*_minus_*`), as its own curve) and value, the mean
 * over seeds with its 95% interval and, for an arm, its paired difference from the baseline at that
 * value (BCa CI, Holm p within that value's comparisons). Metrics missing at a value are left out.
 */
export function doseResponse(
  experiment: Pick<Experiment, 'comparisons'>,
  points: readonly SweepPoint[],
): DoseRow[] {
  const rows: DoseRow[] = [];
  for (const { value, record } of points) {
    const plan = experiment.comparisons?.(record.config) ?? null;
    const series: { metric: string; arm: string; key: string }[] = plan
      ? plan.metrics.flatMap((metric) =>
          plan.arms.map((arm) => ({ metric, arm, key: metricKey(arm, metric) })),
        )
      : Object.keys(record.summary)
          .filter((k) => !isDifferenceKey(k))
          .map((k) => ({ metric: k, arm: '', key: k }));
    for (const { metric, arm, key } of series) {
      const s = record.summary[key];
      if (!s) continue;
      const row: DoseRow = {
        metric,
        arm,
        value,
        mean: s.mean,
        ci95: s.ci95,
        interval: s.interval ?? 't',
        n: s.n,
      };
      const c = record.comparisons?.find((x) => x.arm === arm && x.metric === metric);
      if (c) Object.assign(row, { diff: c.diff, diff_ci95: c.ci95, p_holm: c.p_holm });
      rows.push(row);
    }
  }
  return rows;
}
