/**
 * OpenRLHF's correction of the vLLM–trainer mismatch: `--algo.advantage.is_correction_type`
 * `tis` / `icepop` / `seq-mask-tis` with `--algo.advantage.is_correction_threshold LOW HIGH`, and the
 * `vllm_kl` metric. Reproduces OpenRLHF commit 3c3be6234e0cb353e76bb8019947db9dfe99fca7
 * (2026-08-13), `openrlhf/models/loss.py`, `PolicyLoss.forward` (lines 195-218) with `masked_mean`
 * from `openrlhf/models/utils.py` (lines 166-169, no epsilon); the flags are parsed in
 * `openrlhf/cli/train_ppo_ray.py` (lines 257-271: `--algo.advantage.is_correction_enable`,
 * `--algo.advantage.is_correction_threshold` default `0.5 5.0`, `--algo.advantage.is_correction_type`
 * default `tis`; before commit ed62d0e2 of 2026-04-19 the same flags were `--enable_vllm_is_correction`,
 * `--vllm_is_truncated_threshold`, `--vllm_is_correction_type`, with the same code). The correction only
 * runs with `--actor.policy_loss_type ppo` (the default; `gspo` uses the rollout log-probs in its ratio
 * instead). Golden cases: `test/golden/trl-openrlhf-is.json` from `scripts/golden/trl_openrlhf_is.py`.
 *
 * With ℓ_t = old_t − rollout_t (`rollout_log_ratio = old_log_probs − rollout_log_probs`, old = the
 * trainer's log-probs at experience time, rollout = vLLM's), `m` = `action_mask`, [L, H] the thresholds:
 *   tis:          w_t = clamp(exp(ℓ_t), L, H)                 (clamped from BOTH sides)
 *   icepop:       w_t = exp(ℓ_t) if L ≤ exp(ℓ_t) ≤ H, else 0  (bounds inclusive)
 *   seq-mask-tis: g_b = exp(Σ_t ℓ_t·m_t / Σ_t m_t)            (geometric mean of the row's ratios)
 *                 w_t = exp(ℓ_t) if L ≤ g_b ≤ H, else 0       (the token weight is NOT clamped, although
 *                                                              OpenRLHF's comment says "token-level clamp")
 *   no log-ratio clamp anywhere. `loss = w · loss`, then aggregated over `action_mask` tokens.
 *   vllm_kl = Σ (rollout − old)·m / Σ m  (= verl's `rollout_corr/kl` up to verl's 1e-8; it is logged
 *   per micro-batch and averaged weighted by action tokens, so the step's value is this batch mean).
 *
 * Differences from OpenRLHF (src/core/DEVIATIONS.md, "Framework corrections"): NaN/Inf where the mask
 * is 0 is never read; a row without any action token is rejected (OpenRLHF: 0/0 = NaN fails both
 * comparisons, the same result); where exp(ℓ) overflows (ℓ > 709.8 in float64, 88.7 in OpenRLHF's
 * float32) icepop and a rejected seq-mask-tis row multiply inf by 0 and put NaN in OpenRLHF's loss,
 * here the token is rejected (weight 0); an overflowing weight that is kept (seq-mask-tis) is a
 * NON_FINITE error; thresholds with L > H or L < 0 are refused (OpenRLHF does not check).
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

/** OpenRLHF `--algo.advantage.is_correction_type` values. */
export type OpenRlhfIsCorrectionType = 'tis' | 'icepop' | 'seq-mask-tis';

/** Every correction type OpenRLHF accepts, in its `choices` order. */
export const OPENRLHF_IS_CORRECTION_TYPES: readonly OpenRlhfIsCorrectionType[] = Object.freeze([
  'tis',
  'icepop',
  'seq-mask-tis',
]);

export interface OpenRlhfIsOptions extends CorrectionOutOptions {
  /** `--algo.advantage.is_correction_type`. Default 'tis'. */
  type?: OpenRlhfIsCorrectionType;
  /** First value of `--algo.advantage.is_correction_threshold`. Default 0.5. */
  low?: number;
  /** Second value of `--algo.advantage.is_correction_threshold`. Default 5.0. */
  high?: number;
}

/** OpenRLHF's defaults at the cited commit. */
export const OPENRLHF_IS_DEFAULTS: Readonly<{ type: OpenRlhfIsCorrectionType; low: number; high: number }> =
  Object.freeze({ type: 'tis', low: 0.5, high: 5.0 });

/**
 * Why an OpenRLHF configuration is invalid, or null: unknown type (OpenRLHF raises ValueError), a
 * threshold that is not finite, L < 0, H ≤ 0 or L > H. Shared by the kernel and the what-if resolver.
 */
