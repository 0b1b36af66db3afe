/**
 * What a PPO update needs of a policy, and the two adapters the lab has: the tabular context policy
 * (src/policy/contextPolicy.ts) and the GRU sequence model (src/policy/sequenceModel.ts).
 *
 * A {@link PolicyModel} is flat parameters the optimizer updates in place, a forward pass giving
 * `log pi(token | position)` of every position of a batch (`[B,T]`, verl's actor `compute_log_prob`),
 * and a backward pass from `∂loss/∂log_prob [B,T]` (plus, optionally, verl's entropy bonus) to
 * `∂loss/∂params`. The batch type `B` is the model's own: a {@link PackedBatch} for the table (its
 * rows are contexts), a {@link SequenceBatch} for the GRU (prompt + response per row); the update's
 * `[B,T]` tensors (mask, advantages, old log-probs) are laid out by {@link PolicyModel.shapeOf}.
 */
import type { LossAggMode } from '../core/aggLoss.js';
import { aggLossGrad } from '../core/aggLoss.js';
import type { Shape2 } from '../core/batch.js';
import { entropyLossGrad } from '../core/entropy.js';
import { type ContextPolicy, chainLogProbGrad } from '../policy/contextPolicy.js';
import type { SequenceBatch, SequenceModel } from '../policy/sequenceModel.js';
import { gatherLogProbs, type PackedBatch } from './tokenLearner.js';

/**
 * verl's entropy bonus of one step: `loss −= coef · agg_loss(H, mask, mode)` with `H` the tau = 1
 * entropy of the next-token distribution at every position (verl `entropy_coeff`).
 */
export interface EntropyBonus {
  coef: number;
  /** verl `loss_agg_mode` of the entropy term (the policy loss's). */
  mode: LossAggMode;
  /** `[B,T]` mask of the positions in the term (the step's response mask). */
  mask: Float32Array;
}

/** What {@link ppoUpdate} needs of a policy; `B` is the batch type its forward pass reads. */
export interface PolicyModel<B = PackedBatch> {
  /** The flat parameter vector the optimizer updates in place. */
  readonly params: Float64Array;
  /** The `[B,T]` layout of the update's per-token tensors for `batch`. */
  shapeOf(batch: B): Shape2;
  /** Rows `[from, to)` of `batch` as a batch of its own, in the same `[·,T]` layout (mini-batches). */
  rows(batch: B, from: number, to: number): B;
  /** `log pi(token | position)` at every position of `batch` (`[B,T]`, 0 at padding); a fresh array. */
  logProbAt(batch: B): Float64Array;
  /**
   * `∂loss/∂params` from `∂loss/∂log_prob` at the positions of `batch` (`[B,T]`), plus the entropy
   * bonus when given with `coef > 0`. Call it after {@link logProbAt} on the same batch and before
   * the parameters change (a sequence model backpropagates its last forward pass). The result may be
   * the model's own buffer, valid until the next call.
   */
  backward(batch: B, gradLogProb: Float64Array, entropy?: EntropyBonus): Float64Array;
  /** Throws NON_FINITE naming the tensor and `step` for a non-finite entry (models that check). */
  checkFinite?(values: Float64Array, what: 'params' | 'grads', step: number): void;
}

/**
 * A model whose next-token distributions can be listed row by row: `table [R, V]` and which row each
 * position of `batch` reads (`[B,T]`). The clip sweep's exact KL (clipSweep.ts `measureDrift`) needs it.
 */
export interface PolicyRows<B = PackedBatch> {
  readonly vocab: number;
  logProbRows(batch: B): { table: Float64Array; rowOf: ArrayLike<number> };
}

/** Rows `[from, to)` of a packed batch as a batch of its own (views, no copy). */
export function batchRows(batch: PackedBatch, from: number, to: number): PackedBatch {
  const { cols } = batch.shape;
  return {
    shape: { rows: to - from, cols },
    tokens: batch.tokens.subarray(from * cols, to * cols),
    contexts: batch.contexts.subarray(from * cols, to * cols),
    roles: batch.roles.subarray(from * cols, to * cols),
    lengths: batch.lengths.subarray(from, to),
  };
}

