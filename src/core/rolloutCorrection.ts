/**
 * Rollout (training/inference mismatch) correction, verl `verl/trainer/ppo/rollout_corr_helper.py`
 * (docs/verl-semantics.md §8): truncated importance-sampling weights, rejection masks from divergence estimators,
 * and the `rollout_corr/...` diagnostics, with verl's metric names.
 *
 * `logRatio = log π_train − log π_rollout` per token `[B,T]` (decoupled mode: `old_log_prob −
 * rollout_log_probs`). Masked positions are ignored (they need not be finite).
 *
 * IS weights (`compute_rollout_correction_weights`), threshold `τ` (default 2.0):
 *   token:    `w = exp(clamp(ℓ, ±20))·m`
 *   sequence: `w_b = exp(clamp(Σ_t ℓ·m, ±20))`, broadcast to the row, ×m
 *   then `w = min(w, τ)` (truncated from above only); optional batch normalisation divides by the
 *   masked token mean of w (token) or the mean over valid rows of per-row masked means (sequence),
 *   when that mean is > 1e-8. Metrics are computed on the weights **before** truncation.
 *
 * Rejection (`compute_rollout_rejection_mask`), options combined with AND. Token statistics with
 * `ℓ = clamp(logRatio, ±20)`: `k1 = −ℓ`, `k2 = ½ℓ²`, `k3 = exp(ℓ) − 1 − ℓ`. `token_k*` judge each
 * token, `seq_sum_k*` / `seq_mean_k*` the masked sum / mean per row, `seq_max_k{2,3}` the max over
 * valid tokens (0 for an empty row). k1 options keep `log(lower) ≤ stat ≤ log(upper)` (threshold
 * `"lower_upper"`, or `u` meaning lower = 1/u); the others keep `stat ≤ upper`. The new response
 * mask is `m · keep`.
 */
