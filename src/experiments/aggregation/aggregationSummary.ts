/** Terminal summary of an `aggregation` run: per-mode table, weight by length, the conclusion. */
import { formatArmsRecord } from '../armSummary.js';
import type { RunRecord } from '../types.js';

export function formatAggregation(record: RunRecord): string {
  return formatArmsRecord(
    record,
    "verl's four loss_agg_modes on the same env, learner and random streams",
    [
      'arm',
      'eval_success',
      'success_mean_length',
      'failed_mean_length',
      'think_rate',
      'eval_verify_rate',
      'failed_long_short_weight_ratio',
    ],
    {
      name: 'weight_by_length',
      columns: [
        'arm',
        'length',
        'trajectories',
        'failed_trajectories',
        'weight_per_token',
        'failed_weight_per_token',
        'raw_weight_per_token',
      ],
    },
  );
}
