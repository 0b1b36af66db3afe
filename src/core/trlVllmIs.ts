/**
 * TRL's correction of the vLLM–trainer mismatch in GRPO: `vllm_importance_sampling_mode` with its
 * bounds, and the `sampling/...` metrics TRL logs for it. Reproduces TRL commit
 * f2cd57710ae345ea6428ae95363267fcf38a3dc8 (2026-07-24), `trl/trainer/grpo_trainer.py`,
 * `GRPOTrainer._generate_and_score_completions` (the block "Compute the importance sampling ratio
 * when using vLLM", lines 2578-2623, and the metrics at lines 2779-2813); options and defaults from
 * `trl/trainer/grpo_config.py` (`GRPOConfig`, lines 915-952 and `__post_init__` 1122-1150). The
 * weights multiply the per-token loss at line 3118. Golden cases: `test/golden/trl-openrlhf-is.json`
 * from `scripts/golden/trl_openrlhf_is.py`, a line-by-line numpy transcription.
 *
 * With `m` the loss mask (TRL: `completion_mask * tool_mask`), old = the trainer's log-probs
 * recomputed before the update (`old_per_token_logps`), rollout = vLLM's (`sampling_per_token_logps`):
 *   d_t = (old_t − rollout_t)·m_t                          (no clamp of the log-ratio)
 *   token_*:    r_t = exp(d_t)                              one ratio per token
 *   sequence_*: r_b = exp(Σ_t d_t)                          the SUM of log-ratios (a product of ratios,
 *                                                           not a geometric mean), one per row
 *   *_truncate: r ← clamp(r, C_min, C_max)                  (an unset bound is no bound)
 *   *_mask:     r ← 0 where r < C_min or r > C_max          (bounds inclusive: r = C_max is kept)
 * `C_max` = `vllm_importance_sampling_clip_max` (default 3.0; the deprecated
 * `vllm_importance_sampling_cap` sets it), `C_min` = `vllm_importance_sampling_clip_min` (default None).
 * TRL's default mode is `sequence_mask`.
 *
 * Metrics under TRL's names, as one process logs them:
 *   sampling/sampling_logp_difference/{mean,max}: plain mean / max of |old − rollout| over loss-mask tokens;
 *   sampling/importance_sampling_ratio/{min,mean,max}: of the ratios AFTER truncation or masking, over
 *   loss-mask tokens (token modes) or over EVERY row, rows without a loss token included (their
 *   ratio is clamp(exp(0)) = 1; sequence modes flatten the (B,1) tensor).
 * With several processes TRL logs the mean over processes of each process's mean (max of maxes,
 * min of mins), which equals these values only when the processes hold equal token counts.
 *
 * Differences from TRL (src/core/DEVIATIONS.md, "Framework corrections"): NaN/Inf where the mask is 0
 * is never read (TRL's `(old − rollout)·m` turns it into NaN); a non-finite weight at a loss token
 * (exp overflows past a log-ratio of 709.8 in float64 when `C_max` is unset; TRL's float32 overflows
 * past 88.7) is a NON_FINITE error, not an Inf in the loss; bounds below 0 are refused.
 */
import type { Shape2 } from './batch.js';
import {
  type CorrectionOutOptions,
  correctionEntry,
  correctionSummaryUnchecked,
  type FrameworkCorrectionResult,
} from './correctionSummary.js';
import { LabError } from './errors.js';
import type { RolloutLogProbs } from './rolloutCorrection.js';

/** TRL `vllm_importance_sampling_mode` values. */
export type TrlVllmIsMode = 'token_truncate' | 'token_mask' | 'sequence_truncate' | 'sequence_mask';

/** Every `vllm_importance_sampling_mode` TRL accepts, in TRL's order. */
export const TRL_VLLM_IS_MODES: readonly TrlVllmIsMode[] = Object.freeze([
  'token_truncate',
  'token_mask',
  'sequence_truncate',
  'sequence_mask',
]);