export function openrlhfIsProblem(o: {
  type: string;
  low: number;
  high: number;
}): { field: string; message: string } | null {
  if (!(OPENRLHF_IS_CORRECTION_TYPES as readonly string[]).includes(o.type)) {
    return {
      field: 'is_correction_type',
      message: `unknown type ${JSON.stringify(o.type)}; expected one of ${OPENRLHF_IS_CORRECTION_TYPES.join(', ')}`,
    };
  }
  if (!(Number.isFinite(o.low) && o.low >= 0)) {
    return { field: 'is_correction_threshold_low', message: `must be a finite number >= 0, got ${o.low}` };
  }
  if (!(Number.isFinite(o.high) && o.high > 0)) {
    return { field: 'is_correction_threshold_high', message: `must be a finite number > 0, got ${o.high}` };
  }
  if (o.low > o.high) {
    return {
      field: 'is_correction_threshold_low',
      message: `(${o.low}) must not exceed is_correction_threshold_high (${o.high})`,
    };
  }
  return null;
}

/**
 * OpenRLHF's vLLM importance-sampling correction on one batch; formulas and the cited code in the
 * file header. Inputs `[B,T]`: `oldLogProb` (trainer, `old_log_probs`), `rolloutLogProb` (vLLM,
 * `rollout_log_probs`), `responseMask` (`action_mask`). Returns the applied weights (float64, 0 off the
 * mask), the mask after icepop / seq-mask-tis rejections, `{ vllm_kl }` and the verl-definition
 * summary (correctionSummary.ts). Throws SHAPE_MISMATCH, BAD_MASK, NON_FINITE, EMPTY_MASK,
 * UNKNOWN_MODE, BAD_ARGUMENT.
 */
export function openrlhfVllmImportanceSampling(
  inputs: RolloutLogProbs,
  shape: Shape2,
  options: OpenRlhfIsOptions = {},
): FrameworkCorrectionResult {
  const type = options.type ?? OPENRLHF_IS_DEFAULTS.type;
  const low = options.low ?? OPENRLHF_IS_DEFAULTS.low;
  const high = options.high ?? OPENRLHF_IS_DEFAULTS.high;
  const problem = openrlhfIsProblem({ type, low, high });
  if (problem) {
    throw new LabError(
      problem.field === 'is_correction_type' ? 'UNKNOWN_MODE' : 'BAD_ARGUMENT',
      `${problem.field}: ${problem.message}`,
      { details: { field: problem.field } },
    );
  }
  const { oldLogProb, rolloutLogProb, responseMask } = inputs;
  const { weights, mask, rows, cols } = correctionEntry(inputs, shape, options);

  let count = 0;
  let sumKl = 0;
  for (let b = 0; b < rows; b++) {
    const from = b * cols;
    let rowKeep = true;
    if (type === 'seq-mask-tis') {
      // seq_log_ratio = masked_mean(rollout_log_ratio, action_mask, dim=-1); an empty row is 0/0 = NaN,
      // which fails both comparisons: rejected
      let s = 0;
      let c = 0;
      for (let t = 0; t < cols; t++) {
        const i = from + t;
        if (responseMask[i] === 0) continue;
        s += (oldLogProb[i] as number) - (rolloutLogProb[i] as number);
        c++;
      }
      const g = Math.exp(s / c);
      rowKeep = c > 0 && g >= low && g <= high;
    }
    for (let t = 0; t < cols; t++) {
      const i = from + t;
      if (responseMask[i] === 0) {
        weights[i] = 0;
        mask[i] = 0;
        continue;
      }
      const old = oldLogProb[i] as number;
      const rollout = rolloutLogProb[i] as number;
      count++;
      sumKl += rollout - old;
      const r = Math.exp(old - rollout);
      let w: number;
      let keep: boolean;
      if (type === 'tis') {
        keep = true;
        w = Math.min(Math.max(r, low), high); // torch.clamp(min=low, max=high)
      } else if (type === 'icepop') {
        keep = r >= low && r <= high;
        w = keep ? r : 0;
      } else {
        keep = rowKeep;
        w = keep ? r : 0;
      }
      if (!Number.isFinite(w)) {
        throw new LabError(
          'NON_FINITE',
          `openrlhf ${type}: the ratio exp(${old - rollout}) at row ${b}, token ${t} overflows and is kept (OpenRLHF would multiply the loss by inf)`,
          { details: { field: 'weights', row: b, token: t, value: old - rollout } },
        );
      }
      weights[i] = w;
      mask[i] = keep ? 1 : 0;
    }
  }
  return {
    weights,
    mask,
    metrics: { vllm_kl: sumKl / count },
    summary: correctionSummaryUnchecked(weights, responseMask, mask, shape),
  };
}
