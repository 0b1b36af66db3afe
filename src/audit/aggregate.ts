/**
 * The audit's aggregate types and the definitions shared by its SQL (groupStats.ts) and its
 * record: "zero-variance" means what `classifyGroups` (src/core/groupDiagnostics.ts) says, the
 * function the experiments use: a group of >= 2 members whose rewards are all equal (all_wrong:
 * equal and <= failValue; all_right: equal and >= passValue; all_equal_other: equal, in between).
 * Singletons are counted separately.
 *
 * A sample is "correct" when reward >= passValue (used for always/never/sometimes-solved tasks and
 * for response length of correct vs incorrect samples).
 *
 * Token denominators, per verl's agg_loss (docs/verl-semantics.md §4) with the dump treated as one batch, or one step:
 *   token-mean: Σ action tokens; seq-mean-token-sum and seq-mean-token-mean: rows with >= 1 action
 *   token; seq-mean-token-sum-norm: T, taken as the longest response (action + env tokens) seen,
 *   because verl's T is the padded response length (or loss_scale_factor), which a dump does not hold.
 */
import type { LossAggMode } from '../core/aggLoss.js';

export interface KindCounts {
  groups: number;
  all_wrong: number;
  all_right: number;
  all_equal_other: number;
  mixed: number;
  singleton: number;
}

export interface TokenCounts {
  /** Rows with token counts (all rows when the dump has them). */
  rows: number;
  action: number;
  env: number;
  /** Rows with at least one action token (the seq-mean-* denominators). */
  rowsWithAction: number;
  /** Longest response, action + env tokens (this audit's stand-in for verl's padded T). */
  maxLength: number;
  /** Action tokens of rows in zero-variance groups: advantage 0, yet counted by token-mean. */
  zeroAdvantageAction: number;
}

export interface StepStats extends KindCounts {
  step: number;
  rows: number;
  /** Mean reward of the step's rows (0 for none); a sum of finite rewards can overflow, a mean not. */
  rewardMean: number;
  correct: number;
  truncated: number;
  tokens: TokenCounts;
}

export interface TaskStats extends KindCounts {
  tid: number;
  samples: number;
  rewardMean: number;
  correct: number;
  /** Samples in zero-variance groups (their advantage is exactly 0 under group-mean conventions). */
  wastedSamples: number;
  firstStep: number;
  lastStep: number;
}

export interface AdvantageCheck {
  convention: 'trl';
  compared: number;
  differing: number;
  maxAbsDiff: number;
  /** Rows of singleton groups: TRL refuses groups of one, so there is nothing to compare with. */
  skippedSingletonRows: number;
}

export interface AuditAggregate {
  rows: number;
  kinds: KindCounts;
  correct: number;
  rewardMean: number;
  steps: StepStats[];
  tasks: TaskStats[];
  /** Task id -> task text (the SQL path; the row path leaves it empty). */
  taskText?: Map<number, string>;
  /** Group size -> number of groups. */
  groupSizes: Map<number, number>;
  /** Groups whose rows carry more than one task (a mis-set group label). */
  mixedTaskGroups: number;
  tokens: TokenCounts | null;
  /** Truncated samples, how many of them are correct, and their mean reward (0 for none). */
  truncation: {
    rows: number;
    truncated: number;
    truncatedCorrect: number;
    truncatedMeanReward: number;
  } | null;
  advantageCheck: AdvantageCheck | null;
}

/** Zero-variance groups of a kind count: all_wrong + all_right + all_equal_other. */
export function zeroVariance(k: KindCounts): number {
  return k.all_wrong + k.all_right + k.all_equal_other;
}

/**
 * Effective denominators of verl's four aggregation modes for token counts (see the file header).
 * Keys are verl's mode names.
 */
export function tokenDenominators(t: TokenCounts): Record<LossAggMode, number> {
  return {
    'token-mean': t.action,
    'seq-mean-token-sum': t.rowsWithAction,
    'seq-mean-token-mean': t.rowsWithAction,
    'seq-mean-token-sum-norm': t.maxLength,
  };
}