export interface TrlVllmIsOptions extends CorrectionOutOptions {
  /** `vllm_importance_sampling_mode`. Default 'sequence_mask' (TRL's). */
  mode?: TrlVllmIsMode;
  /** `vllm_importance_sampling_clip_max` C_max (null: no upper bound). Default 3.0. */
  clipMax?: number | null;
  /** `vllm_importance_sampling_clip_min` C_min (null: no lower bound). Default null. */
  clipMin?: number | null;
}

/** TRL's defaults at the cited commit. */
export const TRL_VLLM_IS_DEFAULTS: Readonly<{
  mode: TrlVllmIsMode;
  clipMax: number | null;
  clipMin: number | null;
}> = Object.freeze({ mode: 'sequence_mask', clipMax: 3.0, clipMin: null });

/**
 * Why a TRL configuration is invalid, or null: unknown mode; a bound that is not null nor a finite
 * number ≥ 0 (C_max > 0); C_min ≥ C_max (TRL `__post_init__` raises); a truncate mode without any
 * bound (TRL raises). Shared by the kernel (BAD_ARGUMENT / UNKNOWN_MODE) and the what-if resolver.
 */
export function trlVllmIsProblem(o: {
  mode: string;
  clipMax: number | null;
  clipMin: number | null;
}): { field: string; message: string } | null {
  if (!(TRL_VLLM_IS_MODES as readonly string[]).includes(o.mode)) {
    return {
      field: 'vllm_importance_sampling_mode',
      message: `unknown mode ${JSON.stringify(o.mode)}; expected one of ${TRL_VLLM_IS_MODES.join(', ')}`,
    };
  }
  if (o.clipMax !== null && !(Number.isFinite(o.clipMax) && o.clipMax > 0)) {
    return {
      field: 'vllm_importance_sampling_clip_max',
      message: `must be null or a finite number > 0, got ${o.clipMax}`,
    };
  }
  if (o.clipMin !== null && !(Number.isFinite(o.clipMin) && o.clipMin >= 0)) {
    return {
      field: 'vllm_importance_sampling_clip_min',
      message: `must be null or a finite number >= 0, got ${o.clipMin}`,
    };
  }
  if (o.clipMin !== null && o.clipMax !== null && o.clipMin >= o.clipMax) {
    return {
      field: 'vllm_importance_sampling_clip_min',
      message: `(${o.clipMin}) must be less than vllm_importance_sampling_clip_max (${o.clipMax}), as TRL requires`,
    };
  }
  if (o.mode.endsWith('_truncate') && o.clipMin === null && o.clipMax === null) {
    return {
      field: 'vllm_importance_sampling_clip_max',
      message: `a *_truncate mode needs vllm_importance_sampling_clip_min or _clip_max (TRL raises ValueError)`,
    };
  }
  return null;
}

/**
 * TRL's vLLM importance sampling (`vllm_importance_sampling_correction=True`) on one batch; formulas,
 * metrics and the cited code in the file header. Inputs `[B,T]`: `oldLogProb` (trainer,
 * `old_per_token_logps`), `rolloutLogProb` (vLLM, `sampling_per_token_logps`), `responseMask` (TRL's
 * `completion_mask * tool_mask`). Returns the applied weights (float64, 0 off the mask), the mask after
 * the mask modes' rejections, TRL's metrics and the verl-definition summary (correctionSummary.ts).
 * Throws SHAPE_MISMATCH, BAD_MASK, NON_FINITE (a log-prob at a loss token, or an overflowing weight),
 * EMPTY_MASK, UNKNOWN_MODE, BAD_ARGUMENT (bounds, buffers).
 */
