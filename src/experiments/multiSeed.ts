/**
 * Run one experiment over many seeds and summarise every numeric metric (mean, std, min, max, 95%
 * interval: t, or a bootstrap over seeds for rates) and every per-update curve (mean and 95% band),
 * plus the experiment's paired comparisons, as `--seeds A..B` prints.
 */
import type { z } from 'zod';
import { isLabError, LabError } from '../core/errors.js';
import type { OptionsSchema } from './options.js';
import { compareArms, curveBands, statisticsDescription, summarizeAcrossSeeds } from './seedStatistics.js';
import { startStopwatch } from './stopwatch.js';
import type {
  ComparisonPlan,
  Experiment,
  JsonValue,
  MetricSummary,
  MultiSeedRecord,
  RunRecord,
} from './types.js';
import { VERSION } from './version.js';

/** One curve to band across seeds: its key and every run's series (see {@link curveBands}). */
export interface CurveItem {
  key: string;
  series: number[][];
}

/** A curve's per-update mean and 95% band across seeds, as {@link curveBands} returns it. */
export type CurveBand = ReturnType<typeof curveBands>;

/**
 * The curves a multi-seed record bands, in record order: every curve of the first run except
 * `update`, unless some run has no point of it.
 */
export function curvesToBand(runs: readonly RunRecord[]): CurveItem[] {
  const first = runs[0];
  if (!first) return [];
  const items: CurveItem[] = [];
  for (const key of Object.keys(first.curves)) {
    const series = runs.map((r) => r.curves[key] ?? []);
    const len = Math.min(...series.map((s) => s.length));
    if (len === 0 || key === 'update') continue;
    items.push({ key, series });
  }
  return items;
}

/**
 * The `--seeds` record: per numeric metric (finite in every run) its summary across runs — mean,
 * sample std, min, max, 95% interval (t, or bootstrap over seeds when every value is in [0, 1]; see
 * seedStatistics.ts) — per curve (except `update`) the per-update mean and 95% band over the runs
 * whose value is finite there, truncated to the shortest run, and, when `plan` is given, the paired
 * comparisons it declares (with Holm-adjusted p-values across them). `bands`, when given, are the
 * curves' bands already computed elsewhere (one per {@link curvesToBand} item, in its order; the
 * `--jobs` threads share them out, since each is a pure function of its series and key).
 */
