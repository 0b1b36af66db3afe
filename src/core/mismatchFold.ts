/**
 * Folds per-sequence statistics (sequenceStats.ts) into the training–inference mismatch metrics, in
 * float64, one sequence at a time: memory is O(1) per accumulator whatever the dump's size.
 *
 * The verl metrics reproduce `compute_offpolicy_metrics` (verl/trainer/ppo/rollout_corr_helper.py,
 * kernel: src/core/rolloutCorrection.ts `offPolicyMetrics`) with the whole set of folded sequences
 * as ONE batch, one row per sequence: per-row means divide by `n + 1e-8` and batch means by
 * `N + 1e-8` exactly as verl's `masked_mean` does, so the values equal the kernel's on the
 * materialised batch (mismatchFold.test.ts checks it on random batches). A sequence without loss
 * tokens is not a row (verl would count it as a row whose masked means are 0).
 *
 * Framework aliases (each from the code that logs it; the tests cite the same lines):
 *  - NeMo-RL `token_mult_prob_error` = masked mean of exp(|gen − prev|) (nemo_rl/algorithms/loss/
 *    loss_functions.py ClippedPGLossFn.__call__); `gen_kl_error` = k3 of (prev − gen) with
 *    `reference_policy_kl_type: k3` (the default), `policy_kl_error` = k3 of (gen − prev),
 *    `js_divergence_error` (same file, nemo_rl/algorithms/utils.py calculate_kl without clamps);
 *    `{max,mean,min}_seq_mult_prob_error` = per-sequence mean of exp(|Δ|) over sequences with loss
 *    tokens (nemo_rl/algorithms/grpo.py compute_and_apply_seq_logprob_error_masking).
 *  - prime-rl `mismatch_kl/all/{mean,median,std,min,max}` of exp(Δ) − Δ − 1 per loss token
 *    (src/prime_rl/trainer/rl/loss.py compute_importance_ratio_and_mismatch_kl; std unbiased and
 *    median the lower one as torch's; the median is computed by DuckDB, tokenAudit.ts).
 *  - TRL `sampling/sampling_logp_difference/{mean,max}` = mean and max of |old − sampling| over the
 *    completion mask; `sampling/importance_sampling_ratio/{min,mean,max}` under TRL's default
 *    `vllm_importance_sampling_mode="sequence_mask"`, `vllm_importance_sampling_clip_max=3.0`, no
 *    lower bound: per sequence exp(Σ Δ) (unclamped), 0 when above 3 (trl/trainer/grpo_trainer.py).
 *  - OpenRLHF `vllm_kl` = masked_mean(rollout − old) over all tokens (openrlhf/models/loss.py
 *    PolicyLoss.forward; its masked_mean in openrlhf/models/utils.py divides by Σ mask without
 *    verl's 1e-8): verl's `kl` up to that epsilon. NeMo-RL's masked_mean (nemo_rl/algorithms/utils.py)
 *    divides by Σ mask + 1e-8, as verl's does.
 *  - slime `train/train_rollout_logprob_abs_diff`: per-sample mean of |old − rollout| summed over
 *    samples (slime/backends/megatron_utils/loss.py with cp_utils.py sum_of_sample_mean), reported
 *    here divided by the number of sequences (the mean over samples of the per-sample mean).
 *  - SkyRL `policy/rollout_train_logprobs_abs_diff_{mean,std,max,min}` over loss tokens (std
 *    unbiased, torch's; skyrl/train/trainer.py).
 */
import { MASKED_MEAN_EPS } from './maskedPrimitives.js';
import type { SequenceStats } from './sequenceMismatchStats.js';

const maskedMeanOf = (sum: number, count: number) => sum / (count + MASKED_MEAN_EPS);
const CLAMP = 20;
const clamp = (x: number) => Math.min(Math.max(x, -CLAMP), CLAMP);

/** Streaming mean / unbiased std / min / max of a list of numbers (Welford). */
export class ListStats {
  n = 0;
  mean = 0;
  private m2 = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  sum = 0;
  add(x: number): void {
    this.n++;
    this.sum += x;
    const d = x - this.mean;
    this.mean += d / this.n;
    this.m2 += d * (x - this.mean);
    if (x < this.min) this.min = x;
    if (x > this.max) this.max = x;
  }
  /** verl's listStats: mean = Σ/n, unbiased std (0 for one value). */
  stats(): { mean: number; std: number; max: number; min: number } {
    return {
      mean: this.sum / this.n,
      std: this.n > 1 ? Math.sqrt(this.m2 / (this.n - 1)) : 0,
      max: this.max,
      min: this.min,
    };
  }
}