import {
  checkFiniteWhereMasked,
  checkLength,
  checkMask,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type MaskArray,
  type OutOption,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { LOG_RATIO_CLAMP } from './ess.js';
import {
  MASKED_MEAN_EPS,
  maskCountUnchecked,
  maskedMeanOf,
  maskedMeanUnchecked,
  maskedRowMeansUnchecked,
} from './maskedPrimitives.js';

/** `log_ratio = old_log_prob − rollout_log_prob` `[B,T]` and its response mask. */
export interface LogRatioBatch {
  logRatio: FloatArray;
  responseMask: MaskArray;
}

/** The `[B,T]` log-probs of the training (old) and rollout (behaviour) policy, and the mask. */
export interface RolloutLogProbs {
  oldLogProb: FloatArray;
  rolloutLogProb: FloatArray;
  responseMask: MaskArray;
}

/** verl `rollout_is` levels. */
export type RolloutIsLevel = 'token' | 'sequence';
/** verl `rollout_is_batch_normalize` false / true. */
export type RolloutIsNormalization = 'none' | 'batch-mean';

export interface RolloutIsOptions extends OutOption {
  /** `rollout_is`. Default 'token'. */
  level?: RolloutIsLevel;
  /** `rollout_is_threshold` τ (upper truncation). Default 2.0. */
  threshold?: number;
  /** `rollout_is_batch_normalize`. Default 'none'. */
  normalization?: RolloutIsNormalization;
}

/** verl's `rollout_is*` defaults (token level, threshold 2.0, no batch normalisation). */
export const ROLLOUT_IS_DEFAULTS: Readonly<Required<Omit<RolloutIsOptions, 'out'>>> = Object.freeze({
  level: 'token',
  threshold: 2.0,
  normalization: 'none',
});

/** Metrics dictionary with verl's keys (without the `rollout_corr/` prefix). */
export type RolloutMetrics = Record<string, number>;

export interface RolloutIsResult {
  /** Truncated (and optionally normalised) weights `[B,T]`, 0 at masked positions. */
  weights: Float32Array;
  metrics: RolloutMetrics;
}

/** The k-statistics of the rejection options. */
export type RsOption =
  | 'token_k1'
  | 'token_k2'
  | 'token_k3'
  | 'seq_sum_k1'
  | 'seq_sum_k2'
  | 'seq_sum_k3'
  | 'seq_mean_k1'
  | 'seq_mean_k2'
  | 'seq_mean_k3'
  | 'seq_max_k2'
  | 'seq_max_k3';

/** Every `rollout_rs` rejection option verl accepts (comma-separated in its config). */
export const RS_OPTIONS: readonly RsOption[] = [
  'token_k1',
  'token_k2',
  'token_k3',
  'seq_sum_k1',
  'seq_sum_k2',
  'seq_sum_k3',
  'seq_mean_k1',
  'seq_mean_k2',
  'seq_mean_k3',
  'seq_max_k2',
  'seq_max_k3',
];

/** One parsed rejection rule: keep where `lower ≤ stat ≤ upper` (`lower` only for k1, as a ratio). */
export interface RsRule {
  option: RsOption;
  upper: number;
  /** k1 only: the ratio lower bound (the rule compares `stat` with `log(lower)`, `log(upper)`). */
  lower: number | null;
}

export interface RejectionResult {
  /** `response_mask · keep` `[B,T]`. */
  mask: Float32Array;
  metrics: RolloutMetrics;
}

function checkLogRatioBatch(logRatio: FloatArray, mask: MaskArray, shape: Shape2, field: string): void {
  checkShape(shape);
  const n = shape.rows * shape.cols;
  const text = `[${shape.rows},${shape.cols}]`;
  checkLength(logRatio, n, field, text);
  checkLength(mask, n, 'response_mask', text);
  checkMask(mask, shape.cols);
  checkFiniteWhereMasked(logRatio, mask, shape.cols, field);
  let any = false;
  for (let i = 0; i < n && !any; i++) any = mask[i] !== 0;
  if (!any) {
    throw new LabError(
      'EMPTY_MASK',
      'response_mask: must contain at least one valid token (verl raises ValueError)',
      {
        details: { field: 'response_mask' },
      },
    );
  }
}

const clampL = (x: number) => Math.min(Math.max(x, -LOG_RATIO_CLAMP), LOG_RATIO_CLAMP);

/** verl_F.masked_mean over the whole batch (denominator Σm + 1e-8) of `f(x_i)`, unchecked. */
function maskedMeanMapped(x: ArrayLike<number>, mask: MaskArray, f: (v: number) => number): number {
  let s = 0;
  for (let i = 0; i < mask.length; i++) if (mask[i] !== 0) s += f(x[i] as number);
  return maskedMeanOf(s, maskCountUnchecked(mask));
}

/** mean, unbiased std (0 for one value), max, min of a list. */
function listStats(v: ArrayLike<number>): { mean: number; std: number; max: number; min: number } {
  const n = v.length;
  let s = 0;
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const x = v[i] as number;
    s += x;
    max = Math.max(max, x);
    min = Math.min(min, x);
  }
  const mean = s / n;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += ((v[i] as number) - mean) ** 2;
  return { mean, std: n > 1 ? Math.sqrt(ss / (n - 1)) : 0, max, min };
}

const fractionOf = (v: ArrayLike<number>, pred: (x: number) => boolean) => {
  let k = 0;
  for (let i = 0; i < v.length; i++) if (pred(v[i] as number)) k++;
  return k / v.length;
};

/**
 * verl `compute_rollout_correction_weights(log_ratio, response_mask, rollout_is, rollout_is_threshold,
 * rollout_is_batch_normalize)`; formulas in the file header. Metrics (keys `rollout_is_*`): mean,
 * max, min, ratio_fraction_high/low, std and eff_sample_size (on weights clamped to [1/τ, τ]; ESS =
 * `1/masked_mean((w/(mean + 1e-8))²)`, the Kish fraction of ess.ts up to that epsilon), and per-row
 * (`seq_*`) summaries; `batch_norm_factor` when normalising. Throws EMPTY_MASK (verl: ValueError),
 * BAD_ARGUMENT (τ ≤ 0), UNKNOWN_MODE, NON_FINITE (log-ratio where the mask is 1).
 *
 * Why one function: it follows verl's function step by step (the weights, the metrics verl computes
 * from them, then truncation and the batch normalisation), so the two can be read side by side; the
 * metrics read the intermediate arrays of the steps before them.
 */