export function summarizeRuns(
  experiment: string,
  config: Record<string, JsonValue>,
  runs: RunRecord[],
  wallMs: number,
  plan: ComparisonPlan | null = null,
  bands?: readonly CurveBand[],
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
  for (const [i, { key, series }] of curvesToBand(runs).entries()) {
    curve_summary[key] = bands ? (bands[i] as CurveBand) : curveBands(series, key);
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

/** One seed of one config to run (a sweep runs the same seeds at several configs). */
export interface SeedTask {
  config: Record<string, JsonValue>;
  seed: number;
}

/** What running one task gave: its record, or what it threw. */
export type SeedOutcome = { ok: true; record: RunRecord } | { ok: false; error: unknown };

/**
 * Runs seeds on more than one thread (the `--jobs` pool, src/cli/runtime/seedPool.ts). `runAll` runs `tasks`,
 * each claimed once, in list order, by the first idle thread, and resolves with every task's outcome
 * in list order: exactly what `experiment.run(task.config, { seed: task.seed })` returns here (same
 * record, byte for byte; only `timing` may differ) or the error it throws. After a failure no thread
 * claims another task (one claimed at that very moment may still run), so every task before the
 * first failure has an outcome; tasks never claimed are `undefined`. `onFinished(done, total)` counts
 * finished tasks (fractional while a task on this thread reports its own progress). `onOutcome(i,
 * outcome)` gets each task's outcome as soon as it is in (in finishing order, on this thread; it must
 * not throw). `jobs` is the number of threads running tasks.
 */
export interface SeedRunner {
  jobs: number;
  runAll(
    tasks: readonly SeedTask[],
    onFinished?: (done: number, total: number) => void,
    onOutcome?: (index: number, outcome: SeedOutcome) => void,
  ): Promise<(SeedOutcome | undefined)[]>;
  /**
   * `items.map((it) => curveBands(it.series, it.key))`, computed on the runner's threads (the bands
   * of many seeds' curves can cost as much as the seeds: 500 resamples per update of every rate curve).
   */
  bandAll?(items: readonly CurveItem[]): Promise<CurveBand[]>;
  /** How many threads have run items so far, this one included (workers may start late, or idle). */
  threadsUsed?(): number;
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
 * The records of `outcomes` (one per task, in task order), or, if any task failed, the error of the
 * first failed task in list order with its seed named: the error a serial run (which stops at its
 * first failure) reports. A task without an outcome before that point is a runner bug (thrown as one).
 */
export function recordsOrFirstError(
  tasks: readonly SeedTask[],
  outcomes: readonly (SeedOutcome | undefined)[],
): RunRecord[] {
  const records: RunRecord[] = [];
  for (const [i, task] of tasks.entries()) {
    const o = outcomes[i];
    if (!o) throw new Error(`the seed runner gave no outcome for seed ${task.seed} (task ${i})`);
    if (!o.ok) throw namingSeed(o.error, task.seed);
    records.push(o.record);
  }
  return records;
}

/** Whether `runner` should run `tasks` tasks (more than one thread and more than one task). */
export function usesRunner(runner: SeedRunner | undefined, tasks: number): runner is SeedRunner {
  return runner !== undefined && runner.jobs > 1 && tasks > 1;
}

/** What {@link runTasks} is given besides the tasks. */
export interface RunTasksOptions {
  /** `--jobs`: the threads that share the tasks (absent or one thread: serially on this thread). */
  runner?: SeedRunner | undefined;
  /** Tasks finished so far out of those to run (fractional while this thread's task reports). */
  onProgress?: ((done: number, total: number) => void) | undefined;
  /**
   * Records already on hand by task index (a resumed run's per-seed records): those tasks are not
   * run and their record is taken as it is.
   */
  done?: readonly (RunRecord | undefined)[] | undefined;
  /**
   * Called with each task's record (index in `tasks`) as soon as it is finished, before the others
   * are; the CLI writes it to disk there, so an interrupted run keeps every finished seed. If it
   * throws, that error is thrown: at once when running serially, once the threads are done with
   * `runner`.
   */
  onRecord?: ((index: number, record: RunRecord) => void) | undefined;
  /**
   * Runs each task this thread computes serially: `interruptible(() => experiment.run(...))`. The
   * CLI passes its `runBreakingOnInterrupt` (src/cli/interrupt.ts), so Ctrl-C stops a seed that is
   * computing instead of waiting for it to end; the library itself never handles signals. Default:
   * call it directly.
   */
  interruptible?: (<T>(compute: () => T) => T) | undefined;
}

/**
 * Runs every task of `tasks` that `done` does not already hold (in list order, serially or on
 * `runner`'s threads: the same records either way) and returns every task's record in list order.
 * A failure is the first failing task's (list order), with its seed named, as a serial run reports it.
 */
export async function runTasks(
  experiment: Experiment,
  tasks: readonly SeedTask[],
  options: RunTasksOptions = {},
): Promise<RunRecord[]> {
  const { runner, onProgress, done = [], onRecord, interruptible = (compute) => compute() } = options;
  const todo = tasks.flatMap((task, i) => (done[i] ? [] : [{ task, i }]));
  const records: (RunRecord | undefined)[] = tasks.map((_, i) => done[i]);
  if (usesRunner(runner, todo.length)) {
    let writeError: { error: unknown } | undefined;
    const outcomes = await runner.runAll(
      todo.map((t) => t.task),
      onProgress,
      (k, outcome) => {
        if (!outcome.ok || writeError) return;
        try {
          onRecord?.((todo[k] as { i: number }).i, outcome.record);
        } catch (error) {
          writeError = { error };
        }
      },
    );
    if (writeError) throw writeError.error;
    const fresh = recordsOrFirstError(
      todo.map((t) => t.task),
      outcomes,
    );
    for (const [k, { i }] of todo.entries()) records[i] = fresh[k];
  } else {
    for (const [k, { task, i }] of todo.entries()) {
      const ctx = onProgress
        ? {
            seed: task.seed,
            onProgress: (d: number, t: number) => onProgress(k + (t > 0 ? d / t : 1), todo.length),
          }
        : { seed: task.seed };
      let record: RunRecord;
      try {
        record = await interruptible(() => experiment.run(task.config, ctx));
      } catch (e) {
        throw namingSeed(e, task.seed);
      }
      records[i] = record;
      onRecord?.(i, record);
      onProgress?.(k + 1, todo.length);
      // Let the event loop turn between seeds: a Ctrl-C handler (the CLI's) runs here, not after the last.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return records as RunRecord[];
}

/**
 * The multi-seed record of `runs` (one per seed, in the order given) of `experiment` at `config`:
 * {@link summarizeRuns} with the experiment's comparison plan, the curve bands computed on `runner`'s
 * threads when given (the same numbers), and `timing.threads` when more than one thread ran.
 */
export async function summarizeSeedRuns(
  experiment: Pick<Experiment, 'name' | 'comparisons'>,
  config: Record<string, JsonValue>,
  runs: RunRecord[],
  wallMs: number,
  runner?: SeedRunner,
): Promise<MultiSeedRecord> {
  const bands = usesRunner(runner, runs.length) ? await runner.bandAll?.(curvesToBand(runs)) : undefined;
  const plan = experiment.comparisons?.(config as never) ?? null;
  const record = summarizeRuns(experiment.name, config, runs, wallMs, plan, bands);
  const threads = usesRunner(runner, runs.length) ? (runner.threadsUsed?.() ?? 1) : 1;
  if (threads > 1) record.timing.threads = threads;
  return record;
}

/**
 * Runs `experiment` for every seed (deterministic per seed) and summarises. Without `runner` (or
 * with a one-thread runner) the seeds run one after another on this thread; with one they run on it
 * (in parallel, the same records). Either way the records are in `seeds` order and a failure is the
 * first failing seed's, with its seed named.
 */
export async function runSeeds<S extends OptionsSchema>(
  experiment: Experiment<S>,
  config: z.output<S>,
  seeds: readonly number[],
  onProgress?: (done: number, total: number) => void,
  runner?: SeedRunner,
): Promise<MultiSeedRecord> {
  const elapsedMs = startStopwatch();
  const tasks = seeds.map((seed) => ({ config: config as Record<string, JsonValue>, seed }));
  const runs = await runTasks(experiment as Experiment, tasks, { runner, onProgress });
  return summarizeSeedRuns(
    experiment as Experiment,
    config as Record<string, JsonValue>,
    runs,
    elapsedMs(),
    runner,
  );
}
