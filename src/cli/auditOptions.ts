/**
 * The `labs audit` options beyond the column mapping and thresholds, declared once here (type,
 * default, range, help) so that src/cli/parse.ts only wires them in:
 *  - `--group-size N` (trl): rows per group, TRL's `num_generations`; default: inferred.
 *  - `--reward-weights W,W,...` (trl): TRL's `reward_weights`, one per reward column.
 *  - `--scale-rewards group|batch|none` (trl): TRL's `scale_rewards` for the recomputed advantage.
 */
import { type Command, Option } from 'commander';
import { LabError } from '../core/errors.js';

export interface AuditCliExtra {
  groupSize: number | null;
  rewardWeights: number[] | null;
  scaleRewards: 'group' | 'batch' | 'none';
}

export function addAuditExtraOptions(audit: Command): void {
  audit
    .option(
      '--group-size <n>',
      'trl: rows per group (num_generations); default: inferred from the runs of equal prompts',
    )
    .option(
      '--reward-weights <w,...>',
      "trl: TRL's reward_weights, one per reward column (order of config.reward_columns)",
    )
    .addOption(
      new Option(
        '--scale-rewards <mode>',
        "trl: TRL's scale_rewards for the recomputed advantage (none = False)",
      )
        .choices(['group', 'batch', 'none'])
        .default('group'),
    );
}

function cliError(flag: string, message: string): LabError {
  return new LabError('BAD_CLI', `${flag} ${message}`, { details: { field: flag } });
}

export function auditExtraOf(o: Record<string, unknown>): AuditCliExtra {
  let groupSize: number | null = null;
  if (o.groupSize !== undefined) {
    const v = Number(o.groupSize);
    if (!Number.isInteger(v) || v < 2 || String(o.groupSize).trim() === '') {
      throw cliError('--group-size', `expects an integer >= 2, got '${String(o.groupSize)}'`);
    }
    groupSize = v;
  }
  let rewardWeights: number[] | null = null;
  if (o.rewardWeights !== undefined) {
    const parts = String(o.rewardWeights).split(',');
    rewardWeights = parts.map((t) => (t.trim() === '' ? Number.NaN : Number(t)));
    if (!rewardWeights.every((w) => Number.isFinite(w))) {
      throw cliError(
        '--reward-weights',
        `expects comma-separated finite numbers, got '${String(o.rewardWeights)}'`,
      );
    }
  }
  return {
    groupSize,
    rewardWeights,
    scaleRewards: (o.scaleRewards ?? 'group') as AuditCliExtra['scaleRewards'],
  };
}
