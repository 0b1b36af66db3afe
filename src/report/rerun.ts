/**
 * The command that reproduces a record: `labs run --experiment E --seed S [--set k=v]...`, with a
 * `--set` for every config value that differs from the experiment's current default. Shown in
 * reports so a number on a page can be rerun (for registered experiments only: not `audit` records).
 */
import type { JsonValue, MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { seedsDirLabel } from './records.js';

/** A `--set` value as the shell should see it: plain when safe, else single-quoted. */
function shellValue(v: JsonValue | undefined): string {
  const text = typeof v === 'string' ? v : JSON.stringify(v ?? null);
  return /^[A-Za-z0-9_.,:+\-=/]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** `defaults`: the experiment's option defaults by key. `--set`s keep the config's key order. */
export function rerunCommand(record: RunRecord | MultiSeedRecord, defaults: Record<string, unknown>): string {
  const seed = 'runs' in record ? `--seeds ${seedsDirLabel(record.seeds)}` : `--seed ${record.seed}`;
  const sets = Object.entries(record.config)
    .filter(([k, v]) => !(k in defaults) || JSON.stringify(defaults[k]) !== JSON.stringify(v))
    .map(([k, v]) => `--set ${k}=${shellValue(v)}`);
  return ['labs run --experiment', record.experiment, seed, ...sets].join(' ');
}
