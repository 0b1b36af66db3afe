/**
 * The record shape of the `clip` experiment, shared by the experiment (which writes it) and its
 * terminal summary (clipSummary.ts), so that neither re-spells a key or re-derives which rows form
 * the headline slice; the docs tables read the metrics named here through docs/findings/clip.json.
 */
import type { JsonValue } from '../types.js';

/** One row of `tables.sweep`: an arm of the sweep after one checkpoint epoch count. */
export type SweepRow = Record<string, JsonValue>;

/** The sweep columns shown per clip after the last epoch (beside the mean true KL). */
export const CLIP_TAIL_METRICS = [
  'kl_true_max',
  'ratio_max',
  'ratio_p99',
  'frac_outside_clip',
  'clipped_moved_further',
  'pg_clipfrac',
  'ppo_kl',
  'update_norm',
] as const;

/**
 * The sweep measures of the headline slice that become metrics, per clip and checkpoint epoch count
 * (`sweepMetricKey`): the true KL, the ratio tails, the clip's bookkeeping, verl's `ppo_kl` as computed
 * at the policy and as logged, and the parameter update's norm, so the findings manifest's tables and
 * claims can read every one of them per seed.
 */
export const CLIP_SWEEP_METRICS = ['kl_true_mean', ...CLIP_TAIL_METRICS, 'ppo_kl_logged'] as const;

/** The sweep measures of the optimizer grid that become metrics at the last checkpoint (`gridMetricKey`). */
export const CLIP_GRID_METRICS = ['kl_true_mean', 'ratio_max', 'frac_outside_clip', 'update_norm'] as const;

/**
 * `metrics['<measure>.grid_<clip>_<optimizer>_lr<lr>_mb<mini_batches>_dual_<on|off>']`: one cell of the
 * optimizer x lr x mini-batch x dual-clip grid after the last checkpoint epoch count.
 */
export function gridMetricKey(measure: string, row: SweepRow): string {
  return `${measure}.grid_${row.clip}_${row.optimizer}_lr${row.lr}_mb${row.mini_batches}_dual_${row.dual_clip ? 'on' : 'off'}`;
}

/** What fixes the headline slice: the sweep's first optimizer, lr, mini-batch count and dual clip. */
export interface HeadlineSlice {
  optimizer?: JsonValue;
  lr?: JsonValue;
  mini_batches?: JsonValue;
  dual_clip?: JsonValue;
}

/**
 * Whether sweep row (or arm) `r` is in the headline slice: the optimizer, lr, mini-batch count and
 * dual clip of the sweep's first row (`first`), every clip and epoch count.
 */
export function inHeadlineSlice(first: HeadlineSlice, r: HeadlineSlice): boolean {
  return (
    r.optimizer === first.optimizer &&
    r.lr === first.lr &&
    r.mini_batches === first.mini_batches &&
    r.dual_clip === first.dual_clip
  );
}

/** `metrics['<measure>.<clip>_e<epochs>']`: a measure of the headline slice at one clip and epoch count. */
export function sweepMetricKey(measure: string, clip: string, epochs: number): string {
  return `${measure}.${clip}_e${epochs}`;
}

/** `metrics['kl_true_mean.<clip>_e<epochs>_minus_none_e<epochs>']`: paired true KL, clip minus no clip. */
export function klMinusNoneKey(clip: string, epochs: number): string {
  return `kl_true_mean.${clip}_e${epochs}_minus_none_e${epochs}`;
}

/** The mean of `xs` (NaN for none). */
export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : Number.NaN;
}

/** A number of the record, rounded to 6 significant digits. */
export function round6(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}
