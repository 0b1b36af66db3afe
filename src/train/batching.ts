/**
 * The batching of every learner: rollout rows → packed `[B,T]` batch → loss mask → GRPO advantages,
 * as verl's trainer builds `response_mask` and calls `compute_grpo_outcome_advantage` before the
 * actor update. Built on the kernels of tokenLearner.ts ({@link packTranscripts},
 * {@link responseMaskFromRoles}, {@link tokenGroupAdvantages}); a learner calls {@link groupBatch}
 * (or {@link packBatch}, then {@link withGroupAdvantages} when it must look at the mask first, e.g.
 * to skip an update with no loss tokens, or computes per-row advantages of its own).
 */
import type { GroupLabels } from '../core/batch.js';
import type { GroupNormOptions } from '../core/grpo.js';
import {
  type MaskRule,
  type PackedBatch,
  packTranscripts,
  responseMaskFromRoles,
  type Transcript,
  tokenGroupAdvantages,
} from './tokenLearner.js';

export interface PackOptions {
  /** Which tokens the loss sees (default `model_tokens`, verl's `response_mask`). */
  maskRule?: MaskRule;
  /**
   * Edits the `[B,T]` mask in place after the rule and before the advantages: rows the loss leaves
   * out (truncated rows, demonstration rows of a supervised term).
   */
  editMask?: (mask: Float32Array, batch: PackedBatch) => void;
}

/** A packed batch and its `[B,T]` 0/1 loss mask. */
export interface MaskedBatch {
  batch: PackedBatch;
  mask: Float32Array;
}

/** A packed batch, its loss mask and its GRPO advantages (`[B,T]`, 0 where the mask is 0). */
export interface GroupBatch extends MaskedBatch {
  advantages: Float32Array;
}

/** Packs `rows` right-padded into `[B,T]` and builds the loss mask by `options.maskRule`, then `editMask`. */
export function packBatch(rows: readonly Transcript[], options: PackOptions = {}): MaskedBatch {
  const batch = packTranscripts(rows);
  const mask = responseMaskFromRoles(batch, options.maskRule ?? 'model_tokens');
  options.editMask?.(mask, batch);
  return { batch, mask };
}

/** Number of loss tokens of a mask (Σ mask; 0 means the update has nothing to train on). */
export function lossTokenCount(mask: Float32Array): number {
  let n = 0;
  for (let i = 0; i < mask.length; i++) n += mask[i] as number;
  return n;
}

/**
 * Adds GRPO advantages to a masked batch: each row's score on its last token, groups by `index`,
 * core `grpoAdvantage` with `norm` (verl defaults: unbiased std, eps 1e-6, singleton mean 0 / std 1).
 */
export function withGroupAdvantages(
  masked: MaskedBatch,
  scores: ArrayLike<number>,
  index: GroupLabels,
  norm: GroupNormOptions = {},
): GroupBatch {
  const advantages = tokenGroupAdvantages(scores, index, masked.batch, masked.mask, norm);
  return { ...masked, advantages };
}

/**
 * The whole batching of an update: {@link packBatch} then {@link withGroupAdvantages}. `scores`
 * one per row, `index` the group label per row (see rollout.ts `groupLabels` for a K × G rollout).
 */
export function groupBatch(
  rows: readonly Transcript[],
  scores: ArrayLike<number>,
  index: GroupLabels,
  options: PackOptions & { norm?: GroupNormOptions } = {},
): GroupBatch {
  return withGroupAdvantages(packBatch(rows, options), scores, index, options.norm ?? {});
}