export function rolloutIsWeights(
  inputs: LogRatioBatch,
  shape: Shape2,
  options: RolloutIsOptions = {},
): RolloutIsResult {
  const { logRatio, responseMask } = inputs;
  const o = { ...ROLLOUT_IS_DEFAULTS, ...options };
  if (o.level !== 'token' && o.level !== 'sequence') {
    throw new LabError(
      'UNKNOWN_MODE',
      `rollout_is: invalid level ${JSON.stringify(o.level)}; expected token or sequence`,
      {
        details: { field: 'rollout_is', value: o.level },
      },
    );
  }
  if (o.normalization !== 'none' && o.normalization !== 'batch-mean') {
    throw new LabError(
      'UNKNOWN_MODE',
      `rollout_is_batch_normalize: expected none or batch-mean, got ${JSON.stringify(o.normalization)}`,
      {
        details: { field: 'rollout_is_batch_normalize' },
      },
    );
  }
  const tau = o.threshold;
  if (!(tau > 0) || !Number.isFinite(tau)) {
    throw new LabError('BAD_ARGUMENT', `rollout_is_threshold: must be positive, got ${tau}`, {
      details: { field: 'rollout_is_threshold', value: tau },
    });
  }
  checkLogRatioBatch(logRatio, responseMask, shape, 'log_ratio');
  const { rows, cols } = shape;
  const n = rows * cols;
  const w = new Float64Array(n);
  const lower = 1 / tau;
  const metrics: RolloutMetrics = {};
  if (o.level === 'token') {
    for (let i = 0; i < n; i++) if (responseMask[i] !== 0) w[i] = Math.exp(clampL(logRatio[i] as number));
  } else {
    const sums = new Float64Array(rows);
    for (let b = 0; b < rows; b++) {
      let s = 0;
      for (let t = 0; t < cols; t++)
        if (responseMask[b * cols + t] !== 0) s += logRatio[b * cols + t] as number;
      sums[b] = s;
      const v = Math.exp(clampL(s));
      for (let t = 0; t < cols; t++) if (responseMask[b * cols + t] !== 0) w[b * cols + t] = v;
    }
    // sequence level: max/min/fractions from the unclamped log sums (every row, as verl)
    const st = listStats(sums);
    metrics.rollout_is_max = Math.exp(Math.min(st.max, LOG_RATIO_CLAMP));
    metrics.rollout_is_min = Math.exp(st.min);
    const logHi = Math.log(tau);
    const logLo = Math.log(lower);
    metrics.rollout_is_ratio_fraction_high = fractionOf(sums, (s) => s > logHi);
    metrics.rollout_is_ratio_fraction_low = fractionOf(sums, (s) => s < logLo);
  }
  // One pass over the valid tokens for the token statistics (verl: masked means, denominator
  // Σm + 1e-8). std and ESS use the weights clamped to [1/τ, τ].
  let count = 0;
  let sumW = 0;
  let high = 0;
  let low = 0;
  let sumC = 0;
  let sumC2 = 0;
  let max = Number.NEGATIVE_INFINITY;
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    if (responseMask[i] === 0) continue;
    const v = w[i] as number;
    count++;
    sumW += v;
    if (v > tau) high++;
    if (v < lower) low++;
    if (v > max) max = v;
    if (v < min) min = v;
    const c = Math.min(Math.max(v, lower), tau);
    sumC += c;
    sumC2 += c * c;
  }
  const den = count + MASKED_MEAN_EPS;
  metrics.rollout_is_mean = maskedMeanOf(sumW, count);
  if (o.level === 'token') {
    metrics.rollout_is_ratio_fraction_high = maskedMeanOf(high, count);
    metrics.rollout_is_ratio_fraction_low = maskedMeanOf(low, count);
    metrics.rollout_is_max = max;
    metrics.rollout_is_min = min;
  }
  const meanC = maskedMeanOf(sumC, count);
  metrics.rollout_is_std = count > 1 ? Math.sqrt(Math.max(maskedMeanOf(sumC2, count) - meanC * meanC, 0)) : 0;
  // ESS = 1 / masked_mean((c / (mean_c + 1e-8))²)
  metrics.rollout_is_eff_sample_size = (den * (meanC + 1e-8) ** 2) / sumC2;
  const seq = maskedRowMeansUnchecked(w, responseMask, shape);
  const ss = listStats(seq);
  metrics.rollout_is_seq_mean = ss.mean;
  metrics.rollout_is_seq_std = ss.std;
  metrics.rollout_is_seq_max = ss.max;
  metrics.rollout_is_seq_min = ss.min;
  metrics.rollout_is_seq_max_deviation = Math.max(Math.abs(ss.max - 1), Math.abs(ss.min - 1));
  metrics.rollout_is_seq_fraction_high = fractionOf(seq, (v) => v > tau);
  metrics.rollout_is_seq_fraction_low = fractionOf(seq, (v) => v < lower);

  for (let i = 0; i < n; i++) w[i] = Math.min(w[i] as number, tau);
  if (o.normalization === 'batch-mean') {
    let mean: number;
    if (o.level === 'token') {
      mean = maskedMeanUnchecked(w, responseMask);
    } else {
      const rowMeans = maskedRowMeansUnchecked(w, responseMask, shape);
      let s = 0;
      let valid = 0;
      for (let b = 0; b < rows; b++) {
        let any = false;
        for (let t = 0; t < cols && !any; t++) any = responseMask[b * cols + t] !== 0;
        if (any) {
          s += rowMeans[b] as number;
          valid++;
        }
      }
      mean = s / Math.max(valid, 1e-8);
    }
    if (mean > 1e-8) {
      for (let i = 0; i < n; i++) w[i] = (w[i] as number) / mean;
      metrics.rollout_is_batch_norm_factor = mean;
    } else {
      metrics.rollout_is_batch_norm_factor = 1.0;
    }
  }
  const weights = outputBuffer(options.out, n, `[${rows},${cols}]`);
  checkOutNotAliased(weights, 'out', { log_ratio: logRatio, response_mask: responseMask });
  weights.set(w);
  return { weights, metrics };
}

