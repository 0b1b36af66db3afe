/**
 * Dump layouts the audit understands, as column mappings onto one canonical row:
 *
 *   step (integer), group (label; a group is the pair (step, group)), task, reward (finite number),
 *   and optionally response (text; its length in characters), action_tokens, env_tokens,
 *   truncated (boolean), mask (per-token 0/1 array: action tokens = Σ mask, env tokens = len − Σ mask),
 *   advantage (the advantage the trainer logged).
 *
 * - `verl`: `trainer.rollout_data_dir` — one `<step>.jsonl` per training step, written by
 *   `RayPPOTrainer._dump_generations` with keys `input`, `output`, `gts`, `score`, `step` plus any
 *   reward extras. Group = (step, input), task = input.
 * - `trl`: `completions_<step>.parquet` files written by TRL's GRPOTrainer when `log_completions` is on:
 *   `step`, `prompt`, `completion`, one numeric column per reward function, `advantage`.
 *   Group = a block of num_generations consecutive rows of a file (as TRL groups them; inferred from
 *   the runs of equal prompts or given with --group-size), task = prompt, reward = Σ w_i · column_i
 *   over the reward columns with NaN/None skipped (TRL's `(rewards_per_func * reward_weights)
 *   .nansum(dim=1)`; w from --reward-weights, default 1) unless `--reward COL` names one column.
 * - `generic`: JSONL or Parquet with the canonical names themselves (see docs/cli.md, "labs audit").
 *
 * Every mapping can be overridden per column (`--col-<name> SOURCE`).
 */
import { LabError } from '../core/errors.js';

export type AuditPresetName = 'verl' | 'trl' | 'generic';

export const CANONICAL_COLUMNS = [
  'step',
  'group',
  'task',
  'reward',
  'response',
  'action_tokens',
  'env_tokens',
  'truncated',
  'mask',
  'advantage',
] as const;
export type CanonicalColumn = (typeof CANONICAL_COLUMNS)[number];

/**
 * Canonical columns plus the ranker audit's two (read only when asked for, with `--quality COL`
 * and `--independent COL`; never part of a preset's default mapping).
 */
export type AuditColumn = CanonicalColumn | 'quality' | 'independent';

export type DumpFormat = 'jsonl' | 'parquet';

export interface AuditPreset {
  name: AuditPresetName;
  /** Which files of a directory belong to the dump. */
  filePattern: RegExp;
  /** The file format; `by-extension` lets `.jsonl` and `.parquet` both through (one format per dump). */
  format: DumpFormat | 'by-extension';
  /** Source column of each canonical column this layout has. */
  columns: Partial<Record<CanonicalColumn, string>>;
  /** Canonical columns every row must have. */
  required: readonly CanonicalColumn[];
  /**
   * `column`: the reward is `columns.reward`. `sum-of-numeric-columns`: TRL logs one column per
   * reward function; the reward is their sum (columns that are not step/advantage and are numeric).
   */
  reward: 'column' | 'sum-of-numeric-columns';
  /** Advantage convention to recompute and compare with the logged advantage, if the layout logs one. */
  recompute: 'trl' | null;
  /**
   * `label`: a group is (step, group label). `contiguous`: a group is a block of num_generations
   * consecutive rows (TRL's `rewards.view(-1, num_generations)`), so one prompt drawn twice in a step
   * makes two groups, as in TRL.
   */
  grouping: 'label' | 'contiguous';
}

export const AUDIT_PRESETS: Record<AuditPresetName, AuditPreset> = {
  verl: {
    name: 'verl',
    filePattern: /\.jsonl$/,
    format: 'jsonl',
    columns: { step: 'step', group: 'input', task: 'input', reward: 'score', response: 'output' },
    required: ['step', 'group', 'task', 'reward'],
    reward: 'column',
    recompute: null,
    grouping: 'label',
  },
  trl: {
    name: 'trl',
    filePattern: /^completions_.*\.parquet$/,
    format: 'parquet',
    columns: {
      step: 'step',
      group: 'prompt',
      task: 'prompt',
      response: 'completion',
      advantage: 'advantage',
    },
    required: ['step', 'group', 'task', 'reward'],
    reward: 'sum-of-numeric-columns',
    recompute: 'trl',
    grouping: 'contiguous',
  },
  generic: {
    name: 'generic',
    filePattern: /\.(jsonl|parquet)$/,
    format: 'by-extension',
    columns: Object.fromEntries(CANONICAL_COLUMNS.map((c) => [c, c])) as Record<CanonicalColumn, string>,
    required: ['step', 'group', 'task', 'reward'],
    reward: 'column',
    recompute: null,
    grouping: 'label',
  },
};

/** TRL columns that are never reward functions. */
export const TRL_NON_REWARD_COLUMNS = new Set(['step', 'advantage', 'mode', 'prompt', 'completion', 'image']);

export function auditPreset(name: string): AuditPreset {
  const preset = (AUDIT_PRESETS as Record<string, AuditPreset | undefined>)[name];
  if (!preset) {
    throw new LabError('UNKNOWN_MODE', `--preset: unknown preset '${name}' (expected verl, trl or generic)`, {
      details: { field: '--preset', value: name },
    });
  }
  return preset;
}

/**
 * The effective mapping: the preset's columns with `--col-*` overrides and `--reward` applied.
 * Returns the mapping and whether the reward is one column or the TRL sum.
 */
export function resolveColumns(
  preset: AuditPreset,
  overrides: Readonly<Record<string, string>>,
  reward: string | null,
): { columns: Partial<Record<CanonicalColumn, string>>; rewardRule: AuditPreset['reward'] } {
  const columns: Partial<Record<CanonicalColumn, string>> = { ...preset.columns };
  for (const [key, source] of Object.entries(overrides)) {
    if (!(CANONICAL_COLUMNS as readonly string[]).includes(key)) {
      throw new LabError(
        'BAD_ARGUMENT',
        `--col-${key}: unknown column '${key}' (expected ${CANONICAL_COLUMNS.join(', ')})`,
        { details: { field: `--col-${key}` } },
      );
    }
    if (source.trim() === '') {
      throw new LabError('BAD_ARGUMENT', `--col-${key}: empty source column name`, {
        details: { field: `--col-${key}` },
      });
    }
    columns[key as CanonicalColumn] = source;
  }
  let rewardRule = preset.reward;
  if (reward !== null) {
    columns.reward = reward;
    rewardRule = 'column';
  } else if (overrides.reward !== undefined) {
    rewardRule = 'column';
  }
  return { columns, rewardRule };
}
