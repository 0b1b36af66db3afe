/**
 * Types of the golden-vector conformance runner (`labs conformance FILE`). A golden file holds
 * outputs of verl's own functions on fixed inputs (format in its `meta.format`).
 */

export interface GoldenCase {
  name: string;
  /** verl function name, e.g. `compute_grpo_outcome_advantage`. */
  fn: string;
  inputs: Record<string, unknown>;
  config: Record<string, unknown>;
  /** verl's float32 outputs, or `{ raises, message }` when verl raised. */
  outputs: unknown;
  outputs_f64?: unknown;
  notes?: string;
}

export interface GoldenFile {
  meta: Record<string, unknown>;
  fixtures?: Record<string, Record<string, unknown>>;
  cases: GoldenCase[];
}

/**
 * Maps one verl function onto the lab's kernels.
 * `run` receives the case's inputs with `{ "$fixture": NAME }` already replaced by the fixture's
 * entries and `config.arg_map` / `mask_input` / `index_input` applied (runner.resolveInputs), and returns outputs
 * keyed exactly like the golden `outputs` (numbers, nested arrays or typed arrays, nested dicts for
 * metrics). Where verl raises or returns NaN on a degenerate input, `run` throws a LabError.
 */
export interface Adapter {
  run(
    inputs: Record<string, unknown>,
    config: Record<string, unknown>,
    c: GoldenCase,
  ): Record<string, unknown>;
  /** Output keys that are not compared (e.g. `returns_is_same_object`), with the reason. */
  ignoreKeys?: Record<string, string>;
  /**
   * Returns a reason when the case is an intentional difference from verl (counted as a
   * `deviation`, not a mismatch), else null.
   */
  deviation?(c: GoldenCase): string | null;
  /**
   * Case-level `config` keys this function's cases carry beyond the format's own (`args`,
   * `actor_config`, `algo_config`, `arg_map`, `mask_input`, `index_input`), e.g. `loss_agg_mode`.
   */
  configKeys?: readonly string[];
  /** The input that `config.mask_input` replaces (verl's mask argument); default `response_mask`. */
  maskArg?: string;
  /** Comparison tolerance; default rel 1e-5, abs 1e-6 (the file's meta). */
  tolerance?: { rel: number; abs: number };
}

export type AdapterTable = Record<string, Adapter>;

export type CaseStatus = 'matched' | 'mismatched' | 'deviation' | 'unsupported';

export interface CaseResult {
  name: string;
  fn: string;
  status: CaseStatus;
  /** For mismatches: the first differing path and both values; for deviations: the reason. */
  detail?: string;
}

export interface ConformanceResult {
  matched: number;
  mismatched: number;
  deviations: number;
  unsupported: number;
  cases: CaseResult[];
}
