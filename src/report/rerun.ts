/**
 * The command that reproduces a record: `labs run --experiment E --seed S [--set k=v]...`, with a
 * `--set` for every config value that differs from the experiment's current default; for an audit
 * record `labs audit PATH [--preset P] [--col-X SOURCE]... [flags]` read back from its config. Shown
 * in reports so a number on a page can be rerun.
 */
import { AUDIT_PRESETS, type AuditPresetName } from '../audit/presets.js';
import { defaultConfig } from '../experiments/options.js';
import { experimentNames, loadExperiment } from '../experiments/registry.js';
import type { SweepRecord } from '../experiments/sweep.js';
import type { JsonValue, MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { seedsDirLabel } from './records.js';

/**
 * The current default config of a registered experiment (what `labs run` uses with no `--set`), or
 * null for an unknown one (e.g. `audit`). The defaults come from `configOf` with no input: an
 * experiment's `options` is a zod object, whose entries are not the defaults.
 */
export async function experimentDefaults(experiment: string): Promise<Record<string, unknown> | null> {
  if (!experimentNames().includes(experiment)) return null;
  return defaultConfig(await loadExperiment(experiment)) as Record<string, unknown>;
}

/** A `--set` value as the shell should see it: plain when safe, else single-quoted. */
function shellValue(v: JsonValue | undefined): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v ?? null);
  return /^[A-Za-z0-9_.,:+\-=/]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `--set k=v` for every config value that differs from `defaults`, in the config's key order. */
function setsOf(
  config: Record<string, JsonValue>,
  defaults: Record<string, unknown>,
  skip?: string,
): string[] {
  return Object.entries(config)
    .filter(([k]) => k !== skip)
    .filter(([k, v]) => !(k in defaults) || JSON.stringify(defaults[k]) !== JSON.stringify(v))
    .map(([k, v]) => `--set ${k}=${shellValue(v)}`);
}

/** `defaults`: the experiment's option defaults by key. `--set`s keep the config's key order. */
export function rerunCommand(record: RunRecord | MultiSeedRecord, defaults: Record<string, unknown>): string {
  const seed = 'runs' in record ? `--seeds ${seedsDirLabel(record.seeds)}` : `--seed ${record.seed}`;
  return ['labs run --experiment', record.experiment, seed, ...setsOf(record.config, defaults)].join(' ');
}

/**
 * `labs run --experiment E --sweep key=v1,v2,... --seeds S [--set k=v]...` for a sweep record: its
 * `config` is the options shared by every point (the swept key, holding its first value, is left to
 * `--sweep`).
 */
export function sweepRerunCommand(record: SweepRecord, defaults: Record<string, unknown>): string {
  const values = record.sweep.values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(',');
  return [
    'labs run --experiment',
    record.experiment,
    `--sweep ${shellValue(`${record.sweep.key}=${values}`)}`,
    `--seeds ${seedsDirLabel(record.seeds)}`,
    ...setsOf(record.config, defaults, record.sweep.key),
  ].join(' ');
}

/**
 * `labs audit ...` for an audit record (src/audit/audit.ts writes its config): the path, the preset
 * unless generic (the CLI default), `--col-<name> SOURCE` for each column read from another source
 * than the preset's, and each option that is not at the CLI's default (`--skip-bad-rows`,
 * `--pass-value` 1, `--fail-value` 0, `--group-size` when it was given rather than inferred,
 * `--reward-weights`, `--scale-rewards` other than group, `--zero-std-tol`, `--quality`/`--independent`).
 * Null when the config lacks a path or names an unknown preset. `--memory-limit` is not recorded.
 */
export function auditRerunCommand(record: RunRecord): string | null {
  const c = record.config;
  const preset = typeof c.preset === 'string' ? AUDIT_PRESETS[c.preset as AuditPresetName] : undefined;
  if (typeof c.path !== 'string' || !preset) return null;
  const parts = ['labs audit', shellValue(c.path)];
  if (preset.name !== 'generic') parts.push(`--preset ${preset.name}`);
  const columns = c.columns && typeof c.columns === 'object' && !Array.isArray(c.columns) ? c.columns : {};
  for (const [col, source] of Object.entries(columns)) {
    if (typeof source !== 'string') continue;
    if ((preset.columns as Record<string, string | undefined>)[col] !== source) {
      parts.push(`--col-${col.replace(/_/g, '-')} ${shellValue(source)}`);
    }
  }
  if (c.skip_bad_rows === true) parts.push('--skip-bad-rows');
  if (typeof c.pass_value === 'number' && c.pass_value !== 1) parts.push(`--pass-value ${c.pass_value}`);
  if (typeof c.fail_value === 'number' && c.fail_value !== 0) parts.push(`--fail-value ${c.fail_value}`);
  if (typeof c.group_size === 'number' && String(c.grouping).includes('given with --group-size')) {
    parts.push(`--group-size ${c.group_size}`);
  }
  if (Array.isArray(c.reward_weights)) parts.push(`--reward-weights ${c.reward_weights.join(',')}`);
  if (typeof c.scale_rewards === 'string' && c.scale_rewards !== 'group') {
    parts.push(`--scale-rewards ${c.scale_rewards}`);
  }
  if (typeof c.zero_std_tol === 'number') parts.push(`--zero-std-tol ${c.zero_std_tol}`);
  const rank = c.rank_columns;
  if (rank && typeof rank === 'object' && !Array.isArray(rank)) {
    parts.push(`--quality ${shellValue(rank.quality)} --independent ${shellValue(rank.independent)}`);
  }
  return parts.join(' ');
}
