/**
 * KL-in-reward helper, as verl's `core_algos.compute_rewards`.
 */
import {
  checkFinite,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type OutOption,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { checkMatrixLength } from './rowScores.js';

/** The `[B,T]` inputs of verl `compute_rewards` (`token_level_scores − kl_ratio·(old − ref)`). */
export interface KlRatioRewardInputs {
  tokenLevelScores: FloatArray;
  oldLogProb: FloatArray;
  refLogProb: FloatArray;
}

/**
 * verl `compute_rewards(token_level_scores, old_log_prob, ref_log_prob, kl_ratio)`:
 * `token_level_scores − (old_log_prob − ref_log_prob)·kl_ratio`, elementwise on [B,T] (no mask),
 * float32 out (each operation rounded to float32, as verl's tensors; `options.out` to reuse a buffer).
 * Errors: SHAPE_MISMATCH, NON_FINITE in any input (row, token), BAD_ARGUMENT kl_ratio.
 */
export function computeRewards(
  inputs: KlRatioRewardInputs,
  shape: Shape2,
  klRatio: number,
  options: OutOption = {},
): Float32Array {
  const { tokenLevelScores, oldLogProb, refLogProb } = inputs;
  if (typeof klRatio !== 'number' || !Number.isFinite(klRatio)) {
    throw new LabError('BAD_ARGUMENT', `kl_ratio: expected a finite number, got ${klRatio}`, {
      details: { field: 'kl_ratio', value: klRatio },
    });
  }
  checkShape(shape);
  checkMatrixLength(tokenLevelScores, shape, 'token_level_scores');
  checkMatrixLength(oldLogProb, shape, 'old_log_prob');
  checkMatrixLength(refLogProb, shape, 'ref_log_prob');
  checkFinite(tokenLevelScores, shape.cols, 'token_level_scores');
  checkFinite(oldLogProb, shape.cols, 'old_log_prob');
  checkFinite(refLogProb, shape.cols, 'ref_log_prob');
  const f32 = Math.fround;
  const k = f32(klRatio);
  const out = outputBuffer(options.out, tokenLevelScores.length, `[${shape.rows},${shape.cols}]`);
  checkOutNotAliased(out, 'out', {
    token_level_scores: tokenLevelScores,
    old_log_prob: oldLogProb,
    ref_log_prob: refLogProb,
  });
  for (let i = 0; i < out.length; i++) {
    const kl = f32((oldLogProb[i] as number) - (refLogProb[i] as number));
    out[i] = (tokenLevelScores[i] as number) - f32(kl * k);
  }
  return out;
}
