/** Terminal summary of a `saturation` run: the arms table, the ranker audit and what the arms show. */
import { formatArmsRecord } from '../armSummary.js';
import type { RunRecord } from '../types.js';

export function formatSaturation(record: RunRecord): string {
  const c = record.config;
  return formatArmsRecord(
    record,
    `all-right groups after ${c.warmup_updates} binary warm-up updates: binary GRPO vs redistribution by a ranker (lambda ${c.lambda}); robust = tool slip rate ${c.robust_tool_error_rate}; each arm trains the "updates" below after the warm-up`,
    [
      'arm',
      'gradient_group_fraction_after_saturation',
      'verify_rate',
      'mean_length',
      'eval_success',
      'eval_success_robust',
      'ranker_spearman',
    ],
    {
      name: 'ranker_audit',
      columns: [
        'arm',
        'groups',
        'all_right_groups',
        'tied_groups',
        'groups_with_spearman',
        'negative_spearman_groups',
      ],
    },
  );
}
