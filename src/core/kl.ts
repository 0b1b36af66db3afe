/**
 * verl's KL penalty estimators (`kl_penalty` in core_algos.py; docs/verl-semantics.md §6), the KL-in-reward step of
 * the trainer (`apply_kl_penalty`) and the KL coefficient controllers (`FixedKLController`,
 * `AdaptiveKLController`). With `d = logprob − ref_logprob` (elementwise, `[B,T]`, no mask):
 *
 * | name | value |
 * |---|---|
 * | `kl`, `k1` | `d` |
 * | `abs` | `|d|` |
 * | `mse`, `k2` | `½ d²` |
 * | `low_var_kl`, `k3` | `k = clamp(−d, −20, 20)`, `clamp(exp(k) − k − 1, −10, 10)` |
 *
 * `full` and every `<name>+` (documented by verl as "forward value of name, gradient of k2") raise
 * NotImplementedError at the pinned verl commit; here they are `LabError('NOT_SUPPORTED')`. Any
 * other name is `UNKNOWN_MODE`.
 */
import {
  checkFinite,
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
import { maskedMeanOf } from './maskedPrimitives.js';

/** The `[B,T]` (or flat) log-probs whose per-token KL verl `kl_penalty` estimates. */
export interface KlPenaltyInputs {
  /** Log-probs under the current (or old) policy. */
  logprob: FloatArray;
  /** Log-probs under the reference policy. */
  refLogprob: FloatArray;
}

/** The `[B,T]` inputs of verl `apply_kl_penalty`. */
export interface KlRewardInputs {
  tokenLevelScores: FloatArray;
  oldLogProb: FloatArray;
  refLogProb: FloatArray;
  responseMask: MaskArray;
}

export type KlPenaltyName = 'kl' | 'k1' | 'abs' | 'mse' | 'k2' | 'low_var_kl' | 'k3';
/** Every `kl_penalty` name verl accepts at the pinned commit (aliases included: k1 = kl, k2 = mse, k3 = low_var_kl). */
export const KL_PENALTY_NAMES: readonly KlPenaltyName[] = [
  'kl',
  'k1',
  'abs',
  'mse',
  'k2',
  'low_var_kl',
  'k3',
];

/** verl's clamp of the k3 log-ratio and of the k3 value. */
export const K3_LOG_RATIO_CLAMP = 20;
/** verl's clamp of the k3 (low_var_kl) value: `clamp(kl, -10, 10)`. */
export const K3_VALUE_CLAMP = 10;

/** Throws NOT_SUPPORTED for `full` and `+` names (verl raises), UNKNOWN_MODE for anything else. */
export function checkKlPenaltyName(name: unknown, field = 'kl_penalty'): asserts name is KlPenaltyName {
  if ((KL_PENALTY_NAMES as readonly unknown[]).includes(name)) return;
  if (name === 'full' || (typeof name === 'string' && name.endsWith('+'))) {
    throw new LabError(
      'NOT_SUPPORTED',
      `${field}: ${JSON.stringify(name)} raises NotImplementedError in verl at the pinned commit (the '+' names and 'full' are not implemented)`,
      { details: { field, value: name } },
    );
  }
  throw new LabError(
    'UNKNOWN_MODE',
    `${field}: unknown KL penalty ${JSON.stringify(name)}; expected one of ${KL_PENALTY_NAMES.join(', ')}`,
    { details: { field, value: name } },
  );
}

export interface KlPenaltyOptions extends OutOption {
  /** Shape for error positions; default `[1, n]`. */
  shape?: Shape2;
  /**
   * Response mask: when given, log-probs only need to be finite where it is 1 and the output is 0
   * where it is 0 (verl computes the padding too, and multiplies by the mask later).
   */
  mask?: MaskArray | null;
}

/**
 * verl `kl_penalty(logprob, ref_logprob, kl_penalty)`: per-token KL estimate (table in the file
 * header), `Float32Array` of the same length. Throws NON_FINITE naming the field and position,
 * SHAPE_MISMATCH, BAD_MASK, NOT_SUPPORTED, UNKNOWN_MODE.
 */
export function klPenalty(
  inputs: KlPenaltyInputs,
  name: KlPenaltyName,
  options: KlPenaltyOptions = {},
): Float32Array {
  const { logprob, refLogprob } = inputs;
  checkKlPenaltyName(name);
  const shape = options.shape ?? { rows: 1, cols: logprob.length };
  checkShape(shape);
  const n = shape.rows * shape.cols;
  const shapeText = `[${shape.rows},${shape.cols}]`;
  checkLength(logprob, n, 'logprob', shapeText);
  checkLength(refLogprob, n, 'ref_logprob', shapeText);
  const mask = options.mask ?? null;
  if (mask) {
    checkLength(mask, n, 'response_mask', shapeText);
    checkMask(mask, shape.cols);
    checkFiniteWhereMasked(logprob, mask, shape.cols, 'logprob');
    checkFiniteWhereMasked(refLogprob, mask, shape.cols, 'ref_logprob');
  } else {
    checkFinite(logprob, shape.cols, 'logprob');
    checkFinite(refLogprob, shape.cols, 'ref_logprob');
  }
  const out = outputBuffer(options.out, n, shapeText);
  checkOutNotAliased(out, 'out', { logprob, ref_logprob: refLogprob, response_mask: mask });
  for (let i = 0; i < n; i++) {
    if (mask && mask[i] === 0) {
      out[i] = 0;
      continue;
    }
    const d = (logprob[i] as number) - (refLogprob[i] as number);
    switch (name) {
      case 'kl':
      case 'k1':
        out[i] = d;
        break;
      case 'abs':
        out[i] = Math.abs(d);
        break;
      case 'mse':
      case 'k2':
        out[i] = 0.5 * d * d;
        break;
      case 'low_var_kl':
      case 'k3': {
        const k = Math.min(Math.max(-d, -K3_LOG_RATIO_CLAMP), K3_LOG_RATIO_CLAMP);
        out[i] = Math.min(Math.max(Math.exp(k) - k - 1, -K3_VALUE_CLAMP), K3_VALUE_CLAMP);
        break;
      }
    }
  }
  return out;
}

/** Result of {@link applyKlPenalty}. */
export interface KlRewardResult {
  /** `token_level_scores − β·kld`, `[B,T]`. */
  tokenLevelRewards: Float32Array;
  /** `kld = kl_penalty(old, ref, name)·m`, `[B,T]`. */
  kld: Float32Array;
  /** `mean_b(masked_mean_t(kld))` (per-row denominator `Σ_t m + 1e-8`), what the controller is fed. */
  currentKl: number;
}

/** Output buffers of {@link applyKlPenalty}: `out` for the rewards, `outKld` for `kld` (both [B,T]). */
export interface ApplyKlPenaltyOptions extends OutOption {
  outKld?: Float32Array | null;
}

/**
 * verl trainer `apply_kl_penalty` (KL in the reward, `algorithm.use_kl_in_reward`):
 * `kld = kl_penalty(old_log_probs, ref_log_prob, name)·m`, `token_level_rewards =
 * token_level_scores − β·kld`, `current_kl = mean_b(masked_mean_t(kld, m))`. Default name `kl`.
 */
export function applyKlPenalty(
  inputs: KlRewardInputs,
  shape: Shape2,
  beta: number,
  name: KlPenaltyName = 'kl',
  options: ApplyKlPenaltyOptions = {},
): KlRewardResult {
  const { tokenLevelScores, oldLogProb, refLogProb, responseMask } = inputs;
  if (!Number.isFinite(beta)) {
    throw new LabError('BAD_ARGUMENT', `kl_coef: must be finite, got ${beta}`, {
      details: { field: 'kl_coef', value: beta },
    });
  }
  checkShape(shape);
  checkLength(
    tokenLevelScores,
    shape.rows * shape.cols,
    'token_level_scores',
    `[${shape.rows},${shape.cols}]`,
  );
  checkFinite(tokenLevelScores, shape.cols, 'token_level_scores');
  const shapeText = `[${shape.rows},${shape.cols}]`;
  const outKld = options.outKld
    ? outputBuffer(options.outKld, shape.rows * shape.cols, shapeText, 'outKld')
    : null;
  // checked here, before klPenalty writes outKld, so that the errors use this kernel's names
  const named = {
    token_level_scores: tokenLevelScores,
    old_log_prob: oldLogProb,
    ref_log_prob: refLogProb,
    response_mask: responseMask,
  };
  checkOutNotAliased(outKld, 'outKld', named);
  checkOutNotAliased(options.out, 'out', { ...named, outKld });
  const kld = klPenalty({ logprob: oldLogProb, refLogprob: refLogProb }, name, {
    shape,
    mask: responseMask,
    out: outKld,
  });
  const rewards = outputBuffer(options.out, kld.length, `[${shape.rows},${shape.cols}]`);
  let sumRows = 0;
  for (let b = 0; b < shape.rows; b++) {
    let s = 0;
    let n = 0;
    for (let t = 0; t < shape.cols; t++) {
      const i = b * shape.cols + t;
      const m = responseMask[i] as number;
      kld[i] = (kld[i] as number) * m;
      s += kld[i] as number;
      n += m;
      rewards[i] = (tokenLevelScores[i] as number) - beta * (kld[i] as number);
    }
    sumRows += maskedMeanOf(s, n);
  }
  return { tokenLevelRewards: rewards, kld, currentKl: sumRows / shape.rows };
}

/** verl `algorithm.kl_ctrl` config. */
export interface KlControllerConfig {
  type: 'fixed' | 'adaptive';
  /** Initial β (`kl_coef`). verl default 0.001. */
  klCoef: number;
  /** Adaptive: target KL. verl default 0.1. */
  targetKl?: number;
  /** Adaptive: horizon in samples. verl default 10000. */
  horizon?: number;
}

/**
 * One step of verl's `AdaptiveKLController.update(current_kl, n_steps)` (Ziegler et al. 2019):
 * `β ← β·(1 + clip(kl/target − 1, −0.2, 0.2)·n_steps/horizon)`.
 */
export function adaptiveKlUpdate(
  value: number,
  currentKl: number,
  nSteps: number,
  targetKl: number,
  horizon: number,
): number {
  const err = Math.min(Math.max(currentKl / targetKl - 1, -0.2), 0.2);
  return value * (1 + (err * nSteps) / horizon);
}

/** A KL coefficient controller: `value` is β; `update` is called once per batch. */
export interface KlController {
  readonly value: number;
  update(currentKl: number, nSteps: number): void;
}

/** verl `get_kl_controller`: fixed (β constant) or adaptive ({@link adaptiveKlUpdate}). */
export function createKlController(config: KlControllerConfig): KlController {
  const { klCoef } = config;
  if (!Number.isFinite(klCoef) || klCoef < 0) {
    throw new LabError('BAD_ARGUMENT', `kl_coef: must be a finite number >= 0, got ${klCoef}`, {
      details: { field: 'kl_coef' },
    });
  }
  if (config.type === 'fixed') {
    return { value: klCoef, update() {} };
  }
  if (config.type !== 'adaptive') {
    throw new LabError(
      'UNKNOWN_MODE',
      `kl_ctrl.type: unknown controller ${JSON.stringify(config.type)}; expected fixed or adaptive`,
      {
        details: { field: 'kl_ctrl.type' },
      },
    );
  }
  const target = config.targetKl ?? 0.1;
  const horizon = config.horizon ?? 10000;
  if (!(target > 0) || !(horizon > 0) || !Number.isFinite(target) || !Number.isFinite(horizon)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `kl_ctrl: target_kl and horizon must be positive, got ${target}, ${horizon}`,
      {
        details: { field: 'kl_ctrl' },
      },
    );
  }
  let value = klCoef;
  return {
    get value() {
      return value;
    },
    update(currentKl: number, nSteps: number) {
      if (!Number.isFinite(currentKl) || !Number.isFinite(nSteps)) {
        throw new LabError(
          'NON_FINITE',
          `current_kl / n_steps: must be finite, got ${currentKl}, ${nSteps}`,
          {
            details: { field: 'current_kl' },
          },
        );
      }
      value = adaptiveKlUpdate(value, currentKl, nSteps, target, horizon);
    },
  };
}
