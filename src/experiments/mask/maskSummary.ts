/** Terminal summary of a `mask` run: per-arm table, a sample group's token accounting, the conclusion. */
import { formatArmsRecord } from '../armSummary.js';
import type { RunRecord } from '../types.js';

export function formatMask(record: RunRecord): string {
  return formatArmsRecord(
    record,
    `response mask: correct (model tokens 1) vs flipped (environment tokens also 1), loss_agg_mode ${record.config.loss_agg_mode}`,
    [
      'arm',
      'eval_success',
      'observation_token_action_rate',
      'protocol_error_rate',
      'action_tokens_per_trajectory',
      'env_tokens_per_trajectory',
      'loss_tokens_per_trajectory',
      'mean_loss_denominator',
    ],
    {
      name: 'trajectory_accounting',
      columns: [
        'arm',
        'status',
        'length',
        'action_tokens',
        'env_tokens',
        'loss_tokens',
        'advantage',
        'total_weight',
      ],
    },
  );
}
