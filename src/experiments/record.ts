/**
 * The RunRecord envelope (docs/architecture.md §4), built in one place: every experiment gives its
 * name, config and seed once, when it starts, and its body (metrics, curves, tables, notes, plots)
 * when it ends; the envelope adds the package version and the wall time. The key order of the
 * record is fixed here (experiment, seed, version, config, metrics, curves, tables, notes, plots,
 * timing), which is the byte order of every record written so far (test/records.test.ts).
 */
import { startStopwatch } from './stopwatch.js';
import type { JsonValue, PlotHint, RunRecord } from './types.js';
import { VERSION } from './version.js';

/** What an experiment measured: the part of a RunRecord that is not the envelope. */
export interface RecordBody {
  metrics: Record<string, JsonValue>;
  /** Per-update series, all the same length as `curves.update` when present. */
  curves: Record<string, number[]>;
  tables: Record<string, Record<string, JsonValue>[]>;
  notes?: string[];
  plots?: Record<string, PlotHint>;
}

/**
 * A RunRecord from its envelope and body. `config` is the parsed config the experiment ran with
 * (a zod output: JSON values only), written whole, defaults included, so the record alone can
 * reproduce the run. `notes` and `plots` are left out when absent (not written as `undefined`).
 */
export function recordOf(
  experiment: string,
  config: object,
  seed: number,
  body: RecordBody,
  wallMs: number,
): RunRecord {
  return {
    experiment,
    seed,
    version: VERSION,
    config: config as Record<string, JsonValue>,
    metrics: body.metrics,
    curves: body.curves,
    tables: body.tables,
    ...(body.notes !== undefined ? { notes: body.notes } : {}),
    ...(body.plots !== undefined ? { plots: body.plots } : {}),
    timing: { wall_ms: wallMs },
  };
}

/** A run's envelope, opened when the run starts (its clock starts then): `finish` builds the record. */
export interface OpenRecord {
  /** The RunRecord of `body`, timed from when {@link startRecord} was called. */
  finish(body: RecordBody): RunRecord;
}

/**
 * Opens the record of a run of `experiment` with `config` and `seed` and starts its wall clock
 * (`timing.wall_ms`, the only field that differs between two runs of the same seed and config).
 */
export function startRecord(experiment: string, config: object, seed: number): OpenRecord {
  const elapsedMs = startStopwatch();
  return { finish: (body) => recordOf(experiment, config, seed, body, elapsedMs()) };
}
