/**
 * The options of `labs audit`, declared once (commandOptions.ts says what an entry declares): the
 * base options and those of TRL dumps and the ranker audit here, the logged-vs-recomputed
 * comparison's in metricsOptions.ts, the token-level presets' in tokenAuditOptions.ts, one table
 * `AUDIT_OPTIONS`. An option's `presets` say which `--preset` values accept it; given with another,
 * it is refused (a flag the audit would ignore is never accepted silently). The checks across
 * options are `checkAuditOptions`.
 *  - `--group-size N` (trl): rows per group, TRL's `num_generations`; default: inferred.
 *  - `--reward-weights W,W,...` (trl): TRL's `reward_weights`, one per reward column.
 *  - `--scale-rewards group|batch|none` (trl): TRL's `scale_rewards` for the recomputed advantage.
 *  - `--zero-std-tol X` (>= 0): also count groups that are zero-variance up to X (std and max − min).
 *  - `--quality COL --independent COL` (both or neither): the ranker audit of all-right groups.
 */
import { AUDIT_PRESETS, type AuditPresetName, CANONICAL_COLUMNS } from '../audit/presets.js';
import { TOKEN_PRESETS, type TokenPresetName } from '../audit/tokens/presetNames.js';
import { LabError } from '../core/errors.js';
import {
  choiceOption,
  familyOption,
  flagError,
  flagOption,
  numberListOption,
  numberOption,
  type OptionValues,
  parsedOption,
  textOption,
  withHelp,
} from './commandOptions.js';
import { METRICS_OPTIONS, REWARD_ONLY } from './metricsOptions.js';
import { FORCE_OPTION, JSON_OPTION, OUT_OPTION } from './sharedOptions.js';
import { TOKEN_OPTIONS } from './tokenAuditOptions.js';

/** `--memory-limit`: a size DuckDB understands (`512MB`, `1.5GB`, `2GiB`). */
function memoryLimit(value: string): string {
  const text = value.trim();
  if (!/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.test(text))
    throw flagError('--memory-limit', `expects a size like 512MB or 2GB, got '${text}'`);
  return text;
}

/** Only TRL's dumps group contiguously, sum weighted reward columns and recompute the advantage. */
const trlOnly = (why: string) => ({
  presets: ['trl'],
  refusal: (preset: string) => `applies to --preset trl (${why}), not '${preset}'`,
});

export const AUDIT_OPTIONS = {
  preset: choiceOption(
    '--preset',
    'preset',
    [...Object.keys(AUDIT_PRESETS), ...TOKEN_PRESETS],
    'generic',
    'dump layout',
    { selectsPreset: true },
  ),
  json: JSON_OPTION,
  out: withHelp(OUT_OPTION, 'also write the result as record.json into this directory'),
  force: FORCE_OPTION,
  skipBadRows: flagOption('--skip-bad-rows', 'skip malformed rows and count them instead of failing', {
    rerun: true,
  }),
  reward: textOption(
    '--reward',
    'column',
    'use this column as the reward (trl: instead of summing the reward columns)',
    { ...REWARD_ONLY, rerun: true },
  ),
  passValue: numberOption(
    '--pass-value',
    'x',
    'reward at or above which a sample is correct (all-equal group: all_right)',
    { default: 1, ...REWARD_ONLY, rerun: true },
  ),
  failValue: numberOption('--fail-value', 'x', 'reward at or below which an all-equal group is all_wrong', {
    default: 0,
    ...REWARD_ONLY,
    rerun: true,
  }),
  memoryLimit: parsedOption(
    '--memory-limit',
    'size',
    "DuckDB memory limit, e.g. '1GB' (beyond it DuckDB spills to disk)",
    memoryLimit,
  ),
  groupSize: numberOption(
    '--group-size',
    'n',
    'trl: rows per group (num_generations); default: inferred from the runs of equal prompts',
    { integer: true, min: 2, ...trlOnly('contiguous groups'), rerun: true },
  ),
  rewardWeights: numberListOption(
    '--reward-weights',
    'W,...',
    "trl: TRL's reward_weights, one per reward column (order of config.reward_columns)",
    'comma-separated finite numbers',
    { ...trlOnly("TRL's weighted sum of reward columns"), rerun: true },
  ),
  scaleRewards: choiceOption(
    '--scale-rewards',
    'mode',
    ['group', 'batch', 'none'],
    'group',
    "trl: TRL's scale_rewards for the recomputed advantage (none = False)",
    { ...trlOnly("it recomputes TRL's advantage"), rerun: true },
  ),
  zeroStdTol: numberOption(
    '--zero-std-tol',
    'x',
    'also count groups that are zero-variance up to x (population std <= x; max - min <= x), x >= 0',
    { min: 0, ...REWARD_ONLY, rerun: true },
  ),
  quality: textOption('--quality', 'column', "ranker audit: a ranker's quality score (with --independent)", {
    nonEmpty: 'expects a column name',
    ...REWARD_ONLY,
    rerun: true,
  }),
  independent: textOption(
    '--independent',
    'column',
    'ranker audit: an independent quality measure (with --quality)',
    { nonEmpty: 'expects a column name', ...REWARD_ONLY, rerun: true },
  ),
  ...METRICS_OPTIONS,
  ...TOKEN_OPTIONS,
  // One `--col-<name> SOURCE` remapping flag per canonical audit column.
  columns: {
    ...familyOption('--col-', CANONICAL_COLUMNS, 'source', (name) => `read '${name}' from this column`),
    rerun: true,
  },
} as const;

