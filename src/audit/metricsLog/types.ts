/** One logged scalar: the step it was logged at, the metric's name as the run logged it, its value. */
export interface ScalarRow {
  step: number;
  metric: string;
  value: number;
  /** Seconds since the epoch, when the log has it (TensorBoard `wall_time`, prime-rl `time`, W&B `_timestamp`). */
  wallTime?: number;
}

export type MetricsLogFormat =
  | 'tensorboard'
  | 'wandb-csv'
  | 'wandb-history-jsonl'
  | 'prime-rl-jsonl'
  | 'verl-file-jsonl';

/** What a reader returns: the rows, and notes on what it could not read (never silently dropped). */
export interface ScalarLog {
  files: string[];
  formats: MetricsLogFormat[];
  rows: ScalarRow[];
  notes: string[];
}