/**
 * The tabular softmax policy as a {@link PolicyModel}: parameters = logits `[contexts, vocab]`;
 * `d log pi(v|c)/dz[c,u] = [u=v] − pi(u|c)` chains the log-prob gradient into the logits
 * (`chainLogProbGrad`). The entropy bonus is core `entropyLossGrad` on the logits each position
 * reads, scattered into its context's row (`∂loss/∂z −= coef · ∂agg(H)/∂z`, masked positions only).
 */
export function tabularModel(policy: ContextPolicy): PolicyModel<PackedBatch> & PolicyRows<PackedBatch> {
  const V = policy.vocab;
  return {
    params: policy.logits,
    vocab: V,
    shapeOf: (batch) => batch.shape,
    rows: batchRows,
    logProbRows: (batch) => ({ table: policy.logProbabilities(), rowOf: batch.contexts }),
    logProbAt: (batch) => gatherLogProbs(policy.logProbabilities(), V, batch),
    backward: (batch, gradLogProb, entropy) => {
      const grad = chainLogProbGrad(
        policy.probabilities(),
        policy.contexts,
        V,
        batch.contexts,
        batch.tokens,
        gradLogProb,
      );
      if (entropy && entropy.coef > 0) {
        const { rows, cols } = batch.shape;
        const n = rows * cols;
        // the logits at each position are its context's row
        const z = new Float64Array(n * V);
        for (let i = 0; i < n; i++) {
          const c = batch.contexts[i] as number;
          z.set(policy.logits.subarray(c * V, c * V + V), i * V);
        }
        const eg = entropyLossGrad(
          { logits: z, responseMask: entropy.mask },
          { rows, cols, vocab: V },
          entropy.mode,
        ).grad;
        for (let i = 0; i < n; i++) {
          if (entropy.mask[i] === 0) continue;
          const c = batch.contexts[i] as number;
          for (let v = 0; v < V; v++)
            grad[c * V + v] = (grad[c * V + v] as number) - entropy.coef * (eg[i * V + v] as number);
        }
      }
      return grad;
    },
  };
}

/**
 * Rows `[from, to)` of a sequence batch (views, no copy), keeping the parent's `responseCols` so the
 * rows' `[·,T]` tensors are slices of the parent's.
 */
export function sequenceRows(batch: SequenceBatch, from: number, to: number): SequenceBatch {
  const { cols } = batch;
  return {
    rows: to - from,
    cols,
    tokens: batch.tokens.subarray(from * cols, to * cols),
    lengths: batch.lengths.subarray(from, to),
    starts: batch.starts.subarray(from, to),
    responseCols: batch.responseCols,
  };
}

/**
 * The GRU sequence model as a {@link PolicyModel}: `[B,T]` = `[rows, responseCols]` (the response
 * tokens), forward `model.logProbs`, backward `model.backward` (backpropagation through time of the
 * last forward pass; the entropy bonus enters as `∂loss/∂H = −coef · ∂agg(H)/∂H`, core
 * `aggLossGrad` weights), and the model's finiteness check.
 */
export function sequencePolicyModel(model: SequenceModel): PolicyModel<SequenceBatch> {
  return {
    params: model.params,
    shapeOf: (batch) => ({ rows: batch.rows, cols: batch.responseCols }),
    rows: sequenceRows,
    logProbAt: (batch) => model.logProbs(batch),
    backward: (batch, gradLogProb, entropy) => {
      if (!entropy || !(entropy.coef > 0)) return model.backward(gradLogProb);
      const hWeights = aggLossGrad(
        entropy.mask,
        { rows: batch.rows, cols: batch.responseCols },
        entropy.mode,
      );
      const gH = new Float64Array(hWeights.length);
      for (let i = 0; i < gH.length; i++) gH[i] = -entropy.coef * (hWeights[i] as number);
      return model.backward(gradLogProb, gH);
    },
    checkFinite: (values, what, step) => model.checkFinite(values, what, step),
  };
}
