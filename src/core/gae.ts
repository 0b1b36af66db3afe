/**
 * Generalised advantage estimation (https://arxiv.org/abs/1506.02438) as verl's
 * `compute_gae_advantage_return` ("gae"), with verl's multi-turn rule: mask-0 positions (tool or user
 * tokens) are skipped, not treated as steps.
 */
import {
  checkFinite,
  checkMask,
  checkOutNotAliased,
  type FloatArray,
  type MaskArray,
  type OutReturnsOption,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { whitenValidated } from './masked.js';
import { checkMatrixLength, checkTokenBatch } from './rowScores.js';

/** The `[B,T]` inputs of verl `compute_gae_advantage_return`. */
export interface GaeInputs {
  tokenLevelRewards: FloatArray;
  /** The critic's value estimates `V(s_t)`. */
  values: FloatArray;
  responseMask: MaskArray;
}

export interface GaeOptions extends OutReturnsOption {
  /** Discount γ (no default in verl; required). */
  gamma: number;
  /** GAE λ (no default in verl; required). */
  lam: number;
}

export interface GaeResult {
  /** `masked_whiten(adv_raw, m)`: every position transformed, NOT re-masked (as verl). */
  advantages: Float32Array;
  /** `adv_raw + values`, not masked. */
  returns: Float32Array;
}

/**
 * verl `compute_gae_advantage_return`, backwards over t:
 *   δ_t = r_t + γ·nextV − V_t;  ℓ'_t = δ_t + γλ·ℓ;
 *   nextV ← V_t·m_t + (1 − m_t)·nextV;  ℓ ← ℓ'_t·m_t + (1 − m_t)·ℓ;  adv_raw[t] = ℓ
 * (so values and TD errors at mask-0 positions never reach earlier tokens);
 * `returns = adv_raw + V`; `advantages = masked_whiten(adv_raw, m)`. Float32 recursion as verl
 * (γ and γλ rounded to float32, every operation rounded). [B,T] in, [B,T] float32 out.
 * Errors: EMPTY_MASK when fewer than 2 valid tokens (whitening), BAD_ARGUMENT gamma/lam, NON_FINITE
 * rewards or values (anywhere: the recursion reads every position), BAD_MASK, shape errors.
 */
export function gaeAdvantageReturn(inputs: GaeInputs, shape: Shape2, options: GaeOptions): GaeResult {
  const { tokenLevelRewards, values, responseMask } = inputs;
  for (const [field, v] of [
    ['gamma', options.gamma],
    ['lam', options.lam],
  ] as const) {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new LabError('BAD_ARGUMENT', `${field}: expected a finite number, got ${v}`, {
        details: { field, value: v },
      });
    }
  }
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  checkMatrixLength(values, shape, 'values');
  checkFinite(tokenLevelRewards, shape.cols, 'token_level_rewards');
  checkFinite(values, shape.cols, 'values');
  checkMask(responseMask, shape.cols);
  const { rows, cols } = shape;
  const f32 = Math.fround;
  const g = f32(options.gamma);
  const gl = f32(options.gamma * options.lam);
  const shapeText = `[${rows},${cols}]`;
  const out = outputBuffer(options.out, rows * cols, shapeText);
  const returns = outputBuffer(options.outReturns, rows * cols, shapeText, 'outReturns');
  const named = { token_level_rewards: tokenLevelRewards, values, response_mask: responseMask };
  checkOutNotAliased(out, 'out', named);
  checkOutNotAliased(returns, 'outReturns', { ...named, out: options.out });
  const adv = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    let nextV = 0;
    let last = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      const v = values[i] as number;
      const delta = f32(f32((tokenLevelRewards[i] as number) + f32(g * nextV)) - v);
      const candidate = f32(delta + f32(gl * last));
      if (responseMask[i] === 1) {
        nextV = v;
        last = candidate;
      }
      adv[i] = last;
      returns[i] = last + v;
    }
  }
  const advantages = whitenValidated(adv, responseMask, 'advantages', out);
  return { advantages, returns };
}
