/**
 * The `labs audit` options beyond the column mapping and thresholds, declared once here (type,
 * default, range, help) so that src/cli/parse.ts only wires them in:
 *  - `--group-size N` (trl): rows per group, TRL's `num_generations`; default: inferred.
 *  - `--reward-weights W,W,...` (trl): TRL's `reward_weights`, one per reward column.
 *  - `--scale-rewards group|batch|none` (trl): TRL's `scale_rewards` for the recomputed advantage.
 *  - `--zero-std-tol X` (>= 0): also count groups that are zero-variance up to X (std and max − min).
 *  - `--quality COL --independent COL` (both or neither): the ranker audit of all-right groups.
 * and checks that `--pass-value` is above `--fail-value` (both parsed in src/cli/parse.ts).
 */
import { type Command, Option } from 'commander';
import { LabError } from '../core/errors.js';

export interface AuditCliExtra {
  groupSize: number | null;
  rewardWeights: number[] | null;
  scaleRewards: 'group' | 'batch' | 'none';
  zeroStdTol: number | null;
  rankColumns: { quality: string; independent: string } | null;
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
    )
    .option(
      '--zero-std-tol <x>',
      'also count groups that are zero-variance up to x (population std <= x; max - min <= x), x >= 0',
    )
    .option('--quality <column>', "ranker audit: a ranker's quality score (with --independent)")
    .option('--independent <column>', 'ranker audit: an independent quality measure (with --quality)');
}

/**
 * `--pass-value` must be above `--fail-value` (see `checkThresholds` in src/audit/audit.ts): with
 * pass <= fail groups would be misclassified. Checked here, before the dump is read, as a usage
 * error; each value's own finiteness is checked where it is parsed (src/cli/parse.ts).
 */
function checkThresholdFlags(passText: unknown, failText: unknown): void {
  const pass = Number(passText ?? 1);
  const fail = Number(failText ?? 0);
  if (Number.isFinite(pass) && Number.isFinite(fail) && !(pass > fail)) {
    throw new LabError(
      'BAD_CLI',
      `--pass-value ${pass} must be greater than --fail-value ${fail}: an all-equal group at or above the pass value is all_right, at or below the fail value all_wrong`,
      { details: { field: '--pass-value' } },
    );
  }
}

function cliError(flag: string, message: string): LabError {
  return new LabError('BAD_CLI', `${flag} ${message}`, { details: { field: flag } });
}

export function auditExtraOf(o: Record<string, unknown>): AuditCliExtra {
  checkThresholdFlags(o.passValue, o.failValue);
  let groupSize: number | null = null;
  if (o.groupSize !== undefined) {
    const v = Number(o.groupSize);
    if (!Number.isInteger(v) || v < 2 || String(o.groupSize).trim() === '') {
      throw cliError('--group-size', `expects an integer >= 2, got '${String(o.groupSize)}'`);
    }
    groupSize = v;
    if (o.preset !== 'trl') {
      throw cliError(
        '--group-size',
        `applies to --preset trl (contiguous groups), not '${String(o.preset)}'`,
      );
    }
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
  let zeroStdTol: number | null = null;
  if (o.zeroStdTol !== undefined) {
    const text = String(o.zeroStdTol).trim();
    const v = text === '' ? Number.NaN : Number(text);
    if (!Number.isFinite(v) || v < 0) {
      throw cliError('--zero-std-tol', `expects a finite number >= 0, got '${String(o.zeroStdTol)}'`);
    }
    zeroStdTol = v;
  }
  const quality = typeof o.quality === 'string' ? o.quality : null;
  const independent = typeof o.independent === 'string' ? o.independent : null;
  if ((quality === null) !== (independent === null)) {
    throw cliError(
      quality === null ? '--quality' : '--independent',
      'is needed too: the ranker audit compares two columns',
    );
  }
  for (const [flag, v] of [
    ['--quality', quality],
    ['--independent', independent],
  ] as const) {
    if (v !== null && v.trim() === '') throw cliError(flag, 'expects a column name');
  }
  return {
    rankColumns: quality !== null && independent !== null ? { quality, independent } : null,
    zeroStdTol,
    groupSize,
    rewardWeights,
    scaleRewards: (o.scaleRewards ?? 'group') as AuditCliExtra['scaleRewards'],
  };
}