/**
 * Parses verl's `rollout_rs` (comma-separated options, duplicates dropped) and
 * `rollout_rs_threshold` (one spec shared by all options or one per option; k1 specs are
 * `"lower_upper"` or `u` meaning lower = 1/u; others a single positive upper bound).
 * Throws UNKNOWN_MODE (unknown option), BAD_OPTION_VALUE (malformed or non-positive threshold,
 * wrong count).
 */
export function parseRejectionRules(rolloutRs: string, threshold: string | number): RsRule[] {
  const options: RsOption[] = [];
  for (const raw of rolloutRs.split(',')) {
    const opt = raw.trim();
    if (!opt) continue;
    if (!(RS_OPTIONS as readonly string[]).includes(opt)) {
      throw new LabError(
        'UNKNOWN_MODE',
        `rollout_rs: invalid option ${JSON.stringify(opt)}; expected one of ${RS_OPTIONS.join(', ')}`,
        {
          details: { field: 'rollout_rs', value: opt },
        },
      );
    }
    if (!options.includes(opt as RsOption)) options.push(opt as RsOption);
  }
  if (options.length === 0) {
    throw new LabError('BAD_OPTION_VALUE', 'rollout_rs: must contain at least one option', {
      details: { field: 'rollout_rs' },
    });
  }
  let specs =
    typeof threshold === 'number'
      ? [String(threshold)]
      : threshold
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  if (specs.length !== 1 && specs.length !== options.length) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      `rollout_rs_threshold: expected 1 or ${options.length} thresholds for ${options.join(',')}, got ${specs.length}`,
      { details: { field: 'rollout_rs_threshold' } },
    );
  }
  if (specs.length === 1) specs = options.map(() => specs[0] as string);
  const bad = (spec: string, option: string, why: string) =>
    new LabError('BAD_OPTION_VALUE', `rollout_rs_threshold: '${spec}' for option '${option}' ${why}`, {
      details: { field: 'rollout_rs_threshold', value: spec, option },
    });
  return options.map((option, k) => {
    const spec = specs[k] as string;
    if (option.endsWith('k1')) {
      const [a, b] = spec.includes('_') ? spec.split('_', 2) : [undefined, spec];
      const upper = Number(b);
      const lower = a === undefined ? 1 / upper : Number(a);
      if (!Number.isFinite(upper) || !Number.isFinite(lower)) throw bad(spec, option, 'is not numeric');
      if (lower <= 0 || upper <= 0) throw bad(spec, option, 'must be positive');
      return { option, upper, lower };
    }
    if (spec.includes('_')) throw bad(spec, option, "takes a single upper bound without '_'");
    const upper = Number(spec);
    if (!Number.isFinite(upper)) throw bad(spec, option, 'is not numeric');
    if (upper <= 0) throw bad(spec, option, 'must be positive');
    return { option, upper, lower: null };
  });
}

