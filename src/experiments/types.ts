/**
 * The experiment contract. An experiment is a pure-ish function of (config, seed) that returns a
 * RunRecord; it never prints, never reads the clock for anything but `timing`, and draws every
 * random number from streams derived from the seed.
 */
import type { z } from 'zod';
import type { JsonValue } from '../core/json.js';
import type { Summary } from '../core/stats.js';
import type { UpdateTokens } from '../train/mismatchLearner.js';

/**
 * One option field: a value schema wrapped with its default (and help/unit metadata); declared with
 * `option()` in options.ts. The option types live here, beside the Experiment contract that uses
 * them, so that this file does not import options.ts (which imports the contract).
 */
export type OptionField = z.ZodDefault<z.ZodType>;
export type OptionShape = Record<string, OptionField>;
/** An experiment's options: a strict zod object of option fields (unknown keys are refused). */
export type OptionsSchema<Shape extends OptionShape = OptionShape> = z.ZodObject<Shape, z.core.$strict>;

/** Scalar or small JSON value (declared in the core, src/core/json.ts, so every layer can name it). */
export type { JsonValue };

/** What `--json` prints and what is written to `runs/.../record.json` (docs/architecture.md §4). */
export interface RunRecord {
  experiment: string;
  seed: number;
  version: string;
  config: Record<string, JsonValue>;
  metrics: Record<string, JsonValue>;
  /** Per-update series, all the same length as `curves.update` when present. */
  curves: Record<string, number[]>;
  tables: Record<string, Record<string, JsonValue>[]>;
  /** Free-form notes the experiment wants shown (e.g. what this run does not include). */
  notes?: string[];
  /**
   * Plot hints for reports, keyed by curve family. A curve key is `<family>.<series>` (e.g.
   * `group_kind.all_wrong`); all curves of a family share one plot, x = `curves.update`.
   * A hint with `table` plots rows of `tables[table]` instead (histograms, per-bucket stats).
   */
  plots?: Record<string, PlotHint>;
  timing: { wall_ms: number };
}

export interface PlotHint {
  title: string;
  /** y-axis label with its unit, e.g. 'fraction of groups'. */
  y: string;
  /** x-axis label; default 'update'. */
  x?: string;
  kind?: 'line' | 'stacked-area' | 'bar';
  /** Plot `tables[table]` rows: x from `xField`, one series per entry of `yFields`. */
  table?: string;
  xField?: string;
  yFields?: string[];
}

/**
 * Summary statistics across seeds for one metric: mean, sample std, min, max, n and the 95% interval
 * of the mean. `interval` says which interval `ci95` is: 't' (core's `summarize`) for a metric with
 * some value outside [0, 1], 'bootstrap-percentile' over seeds for a metric whose every value lies
 * in [0, 1] (rates and fractions), so a rate's interval never leaves [0, 1].
 */
export type MetricSummary = Summary & { interval?: SummaryInterval };

export type SummaryInterval = 't' | 'bootstrap-percentile';

/**
 * The arms an experiment compares over seeds (`comparisons` of a multi-seed record): every arm
 * against `baseline` on every headline metric. A metric's value for an arm is
 * `metrics['<metric>.<arm>']`, the key order of every experiment's metrics.
 */
export interface ComparisonPlan {
  baseline: string;
  arms: string[];
  metrics: string[];
}

/** One paired comparison over seeds (docs/architecture.md §4). */
export interface Comparison {
  arm: string;
  baseline: string;
  metric: string;
  /** Seeds where both values are finite (the pairs used). */
  n: number;
  /** Mean over seeds of arm − baseline. */
  diff: number;
  /** 95% paired bootstrap interval of `diff` (method in `ci_method`). */
  ci95: [number, number];
  ci_method: 'bca' | 'percentile';
  /** Two-sided sign-flip permutation p-value (method in `p_method`). */
  p: number;
  p_method: 'exact' | 'monte-carlo';
  /** `p` Holm-adjusted across all comparisons of the record. */
  p_holm: number;
  /** Minimal detectable paired difference at 80% power (two-sided α = 0.05, t-based); null for n < 2. */
  mde80: number | null;
}

export interface MultiSeedRecord {
  experiment: string;
  seeds: number[];
  version: string;
  config: Record<string, JsonValue>;
  runs: RunRecord[];
  summary: Record<string, MetricSummary>;
  /** Per-update mean curve and 95% band across seeds (for reports); `interval` as in {@link MetricSummary}. */
  curve_summary?: Record<string, { mean: number[]; lo: number[]; hi: number[]; interval?: SummaryInterval }>;
  /** Paired comparisons of the experiment's arms against their baseline (see {@link ComparisonPlan}). */
  comparisons?: Comparison[];
  /** How each interval and p-value of this record was computed, in words, and the statistics' seed. */
  statistics?: Record<string, JsonValue>;
  /**
   * Wall time of the whole run; `threads`, when more than one ran seeds (`--jobs`): how many did,
   * the main thread included.
   */
  timing: { wall_ms: number; threads?: number };
}

export interface RunContext {
  seed: number;
  /** Called with progress in [0, total]; the CLI turns it into a bar on a TTY. */
  onProgress?: (done: number, total: number) => void;
  /**
   * Called with a line about how the run went that is not a result and so not in the record (e.g.
   * "checkpoint: reused the cached ..."); the CLI prints it with the summary.
   */
  onInfo?: (line: string) => void;
  /**
   * Called with every update's token columns by an experiment that records them (`mismatch`, per
   * arm); the CLI's `--dump DIR` writes them in prime-rl's token-export layout under `DIR/<arm>`.
   */
  onUpdateTokens?: (arm: string, tokens: UpdateTokens) => void;
}

/**
 * An experiment: its options declared once (a zod object, see options.ts) and `run`, which receives
 * the parsed snake_case config (`configOf` / `resolveConfig`: defaults filled, every value
 * validated) and trusts it. Library callers use `runExperiment(experiment, partialConfig, ctx)`.
 */
export interface Experiment<S extends OptionsSchema = OptionsSchema> {
  name: string;
  /** One line for `labs list`. */
  summary: string;
  options: S;
  /** Whether `run` calls `ctx.onUpdateTokens` (what `--dump DIR` writes). */
  recordsTokens?: boolean;
  /** The paired comparisons a multi-seed run reports for `config` (null or absent: none). */
  comparisons?: (config: z.output<S>) => ComparisonPlan | null;
  /**
   * Checks across options that the schema cannot express (BAD_OPTION_VALUE naming the options), e.g.
   * operand_min <= operand_max. `configOf` runs it, so the CLI refuses a bad config (every point of a
   * sweep included) before any seed runs; `run` runs it too, for callers that skip `configOf`.
   */
  check?: (config: z.output<S>) => void;
  run(config: z.output<S>, ctx: RunContext): RunRecord | Promise<RunRecord>;
  /**
   * The terminal summary of one of its records (what `labs run` prints without `--json`): a few
   * short tables, the notes, then the headline line. Absent: the generic summary (title, scalar
   * metrics, notes: `formatGeneric` in src/report/summaries/index.ts).
   */
  format?: (record: RunRecord) => string;
}
