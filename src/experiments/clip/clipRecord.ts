/**
 * The record shape of the `clip` experiment, shared by the experiment (which writes it), its
 * terminal summary (clipSummary.ts) and the docs script (scripts/clipDocTables.ts), so that none of
 * them re-spells a key or re-derives which rows form the headline slice.
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

/** The sweep measures of the headline slice that become metrics, per clip and checkpoint epoch count. */
export const CLIP_SWEEP_METRICS = ['kl_true_mean', 'kl_true_max', 'ratio_max', 'frac_outside_clip'] as const;

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