/**
 * verl `compute_rollout_rejection_mask(log_ratio, response_mask, rollout_rs, rollout_rs_threshold)`;
 * formulas in the file header. `rules` from {@link parseRejectionRules} (or a verl `rollout_rs`
 * string plus threshold). Metrics per option `rollout_rs_<option>_{mean,max,min,fraction_high,
 * fraction_low,std,seq_mean,seq_std,seq_max,seq_min,seq_max_deviation,seq_fraction_high[,
 * seq_fraction_low],masked_fraction,seq_masked_fraction}` and overall `rollout_rs_masked_fraction`,
 * `rollout_rs_seq_masked_fraction`. Throws EMPTY_MASK, NON_FINITE, UNKNOWN_MODE, BAD_OPTION_VALUE.
 *
 * Why one function: it follows verl's function step by step (the k1/k2/k3 statistics, then per
 * option its keep mask and the metrics verl logs for it, then the combined mask), so the two can be
 * read side by side; each option's metrics read the arrays of that option's step.
 */
export function rolloutRejectionMask(
  inputs: LogRatioBatch,
  shape: Shape2,
  rules: RsRule[] | { rolloutRs: string; threshold: string | number },
  options: OutOption = {},
): RejectionResult {
  const { logRatio, responseMask } = inputs;
  const parsed = Array.isArray(rules) ? rules : parseRejectionRules(rules.rolloutRs, rules.threshold);
  checkLogRatioBatch(logRatio, responseMask, shape, 'log_ratio');
  const { rows, cols } = shape;
  const n = rows * cols;
  const k = [new Float64Array(n), new Float64Array(n), new Float64Array(n)] as const;
  for (let i = 0; i < n; i++) {
    if (responseMask[i] === 0) continue;
    const l = clampL(logRatio[i] as number);
    k[0][i] = -l;
    k[1][i] = 0.5 * l * l;
    k[2][i] = Math.exp(l) - 1 - l;
  }
  const validRow = new Uint8Array(rows);
  for (let b = 0; b < rows; b++)
    for (let t = 0; t < cols; t++) if (responseMask[b * cols + t] !== 0) validRow[b] = 1;
  const nValidRows = validRow.reduce((a, v) => a + v, 0);
  const combined = new Float64Array(n).fill(1);
  const metrics: RolloutMetrics = {};
  for (const rule of parsed) {
    const { option } = rule;
    const isK1 = option.endsWith('k1');
    const stat = k[Number(option.at(-1)) - 1] as Float64Array;
    const up = isK1 ? Math.log(rule.upper) : rule.upper;
    const lo = isK1 ? Math.log(rule.lower ?? 1 / rule.upper) : 0;
    const keepOf = (v: number) => (isK1 ? v >= lo && v <= up : v <= up);
    const keep = new Uint8Array(n);
    let perToken: Float64Array = stat;
    let perSeq: Float64Array | null = null;
    if (option.startsWith('token')) {
      for (let i = 0; i < n; i++) keep[i] = keepOf(stat[i] as number) ? 1 : 0;
    } else {
      perSeq = new Float64Array(rows);
      for (let b = 0; b < rows; b++) {
        let s = 0;
        let cnt = 0;
        let max = Number.NEGATIVE_INFINITY;
        for (let t = 0; t < cols; t++) {
          const i = b * cols + t;
          if (responseMask[i] === 0) continue;
          s += stat[i] as number;
          cnt++;
          max = Math.max(max, stat[i] as number);
        }
        perSeq[b] = option.startsWith('seq_sum')
          ? s
          : option.startsWith('seq_mean')
            ? maskedMeanOf(s, cnt)
            : cnt > 0
              ? max
              : 0;
      }
      perToken = new Float64Array(n);
      for (let b = 0; b < rows; b++) {
        const keepB = keepOf(perSeq[b] as number) ? 1 : 0;
        for (let t = 0; t < cols; t++) {
          perToken[b * cols + t] = perSeq[b] as number;
          keep[b * cols + t] = keepB;
        }
      }
    }
    const p = `rollout_rs_${option}`;
    const seqValues = perSeq ?? maskedRowMeansUnchecked(perToken, responseMask, shape);
    const seqValid = Float64Array.from(Array.from(seqValues).filter((_, b) => validRow[b] === 1));
    metrics[`${p}_mean`] = maskedMeanUnchecked(perToken, responseMask);
    if (perSeq && seqValid.length > 0) {
      const st = listStats(seqValid);
      metrics[`${p}_max`] = st.max;
      metrics[`${p}_min`] = st.min;
      metrics[`${p}_fraction_high`] = fractionOf(seqValid, (v) => v > up);
      metrics[`${p}_fraction_low`] = isK1 ? fractionOf(seqValid, (v) => v < lo) : 0;
    } else {
      let max = Number.NEGATIVE_INFINITY;
      let min = Number.POSITIVE_INFINITY;
      for (let i = 0; i < n; i++) {
        if (responseMask[i] === 0) continue;
        max = Math.max(max, perToken[i] as number);
        min = Math.min(min, perToken[i] as number);
      }
      metrics[`${p}_max`] = max;
      metrics[`${p}_min`] = min;
      metrics[`${p}_fraction_high`] = maskedMeanMapped(perToken, responseMask, (v) => (v > up ? 1 : 0));
      metrics[`${p}_fraction_low`] = isK1
        ? maskedMeanMapped(perToken, responseMask, (v) => (v < lo ? 1 : 0))
        : 0;
    }
    if (maskCountUnchecked(responseMask) > 1) {
      const c = (v: number) => Math.min(Math.max(v, isK1 ? lo : 0), up);
      const mean = maskedMeanMapped(perToken, responseMask, c);
      const meanSq = maskedMeanMapped(perToken, responseMask, (v) => c(v) ** 2);
      metrics[`${p}_std`] = Math.sqrt(Math.max(meanSq - mean * mean, 0));
    } else {
      metrics[`${p}_std`] = 0;
    }
    if (seqValid.length > 0) {
      const st = listStats(seqValid);
      metrics[`${p}_seq_mean`] = st.mean;
      metrics[`${p}_seq_std`] = st.std;
      metrics[`${p}_seq_max`] = st.max;
      metrics[`${p}_seq_min`] = st.min;
      metrics[`${p}_seq_max_deviation`] = Math.max(Math.abs(st.max), Math.abs(st.min));
      metrics[`${p}_seq_fraction_high`] = fractionOf(seqValid, (v) => v > up);
      if (isK1) metrics[`${p}_seq_fraction_low`] = fractionOf(seqValid, (v) => v < lo);
    } else {
      for (const s of [
        'seq_mean',
        'seq_std',
        'seq_max',
        'seq_min',
        'seq_max_deviation',
        'seq_fraction_high',
        'seq_fraction_low',
      ]) {
        metrics[`${p}_${s}`] = 0;
      }
    }
    let rejectedTokens = 0;
    let rejectedRows = 0;
    for (let b = 0; b < rows; b++) {
      let rowRejected = false;
      for (let t = 0; t < cols; t++) {
        const i = b * cols + t;
        combined[i] = (combined[i] as number) * (keep[i] as number);
        if (responseMask[i] !== 0 && keep[i] === 0) {
          rejectedTokens++;
          rowRejected = true;
        }
      }
      if (rowRejected) rejectedRows++;
    }
    const valid = maskCountUnchecked(responseMask);
    metrics[`${p}_masked_fraction`] = maskedMeanOf(rejectedTokens, valid);
    metrics[`${p}_seq_masked_fraction`] = nValidRows > 0 ? rejectedRows / nValidRows : 0;
  }
  const out = outputBuffer(options.out, n, `[${rows},${cols}]`);
  checkOutNotAliased(out, 'out', { log_ratio: logRatio, response_mask: responseMask });
  let rejected = 0;
  let rowsRejected = 0;
  for (let b = 0; b < rows; b++) {
    let any = false;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      out[i] = (responseMask[i] as number) * (combined[i] as number);
      if (responseMask[i] !== 0 && combined[i] === 0) {
        rejected++;
        any = true;
      }
    }
    if (any) rowsRejected++;
  }
  metrics.rollout_rs_masked_fraction = maskedMeanOf(rejected, maskCountUnchecked(responseMask));
  metrics.rollout_rs_seq_masked_fraction = rowsRejected / rows;
  return { mask: out, metrics };
}

