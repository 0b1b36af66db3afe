/**
 * The token-level PPO learner for the neural sequence policy: verl's actor update
 * (`dp_actor.update_policy`) on a shared-parameter model instead of a logits table.
 *
 * Per batch: the old log-probs are the first epoch's forward pass (the parameters have not moved
 * since the batch was sampled, so this equals verl's separate `compute_log_prob` pass; epoch 1 has
 * ratio exactly 1). Per epoch: log-probs of every response token (environment tokens included, as
 * verl's actor recomputes them) -> the core kernel `policyLossVanillaGrad` (vanilla clipped loss,
 * `agg_loss`, and `∂loss/∂log_prob [B,T]`) -> the model's backward pass to all parameters ->
 * finiteness check -> global-norm clipping (verl `grad_clip`) -> optimizer step (Adam) -> finiteness
 * check of the parameters. A non-finite gradient or parameter stops training with a LabError naming
 * the step and the tensor; training never continues with NaN weights.
 */
import { type AggDenominator, aggLossDenominator, LOSS_AGG_MODES } from '../core/aggLoss.js';
import type { Shape2 } from '../core/batch.js';
import { LabError } from '../core/errors.js';
import type { PolicyLossMetrics } from '../core/policyLossInputs.js';
import { policyLossVanillaGrad, type VanillaLossOptions } from '../core/vanillaPolicyLoss.js';
import { clipGradNorm, DEFAULT_GRAD_CLIP } from '../policy/gradClip.js';
import type { SequenceBatch, SequenceModel } from '../policy/sequenceModel.js';
import type { Optimizer } from './adam.js';

export interface SequencePpoOptions {
  /** PPO epochs over the batch (full-batch steps); verl `ppo_epochs`. Default 2. */
  epochs?: number;
  /** verl `actor.grad_clip` (global L2 norm bound). Default 1.0. */
  gradClip?: number;
  loss?: VanillaLossOptions;
  /**
   * The old log-probs `[B, T_resp]` to use instead of epoch 1's forward pass: a recomputation made
   * by the caller (decoupled PPO), or the rollout engine's own log-probs (verl's bypass mode, where
   * `rollout_log_probs` serve as `old_log_prob`). Default: epoch 1's forward pass.
   */
  oldLogProb?: Float64Array;
}

export interface SequencePpoStats {
  /** Per epoch: loss and verl metrics before the step, gradient norm before clipping. */
  epochs: { loss: number; metrics: PolicyLossMetrics; gradNorm: number }[];
  denominator: AggDenominator;
  /** The old log-probs `[B, T_resp]` (epoch 1's forward pass). */
  oldLogProb: Float64Array;
}

/**
 * Several PPO epochs of `model` on one batch. `batch` holds prompt + response per row; `advantages`
 * and `mask` are `[B, T_resp]` over the response tokens (`shape.cols = batch.responseCols`). `step`
 * numbers the first optimizer step (for error messages); the caller advances its own counter by
 * `epochs`.
 */
export function sequencePpoUpdate(
  model: SequenceModel,
  optimizer: Optimizer,
  batch: SequenceBatch,
  shape: Shape2,
  advantages: Float32Array,
  mask: Float32Array,
  options: SequencePpoOptions = {},
  step = 0,
): SequencePpoStats {
  const epochs = options.epochs ?? 2;
  const gradClip = options.gradClip ?? DEFAULT_GRAD_CLIP;
  const loss = options.loss ?? {};
  if (!Number.isInteger(epochs) || epochs < 1) {
    throw new LabError('BAD_ARGUMENT', `epochs: expected a positive integer, got ${epochs}`, {
      details: { field: 'epochs', value: epochs },
    });
  }
  if (shape.rows !== batch.rows || shape.cols !== batch.responseCols) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `mask/advantages [${shape.rows}, ${shape.cols}] do not match the batch's responses [${batch.rows}, ${batch.responseCols}]`,
      { details: { field: 'shape', expected: [batch.rows, batch.responseCols] } },
    );
  }
  const mode = loss.lossAggMode ?? 'token-mean';
  if (!LOSS_AGG_MODES.includes(mode)) {
    throw new LabError('UNKNOWN_MODE', `lossAggMode '${mode}' is not one of ${LOSS_AGG_MODES.join(', ')}`, {
      details: { field: 'lossAggMode', value: mode },
    });
  }
  const denominator = aggLossDenominator(mask, shape, mode, loss.agg ?? {});
  const n = shape.rows * shape.cols;
  if (options.oldLogProb && options.oldLogProb.length !== n) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `oldLogProb: expected ${n} values, got ${options.oldLogProb.length}`,
      {
        details: { field: 'oldLogProb', expected: n, actual: options.oldLogProb.length },
      },
    );
  }
  const logProb = new Float64Array(n);
  const oldLogProb = new Float64Array(n);
  const out: SequencePpoStats['epochs'] = [];
  for (let e = 0; e < epochs; e++) {
    model.logProbs(batch, logProb);
    if (e === 0) oldLogProb.set(options.oldLogProb ?? logProb);
    const res = policyLossVanillaGrad({ oldLogProb, logProb, advantages, responseMask: mask }, shape, loss);
    const grads = model.backward(res.grad);
    model.checkFinite(grads, 'grads', step + e);
    const gradNorm = clipGradNorm(grads, gradClip, step + e);
    optimizer.step(model.params, grads);
    model.checkFinite(model.params, 'params', step + e);
    out.push({ loss: res.loss, metrics: res.metrics, gradNorm });
  }
  return { epochs: out, denominator, oldLogProb };
}
