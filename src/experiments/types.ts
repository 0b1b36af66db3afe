/**
 * The experiment contract. An experiment is a pure-ish function of (config, seed) that returns a
 * RunRecord; it never prints, never reads the clock for anything but `timing`, and draws every
 * random number from streams derived from the seed.
 */
import type { z } from 'zod';
import type { Summary } from '../core/stats.js';
import type { OptionsSchema } from './options.js';

/** Scalar or small JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

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

/** Summary statistics across seeds for one metric: core's `summarize` output (mean, sample std, min, max, t-based ci95, n). */
export type MetricSummary = Summary;

export interface MultiSeedRecord {
  experiment: string;
  seeds: number[];
  version: string;
  config: Record<string, JsonValue>;
  runs: RunRecord[];
  summary: Record<string, MetricSummary>;
  /** Per-update mean curve and 95% band across seeds (for reports). */
  curve_summary?: Record<string, { mean: number[]; lo: number[]; hi: number[] }>;
  timing: { wall_ms: number };
}

export interface RunContext {
  seed: number;
  /** Called with progress in [0, total]; the CLI turns it into a bar on a TTY. */
  onProgress?: (done: number, total: number) => void;
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
  run(config: z.output<S>, ctx: RunContext): RunRecord | Promise<RunRecord>;
}