/**
 * verl `compute_offpolicy_metrics(old_log_prob, rollout_log_prob, response_mask)`: training/rollout
 * perplexities (batch means of per-row `exp(−masked_mean_t(lp))`), `kl = masked_mean(rollout − old)`,
 * `k3_kl = masked_mean(exp(ℓ) − ℓ − 1)` (ℓ = old − rollout, unclamped), log-PPL differences,
 * `ppl_ratio`, `chi2_token = masked_mean(exp(clamp(ℓ))²) − 1`, `chi2_seq = mean_b exp(2·clamp(Σ_t ℓ)) − 1`.
 */
export function offPolicyMetrics(inputs: RolloutLogProbs, shape: Shape2): RolloutMetrics {
  const { oldLogProb, rolloutLogProb, responseMask } = inputs;
  checkLogRatioBatch(oldLogProb, responseMask, shape, 'old_log_prob');
  checkLogRatioBatch(rolloutLogProb, responseMask, shape, 'rollout_log_prob');
  const { rows, cols } = shape;
  const n = rows * cols;
  const meanTrain = maskedRowMeansUnchecked(oldLogProb, responseMask, shape);
  const meanRollout = maskedRowMeansUnchecked(rolloutLogProb, responseMask, shape);
  const lr = new Float64Array(n);
  for (let i = 0; i < n; i++)
    if (responseMask[i] !== 0) lr[i] = (oldLogProb[i] as number) - (rolloutLogProb[i] as number);
  const mean = (f: (b: number) => number) => {
    let s = 0;
    for (let b = 0; b < rows; b++) s += f(b);
    return s / rows;
  };
  const diff = Float64Array.from(meanRollout, (v, b) => v - (meanTrain[b] as number));
  const d = listStats(diff);
  let chiSeq = 0;
  for (let b = 0; b < rows; b++) {
    let s = 0;
    for (let t = 0; t < cols; t++) s += lr[b * cols + t] as number;
    chiSeq += Math.exp(2 * clampL(s));
  }
  return {
    training_ppl: mean((b) => Math.exp(-(meanTrain[b] as number))),
    training_log_ppl: mean((b) => -(meanTrain[b] as number)),
    kl: maskedMeanMapped(lr, responseMask, (v) => -v),
    k3_kl: maskedMeanMapped(lr, responseMask, (v) => Math.exp(v) - v - 1),
    rollout_ppl: mean((b) => Math.exp(-(meanRollout[b] as number))),
    rollout_log_ppl: mean((b) => -(meanRollout[b] as number)),
    log_ppl_diff: d.mean,
    log_ppl_abs_diff: mean((b) => Math.abs(diff[b] as number)),
    log_ppl_diff_max: d.max,
    log_ppl_diff_min: d.min,
    ppl_ratio: mean((b) => Math.exp(diff[b] as number)),
    chi2_token: maskedMeanMapped(lr, responseMask, (v) => Math.exp(clampL(v)) ** 2) - 1,
    chi2_seq: chiSeq / rows - 1,
  };
}

