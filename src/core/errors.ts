/**
 * The one error type of the lab. Every failure that a user can cause (bad input, unknown option,
 * malformed dump line) is a `LabError` with a stable machine-readable `code`, and a message that
 * names the argument or field and the position (row, token, file and line).
 *
 * Codes are part of the public contract: tests and scripts may match on them, so never rename one.
 */
export type LabErrorCode =
  /** Two arrays that must agree in length or shape do not (e.g. mask [B,T] vs log-probs [B,T']). */
  | 'SHAPE_MISMATCH'
  /** A value that must be finite is NaN or +-Infinity (rewards, log-probs, advantages...). */
  | 'NON_FINITE'
  /** A mask entry is not exactly 0 or 1. */
  | 'BAD_MASK'
  /** An all-zero mask where the formula would divide by zero (verl returns NaN there). */
  | 'EMPTY_MASK'
  /** A group of one where the chosen singleton rule is `error` (TRL-style). */
  | 'SINGLETON_GROUP'
  /** An argument is out of its documented range (clip_ratio_c <= 1, negative epsilon...). */
  | 'BAD_ARGUMENT'
  /** A named choice that does not exist (loss_agg_mode, kl penalty name, estimator...). */
  | 'UNKNOWN_MODE'
  /** A verl feature that verl itself rejects at this commit (e.g. the `k3+` KL names). */
  | 'NOT_SUPPORTED'
  /** CLI: unknown command, option, experiment name or `--set` key, or an invalid value (usage errors, exit 2). */
  | 'BAD_CLI'
  | 'UNKNOWN_EXPERIMENT'
  | 'UNKNOWN_OPTION'
  | 'BAD_OPTION_VALUE'
  /** Input files: unreadable, missing column, malformed line or row. */
  | 'IO_ERROR'
  | 'PARSE_ERROR'
  | 'MISSING_COLUMN'
  | 'BAD_VALUE'
  /** A record file that is not a RunRecord. */
  | 'BAD_RECORD'
  /** A model checkpoint that is truncated, corrupted, of another format version or for another model. */
  | 'BAD_CHECKPOINT'
  /** A browser or other external program the command needs is missing. */
  | 'MISSING_DEPENDENCY';

/**
 * What kind of mistake each code reports, for the CLI's exit code: `usage` is anything wrong on the
 * command line (unknown command, option, experiment or `--set` key, an option value out of its range,
 * options that contradict each other): exit 2. `runtime` is a failure while running on valid
 * arguments (input files, data, kernels): exit 1. One entry per code, so a new code must be classified.
 */
export const LAB_ERROR_KIND: Readonly<Record<LabErrorCode, 'usage' | 'runtime'>> = Object.freeze({
  BAD_CLI: 'usage',
  UNKNOWN_EXPERIMENT: 'usage',
  UNKNOWN_OPTION: 'usage',
  BAD_OPTION_VALUE: 'usage',
  SHAPE_MISMATCH: 'runtime',
  NON_FINITE: 'runtime',
  BAD_MASK: 'runtime',
  EMPTY_MASK: 'runtime',
  SINGLETON_GROUP: 'runtime',
  BAD_ARGUMENT: 'runtime',
  UNKNOWN_MODE: 'runtime',
  NOT_SUPPORTED: 'runtime',
  IO_ERROR: 'runtime',
  PARSE_ERROR: 'runtime',
  MISSING_COLUMN: 'runtime',
  BAD_VALUE: 'runtime',
  BAD_RECORD: 'runtime',
  BAD_CHECKPOINT: 'runtime',
  MISSING_DEPENDENCY: 'runtime',
});

export interface LabErrorOptions {
  cause?: unknown;
  /** Structured position/context, e.g. `{ field: 'log_prob', row: 3, token: 17 }`. */
  details?: Record<string, unknown>;
}

/**
 * The lab's one error type: `code` is stable (match on it), `message` names the argument or field and
 * the position, `details` carries the same position as data, `cause` the underlying error if any.
 */
export class LabError extends Error {
  readonly code: LabErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: LabErrorCode, message: string, options: LabErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LabError';
    this.code = code;
    this.details = options.details;
  }
}

/** Type guard: `e` is a {@link LabError} (the CLI prints these as one line, anything else as an internal error). */
export function isLabError(e: unknown): e is LabError {
  return e instanceof LabError;
}
