/** Terminal summary of a `truncation` run: per-policy table and the conclusion. */
import { formatArmsRecord } from '../armSummary.js';
import type { RunRecord } from '../types.js';

export function formatTruncation(record: RunRecord): string {
  return formatArmsRecord(
    record,
    `truncated trajectories (budget ${record.config.budget}): zero_score vs drop vs mask vs DAPO soft overlong penalty (buffer ${record.config.overlong_buffer}); unbounded = budget ${record.config.unbounded_budget}`,
    [
      'arm',
      'eval_success',
      'eval_success_unbounded',
      'truncation_rate',
      'verify_rate',
      'mean_length',
      'train_truncation_rate',
      'train_verify_rate',
    ],
  );
}