/** The mismatch metrics of one slice (overall, a step, a task): verl names plus aliases and |Δ| stats. */
export class MismatchAccumulator {
  rows = 0;
  tokens = 0;
  private sOld = 0;
  private sRoll = 0;
  private sL = 0;
  private sK3 = 0;
  private sK3Sq = 0;
  private minK3 = Number.POSITIVE_INFINITY;
  private maxK3 = Number.NEGATIVE_INFINITY;
  private sW2 = 0;
  private sW = 0;
  private sAbs = 0;
  private sAbs2 = 0;
  private minAbs = Number.POSITIVE_INFINITY;
  private maxAbs = Number.NEGATIVE_INFINITY;
  private sExpAbs = 0;
  private sPolicyKl = 0;
  private sJs = 0;
  private minL = Number.POSITIVE_INFINITY;
  private maxL = Number.NEGATIVE_INFINITY;
  // per-row sums (verl's batch means over rows)
  private trainPpl = 0;
  private trainLogPpl = 0;
  private rollPpl = 0;
  private rollLogPpl = 0;
  private diff = new ListStats();
  private absDiff = 0;
  private pplRatio = 0;
  private chiSeq = 0;
  private seqMult = new ListStats();
  private seqAbs = 0;
  private trlIs = new ListStats();
  /** Σ_b n_b · Σ_t ℓ: for the sequence-IS degeneracy note (length × KL). */
  private maxLen = 0;
  readonly binN: number[];
  readonly binAbs: number[];

  constructor(bins: number) {
    this.binN = new Array(bins).fill(0);
    this.binAbs = new Array(bins).fill(0);
  }

  add(s: SequenceStats): void {
    this.rows++;
    this.tokens += s.n;
    this.sOld += s.sOld;
    this.sRoll += s.sRoll;
    this.sL += s.sL;
    this.sK3 += s.sK3;
    this.sK3Sq += s.sK3Sq;
    this.minK3 = Math.min(this.minK3, s.minK3);
    this.maxK3 = Math.max(this.maxK3, s.maxK3);
    this.sW += s.sW;
    this.sW2 += s.sW2;
    this.sAbs += s.sAbs;
    this.sAbs2 += s.sAbs2;
    this.minAbs = Math.min(this.minAbs, s.minAbs);
    this.maxAbs = Math.max(this.maxAbs, s.maxAbs);
    this.sExpAbs += s.sExpAbs;
    this.sPolicyKl += s.sPolicyKl;
    this.sJs += s.sJs;
    this.minL = Math.min(this.minL, s.minL);
    this.maxL = Math.max(this.maxL, s.maxL);
    const mt = maskedMeanOf(s.sOld, s.n);
    const mr = maskedMeanOf(s.sRoll, s.n);
    this.trainPpl += Math.exp(-mt);
    this.trainLogPpl += -mt;
    this.rollPpl += Math.exp(-mr);
    this.rollLogPpl += -mr;
    const d = mr - mt;
    this.diff.add(d);
    this.absDiff += Math.abs(d);
    this.pplRatio += Math.exp(d);
    this.chiSeq += Math.exp(2 * clamp(s.sL));
    // NeMo-RL: per-sequence Σ exp(|Δ|) / max(n, 1)
    this.seqMult.add(s.sExpAbs / Math.max(s.n, 1));
    this.seqAbs += s.sAbs / Math.max(s.n, 1);
    // TRL sequence_mask, clip_max 3.0: exp(Σ Δ) unclamped, 0 above the bound
    const trl = Math.exp(s.sL);
    this.trlIs.add(trl > 3.0 ? 0 : trl);
    this.maxLen = Math.max(this.maxLen, s.n);
    for (let k = 0; k < this.binN.length; k++) {
      this.binN[k] = (this.binN[k] as number) + (s.binN[k] as number);
      this.binAbs[k] = (this.binAbs[k] as number) + (s.binAbs[k] as number);
    }
  }

