/**
 * The corrections the `mismatch` experiment compares (issue 30), each a thin call of the kernel that
 * reproduces a framework's code: given the trainer's full-precision old log-probs `old`, the engine's
 * behaviour log-probs `engine` and the response mask (`[B,T]`), what the PPO update receives — the
 * old log-probs of the ratio, per-token IS weights (or none) and the mask after rejection.
 *
 *  - `none`: engine log-probs ignored (decoupled PPO without correction; ratio against `old`).
 *  - `bypass`: the engine's log-probs ARE the old log-probs (verl bypass mode: `rollout_log_probs`
 *    used as `old_log_prob`); the PPO clip then acts on π/π_engine.
 *  - `token_tis`: verl `rollout_is=token`, `rollout_is_threshold` τ (truncated token IS).
 *  - `seq_tis`: verl `rollout_is=sequence`, τ (truncated sequence IS).
 *  - `icepop`: OpenRLHF `is_correction_type=icepop` [lo, hi] (token ratio kept as weight inside the
 *    band, token masked outside; IcePop).
 *  - `seq_mask`: verl `rollout_rs=seq_sum_k1`, threshold `lo_hi` (the sequence ratio outside [lo, hi]
 *    masks the whole sequence; no weight: sequence masking, MIS). Default 0.5_2.0, verl's
 *    `decoupled_seq_is_rs` preset's rejection threshold.
 *  - `geo`: verl `rollout_rs=seq_mean_k1`, threshold `lo_hi` (geometric-mean ratio rejection);
 *    default 0.999_1.001, verl's `decoupled_geo_rs` preset.
 *  - `trl_seq_mask`: TRL `vllm_importance_sampling_mode=sequence_mask` (TRL's default), clip_max C
 *    (sequence ratio as weight, 0 above C).
 */
import type { Shape2 } from '../core/batch.js';
import { openrlhfVllmImportanceSampling } from '../core/openrlhfVllmIs.js';
import { rolloutCorrection } from '../core/rolloutCorrection.js';
import { trlVllmImportanceSampling } from '../core/trlVllmIs.js';

/** The arms, in the order tables list them. */
export const MISMATCH_ARMS = [
  'none',
  'bypass',
  'token_tis',
  'seq_tis',
  'icepop',
  'seq_mask',
  'geo',
  'trl_seq_mask',
] as const;
export type MismatchArm = (typeof MISMATCH_ARMS)[number];

/** The correction thresholds (the experiment's options; checked there: lo < hi, all > 0). */
export interface CorrectionThresholds {
  /** verl `rollout_is_threshold` of token_tis and seq_tis. */
  tisThreshold: number;
  icepopLo: number;
  icepopHi: number;
  seqMaskLo: number;
  seqMaskHi: number;
  geoLo: number;
  geoHi: number;
  /** TRL `vllm_importance_sampling_clip_max`. */
  trlClipMax: number;
}

/** What the PPO update receives from a correction. */
export interface CorrectedBatch {
  /** Old log-probs of the PPO ratio (`old`, or `engine` for bypass). */
  oldForLoss: Float64Array;
  /** Per-token IS weights multiplied into the loss, or null. */
  weights: Float32Array | Float64Array | null;
  /** The response mask after rejection (a copy when nothing is rejected). */
  mask: Float32Array;
}

/**
 * Applies `arm` to one batch (see the file comment for the kernel each arm calls). Inputs `[B,T]`
 * (`shape`), finite where `mask` is 1. Errors: the kernels' (EMPTY_MASK, NON_FINITE, BAD_OPTION_VALUE).
 */
export function applyCorrection(
  arm: MismatchArm,
  old: Float64Array,
  engine: Float64Array,
  mask: Float32Array,
  shape: Shape2,
  t: CorrectionThresholds,
): CorrectedBatch {
  const inputs = { oldLogProb: old, rolloutLogProb: engine, responseMask: mask };
  switch (arm) {
    case 'none':
      return { oldForLoss: old, weights: null, mask: Float32Array.from(mask) };
    case 'bypass':
      return { oldForLoss: engine, weights: null, mask: Float32Array.from(mask) };
    case 'token_tis':
    case 'seq_tis': {
      const level = arm === 'token_tis' ? 'token' : 'sequence';
      const r = rolloutCorrection(inputs, shape, { is: { level, threshold: t.tisThreshold } });
      return { oldForLoss: old, weights: r.weights, mask: r.mask };
    }
    case 'seq_mask':
    case 'geo': {
      const rolloutRs = arm === 'seq_mask' ? 'seq_sum_k1' : 'seq_mean_k1';
      const threshold = arm === 'seq_mask' ? `${t.seqMaskLo}_${t.seqMaskHi}` : `${t.geoLo}_${t.geoHi}`;
      const r = rolloutCorrection(inputs, shape, { rejection: { rolloutRs, threshold } });
      return { oldForLoss: old, weights: null, mask: r.mask };
    }
    case 'icepop': {
      const r = openrlhfVllmImportanceSampling(inputs, shape, {
        type: 'icepop',
        low: t.icepopLo,
        high: t.icepopHi,
      });
      return { oldForLoss: old, weights: r.weights, mask: r.mask };
    }
    case 'trl_seq_mask': {
      const r = trlVllmImportanceSampling(inputs, shape, { mode: 'sequence_mask', clipMax: t.trlClipMax });
      return { oldForLoss: old, weights: r.weights, mask: r.mask };
    }
  }
}