export function trlVllmImportanceSampling(
  inputs: RolloutLogProbs,
  shape: Shape2,
  options: TrlVllmIsOptions = {},
): FrameworkCorrectionResult {
  const mode = options.mode ?? TRL_VLLM_IS_DEFAULTS.mode;
  const clipMax = options.clipMax === undefined ? TRL_VLLM_IS_DEFAULTS.clipMax : options.clipMax;
  const clipMin = options.clipMin === undefined ? TRL_VLLM_IS_DEFAULTS.clipMin : options.clipMin;
  const problem = trlVllmIsProblem({ mode, clipMax, clipMin });
  if (problem) {
    throw new LabError(
      problem.field === 'vllm_importance_sampling_mode' ? 'UNKNOWN_MODE' : 'BAD_ARGUMENT',
      `${problem.field}: ${problem.message}`,
      { details: { field: problem.field } },
    );
  }
  const { oldLogProb, rolloutLogProb, responseMask } = inputs;
  const { weights, mask, rows, cols } = correctionEntry(inputs, shape, options);

  const lo = clipMin ?? Number.NEGATIVE_INFINITY;
  const hi = clipMax ?? Number.POSITIVE_INFINITY;
  const truncate = mode.endsWith('_truncate');
  // *_mask: keep unless r < C_min or r > C_max (masked_fill(invalid_mis_mask, 0)); *_truncate keeps all
  const keeps = (r: number): boolean => truncate || !(r < lo || r > hi);
  // torch.clamp(r, min, max) = min(max(r, min), max)
  const correct = (r: number): number => (truncate ? Math.min(Math.max(r, lo), hi) : keeps(r) ? r : 0);
  const overflow = (row: number, token: number, logRatio: number): LabError =>
    new LabError(
      'NON_FINITE',
      `trl ${mode}: the ratio exp(${logRatio}) at row ${row}, token ${token} overflows (TRL would multiply the loss by inf); set vllm_importance_sampling_clip_max`,
      { details: { field: 'weights', row, token, value: logRatio } },
    );

  // sampling/sampling_logp_difference over loss tokens, plain mean (torch.mean of delta[mask])
  let count = 0;
  let sumDelta = 0;
  let maxDelta = Number.NEGATIVE_INFINITY;
  // sampling/importance_sampling_ratio over the flattened ratios (tokens, or every row)
  let ratioCount = 0;
  let ratioSum = 0;
  let ratioMin = Number.POSITIVE_INFINITY;
  let ratioMax = Number.NEGATIVE_INFINITY;
  const addRatio = (r: number) => {
    ratioCount++;
    ratioSum += r;
    if (r < ratioMin) ratioMin = r;
    if (r > ratioMax) ratioMax = r;
  };

  const sequence = mode.startsWith('sequence');
  for (let b = 0; b < rows; b++) {
    const from = b * cols;
    let rowSum = 0;
    for (let t = 0; t < cols; t++) {
      const i = from + t;
      if (responseMask[i] === 0) continue;
      const d = (oldLogProb[i] as number) - (rolloutLogProb[i] as number);
      const ad = Math.abs(d);
      count++;
      sumDelta += ad;
      if (ad > maxDelta) maxDelta = ad;
      if (sequence) {
        rowSum += d;
      } else {
        const raw = Math.exp(d);
        const r = correct(raw);
        if (!Number.isFinite(r)) throw overflow(b, t, d);
        weights[i] = r;
        mask[i] = keeps(raw) ? 1 : 0;
        addRatio(r);
      }
    }
    if (sequence) {
      // rows without a loss token have Σ = 0, ratio clamp(exp(0)), and still count in TRL's metrics
      const raw = Math.exp(rowSum);
      const r = correct(raw);
      const keep = keeps(raw) ? 1 : 0;
      addRatio(r);
      for (let t = 0; t < cols; t++) {
        const i = from + t;
        if (responseMask[i] === 0) continue;
        if (!Number.isFinite(r)) throw overflow(b, t, rowSum);
        weights[i] = r;
        mask[i] = keep;
      }
    }
    for (let t = 0; t < cols; t++) {
      const i = from + t;
      if (responseMask[i] === 0) {
        weights[i] = 0;
        mask[i] = 0;
      }
    }
  }
  const metrics: Record<string, number> = {
    'sampling/sampling_logp_difference/mean': sumDelta / count,
    'sampling/sampling_logp_difference/max': maxDelta,
    'sampling/importance_sampling_ratio/min': ratioMin,
    'sampling/importance_sampling_ratio/mean': ratioSum / ratioCount,
    'sampling/importance_sampling_ratio/max': ratioMax,
  };
  return { weights, mask, metrics, summary: correctionSummaryUnchecked(weights, responseMask, mask, shape) };
}