export type AuditValues = OptionValues<typeof AUDIT_OPTIONS>;

export interface AuditCliExtra {
  groupSize: number | null;
  rewardWeights: number[] | null;
  scaleRewards: 'group' | 'batch' | 'none';
  zeroStdTol: number | null;
  rankColumns: { quality: string; independent: string } | null;
}

/**
 * The checks across `labs audit`'s options (each value and each preset rule is checked by
 * readOptions): `--pass-value` above `--fail-value` (see `checkThresholds` in src/audit/audit.ts:
 * with pass <= fail groups would be misclassified), `--reward-weights` not with a single reward
 * column, `--quality` and `--independent` together and on two columns.
 */
export function checkAuditOptions(o: AuditValues): void {
  if (!(o.passValue > o.failValue)) {
    throw new LabError(
      'BAD_CLI',
      `--pass-value ${o.passValue} must be greater than --fail-value ${o.failValue}: an all-equal group at or above the pass value is all_right, at or below the fail value all_wrong`,
      { details: { field: '--pass-value' } },
    );
  }
  if (o.rewardWeights !== null) {
    const single = o.reward !== null ? '--reward' : o.columns.reward !== undefined ? '--col-reward' : null;
    if (single) {
      throw flagError(
        '--reward-weights',
        `weights TRL's reward columns, but ${single} reads the reward from one column: give one or the other`,
      );
    }
  }
  if ((o.quality === null) !== (o.independent === null)) {
    throw flagError(
      o.quality === null ? '--quality' : '--independent',
      'is needed too: the ranker audit compares two columns',
    );
  }
  if (o.quality !== null && o.quality === o.independent) {
    throw flagError(
      '--independent',
      `names the same column as --quality ('${o.quality}'): a column agrees with itself (a correlation of 1 measures nothing)`,
    );
  }
}

/** The TRL and ranker options as the audit takes them. */
export function auditExtraOf(o: AuditValues): AuditCliExtra {
  const { quality, independent } = o;
  return {
    rankColumns: quality !== null && independent !== null ? { quality, independent } : null,
    zeroStdTol: o.zeroStdTol,
    groupSize: o.groupSize,
    rewardWeights: o.rewardWeights,
    scaleRewards: o.scaleRewards as AuditCliExtra['scaleRewards'],
  };
}

/** The preset given, typed. */
export function presetOf(o: AuditValues): AuditPresetName | TokenPresetName {
  return o.preset as AuditPresetName | TokenPresetName;
}