export interface RolloutCorrectionOptions {
  /** IS weights; null disables them (verl `rollout_is: null`). Their buffer is `outWeights`. */
  is?: Omit<RolloutIsOptions, 'out'> | null;
  /** Rejection rules; null disables rejection (verl `rollout_rs: null`). */
  rejection?: RsRule[] | { rolloutRs: string; threshold: string | number } | null;
  /**
   * A [B,T] buffer for `weights` (see {@link OutOption}); it is then the returned `weights`. Checked
   * even when `is` is disabled, and then left untouched (`weights` is null).
   */
  outWeights?: Float32Array | null;
  /** A [B,T] buffer for `mask` (see {@link OutOption}); it is then the returned `mask`. */
  outMask?: Float32Array | null;
}

export interface RolloutCorrectionResult {
  /** null when IS is disabled. */
  weights: Float32Array | null;
  /** The response mask after rejection (a copy of the input when rejection is disabled). */
  mask: Float32Array;
  /** All metrics with verl's `rollout_corr/` prefix. */
  metrics: RolloutMetrics;
}

/**
 * verl `compute_rollout_correction_and_rejection_mask(old_log_prob, rollout_log_prob, response_mask,
 * rollout_is, rollout_is_threshold, rollout_is_batch_normalize, rollout_rs, rollout_rs_threshold)`:
 * `ℓ = old − rollout`, IS weights ({@link rolloutIsWeights}), rejection ({@link rolloutRejectionMask}),
 * off-policy diagnostics ({@link offPolicyMetrics}), metrics prefixed `rollout_corr/`.
 * `outWeights` / `outMask` reuse [B,T] buffers for the two arrays; a wrong one is SHAPE_MISMATCH or
 * BAD_ARGUMENT naming the option. `is.out` is refused (BAD_ARGUMENT): the weights buffer is `outWeights`.
 */