  /** verl `compute_offpolicy_metrics` on the folded rows (keys without the `rollout_corr/` prefix). */
  offPolicy(): Record<string, number> {
    const B = this.rows;
    const N = this.tokens;
    const d = this.diff.stats();
    return {
      training_ppl: this.trainPpl / B,
      training_log_ppl: this.trainLogPpl / B,
      kl: maskedMeanOf(-this.sL, N),
      k3_kl: maskedMeanOf(this.sK3, N),
      rollout_ppl: this.rollPpl / B,
      rollout_log_ppl: this.rollLogPpl / B,
      log_ppl_diff: d.mean,
      log_ppl_abs_diff: this.absDiff / B,
      log_ppl_diff_max: d.max,
      log_ppl_diff_min: d.min,
      ppl_ratio: this.pplRatio / B,
      chi2_token: maskedMeanOf(this.sW2, N) - 1,
      chi2_seq: this.chiSeq / B - 1,
    };
  }

  /** |Δ| statistics and the per-token ratio's range (exact from the sums; quantiles come from SQL). */
  deltaStats(): Record<string, number> {
    const N = this.tokens;
    return {
      loss_tokens: N,
      sequences: this.rows,
      mean_abs_delta: this.sAbs / N,
      max_abs_delta: this.maxAbs,
      mean_delta: this.sL / N,
      ratio_max: Math.exp(clamp(this.maxL)),
      ratio_min: Math.exp(clamp(this.minL)),
      max_sequence_tokens: this.maxLen,
      // mean token IS weight exp(clamp Δ): 1 when on-policy
      ratio_mean: this.sW / N,
    };
  }

  /** The frameworks' own names for the same quantities (see the file header for each source). */
  aliases(): Record<string, number> {
    const N = this.tokens;
    const seq = this.seqMult.stats();
    const meanK3 = this.sK3 / N;
    const absMean = this.sAbs / N;
    const trl = this.trlIs.stats();
    return {
      'nemo_rl/token_mult_prob_error': maskedMeanOf(this.sExpAbs, N),
      'nemo_rl/gen_kl_error': maskedMeanOf(this.sK3, N),
      'nemo_rl/policy_kl_error': maskedMeanOf(this.sPolicyKl, N),
      'nemo_rl/js_divergence_error': maskedMeanOf(this.sJs, N),
      'nemo_rl/max_seq_mult_prob_error': seq.max,
      'nemo_rl/mean_seq_mult_prob_error': seq.mean,
      'nemo_rl/min_seq_mult_prob_error': seq.min,
      'prime_rl/mismatch_kl/all/mean': meanK3,
      'prime_rl/mismatch_kl/all/std':
        N > 1 ? Math.sqrt(Math.max(this.sK3Sq - N * meanK3 * meanK3, 0) / (N - 1)) : 0,
      'prime_rl/mismatch_kl/all/min': this.minK3,
      'prime_rl/mismatch_kl/all/max': this.maxK3,
      'trl/sampling/sampling_logp_difference/mean': absMean,
      'trl/sampling/sampling_logp_difference/max': this.maxAbs,
      'trl/sampling/importance_sampling_ratio/min': trl.min,
      'trl/sampling/importance_sampling_ratio/mean': trl.mean,
      'trl/sampling/importance_sampling_ratio/max': trl.max,
      // openrlhf/models/utils.py masked_mean: Σ / Σ mask, no epsilon
      'openrlhf/vllm_kl': -this.sL / N,
      'slime/train/train_rollout_logprob_abs_diff': this.seqAbs / this.rows,
      'skyrl/policy/rollout_train_logprobs_abs_diff_mean': absMean,
      'skyrl/policy/rollout_train_logprobs_abs_diff_std':
        N > 1 ? Math.sqrt(Math.max(this.sAbs2 - N * absMean * absMean, 0) / (N - 1)) : 0,
      'skyrl/policy/rollout_train_logprobs_abs_diff_max': this.maxAbs,
      'skyrl/policy/rollout_train_logprobs_abs_diff_min': this.minAbs,
    };
  }

  /** Mean per-token k3 times the longest sequence: the exponent sequence-level IS pays (clamp 20). */
  lengthTimesKl(): number {
    return this.maxLen * (this.sK3 / this.tokens);
  }

  /** The mean sequence length times the mean token KL (k3). */
  meanLengthTimesKl(): number {
    return (this.tokens / this.rows) * (this.sK3 / this.tokens);
  }
}
