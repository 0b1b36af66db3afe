/**
 * Terminal summary of a `filter` run: the setup, the arms table, the zero-variance rules table, the
 * caveats, then the measured headline.
 */
import { rowsTable } from '../armSummary.js';
import { formatNumber } from '../text.js';
import type { RunRecord } from '../types.js';
import { ZERO_VARIANCE_RULE_METRICS } from './zeroVarianceRules.js';

export function formatFilter(record: RunRecord): string {
  const c = record.config;
  const lines: string[] = [];
  lines.push(`${record.experiment}  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`);
  lines.push(
    `zero-variance groups, env=${c.env} policy=${c.policy}: ${c.updates} updates x ${c.groups_per_update} groups x ${c.group_size} samples, reward=${c.reward}, rule ${c.zero_variance_rule} (tol ${c.zero_variance_tol}), kl_beta ${c.kl_beta}, max ${c.max_extra_gen_batches} extra generation batches`,
  );
  lines.push(
    '',
    rowsTable(record.tables.arms ?? [], [
      'arm',
      'success_per_update_auc',
      'success_per_generated_auc',
      'generated_per_update',
      'gradient_sample_fraction',
      'denominator_mean',
      'kl_ref',
    ]),
  );
  const rules = record.tables.zero_variance_rules ?? [];
  if (rules.length) {
    lines.push(
      '',
      `zero_variance_rules (partial credit + float noise ${c.reward_noise}):`,
      rowsTable(rules, ['rule', 'scope', 'tol', ...ZERO_VARIANCE_RULE_METRICS]),
    );
  }
  const [conclusion, ...rest] = record.notes ?? [];
  for (const note of rest) lines.push(`note: ${note}`);
  if (conclusion) lines.push('', conclusion);
  return lines.join('\n');
}
