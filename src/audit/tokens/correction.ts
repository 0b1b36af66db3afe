/**
 * What one `--what-if` correction is while a token dump is folded: its parsed spec and the
 * interface every family implements (verl's in whatIf.ts, TRL's and OpenRLHF's in
 * frameworkWhatIf.ts). Declared apart so that those two files do not import each other.
 */
import type { MismatchAccumulator } from '../../core/mismatchFold.js';
import type { SequenceStats } from '../../core/sequenceMismatchStats.js';

export interface WhatIfSpec {
  text: string;
  family: string;
  values: Record<string, string>;
}

/** One correction being folded. `sql(p)` lists aggregates aliased `${p}_<name>`, read back by `add`. */
export interface Correction {
  readonly spec: WhatIfSpec;
  /** Per-sequence SQL aggregates over the loss-token relation (columns `old`, `roll`). */
  sql(prefix: string): string[];
  /** One sequence: its statistics and its row (holding this correction's aggregates). */
  add(s: SequenceStats, row: Record<string, unknown>, prefix: string): void;
  /** The metrics (framework names) and the new mask's counts. */
  finish(overall: MismatchAccumulator): Record<string, number>;
}