export function rolloutCorrection(
  inputs: RolloutLogProbs,
  shape: Shape2,
  options: RolloutCorrectionOptions = {},
): RolloutCorrectionResult {
  const { oldLogProb, rolloutLogProb, responseMask } = inputs;
  checkLogRatioBatch(oldLogProb, responseMask, shape, 'old_log_prob');
  checkLogRatioBatch(rolloutLogProb, responseMask, shape, 'rollout_log_prob');
  const n = shape.rows * shape.cols;
  const shapeText = `[${shape.rows},${shape.cols}]`;
  const isOut = (options.is as RolloutIsOptions | null | undefined)?.out;
  if (isOut !== undefined && isOut !== null) {
    // a JavaScript caller's `is.out` would otherwise be silently replaced by outWeights
    throw new LabError('BAD_ARGUMENT', 'is.out: pass the weights buffer as the outWeights option', {
      details: { field: 'is.out' },
    });
  }
  const outWeights =
    options.outWeights === undefined || options.outWeights === null
      ? null
      : outputBuffer(options.outWeights, n, shapeText, 'outWeights');
  const outMask = outputBuffer(options.outMask, n, shapeText, 'outMask');
  const named = { old_log_prob: oldLogProb, rollout_log_prob: rolloutLogProb, response_mask: responseMask };
  checkOutNotAliased(outWeights, 'outWeights', named);
  checkOutNotAliased(outMask, 'outMask', { ...named, outWeights });
  const logRatio = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (responseMask[i] !== 0) logRatio[i] = (oldLogProb[i] as number) - (rolloutLogProb[i] as number);
  }
  const metrics: RolloutMetrics = {};
  let weights: Float32Array | null = null;
  if (options.is) {
    const r = rolloutIsWeights({ logRatio, responseMask }, shape, { ...options.is, out: outWeights });
    weights = r.weights;
    Object.assign(metrics, r.metrics);
  }
  const mask = outMask;
  if (options.rejection) {
    const r = rolloutRejectionMask({ logRatio, responseMask }, shape, options.rejection, { out: mask });
    Object.assign(metrics, r.metrics);
  } else {
    mask.set(responseMask);
  }
  Object.assign(metrics, offPolicyMetrics({ oldLogProb, rolloutLogProb, responseMask }, shape));
  const prefixed: RolloutMetrics = {};
  for (const [k, v] of Object.entries(metrics)) prefixed[`rollout_corr/${k}`] = v;
  return { weights, mask, metrics: prefixed };
}
