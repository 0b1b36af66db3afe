/**
 * verl `entropy_from_logits` and `compute_entropy_loss` (docs/verl-semantics.md §7): the entropy of the softmax over
 * the vocabulary at each position, and its aggregation with agg_loss.
 */
import { type AggOptions, aggLossGrad, aggLossNamed, type LossAggMode } from './aggLoss.js';
import {
  checkFinite,
  checkLength,
  checkOutNotAliased,
  checkShape,
  type FloatArray,
  type MaskArray,
  type OutOption,
  outputBuffer,
} from './batch.js';
import { LabError } from './errors.js';

/** The inputs of verl's entropy loss: `[B,T,V]` logits and the `[B,T]` response mask. */
export interface EntropyLossInputs {
  logits: FloatArray;
  responseMask: MaskArray;
}

/** Shape of a `[B,T,V]` logits tensor. */
export interface Shape3 {
  rows: number;
  cols: number;
  vocab: number;
}

/**
 * verl `entropy_from_logits(z) = logsumexp(z) − Σ_v softmax(z)_v·z_v` over the last axis.
 * `logits` row-major `[B,T,V]` → `Float32Array [B,T]`. Computed stably: with `M = max_v z`,
 * `s = Σ exp(z − M)`, `H = M + log s − Σ exp(z − M)·z / s`. Non-finite logits are NON_FINITE
 * (every position, as there is no mask here). `options.out`: a [B,T] buffer to write into.
 */
export function entropyFromLogits(logits: FloatArray, shape: Shape3, options: OutOption = {}): Float32Array {
  const { rows, cols, vocab } = shape;
  checkShape({ rows, cols });
  if (!Number.isInteger(vocab) || vocab <= 0) {
    throw new LabError('SHAPE_MISMATCH', `logits: vocab size must be a positive integer, got ${vocab}`, {
      details: { field: 'logits', vocab },
    });
  }
  checkLength(logits, rows * cols * vocab, 'logits', `[${rows},${cols},${vocab}]`);
  checkFinite(logits, cols * vocab, 'logits');
  const out = outputBuffer(options.out, rows * cols, `[${rows},${cols}]`);
  checkOutNotAliased(out, 'out', { logits });
  for (let p = 0; p < rows * cols; p++) {
    const base = p * vocab;
    let max = Number.NEGATIVE_INFINITY;
    for (let v = 0; v < vocab; v++) max = Math.max(max, logits[base + v] as number);
    let s = 0;
    let sz = 0;
    for (let v = 0; v < vocab; v++) {
      const z = logits[base + v] as number;
      const e = Math.exp(z - max);
      s += e;
      sz += e * z;
    }
    out[p] = max + Math.log(s) - sz / s;
  }
  return out;
}

/**
 * verl `compute_entropy_loss(logits, response_mask, loss_agg_mode)` =
 * `agg_loss(entropy_from_logits(logits), m, mode)` (verl passes no global batch info here; the
 * option exists for callers that want it). The actor subtracts `entropy_coeff ·` this.
 */
export function computeEntropyLoss(
  inputs: EntropyLossInputs,
  shape: Shape3,
  mode: LossAggMode = 'token-mean',
  agg: AggOptions = {},
): number {
  const { logits, responseMask } = inputs;
  const entropy = entropyFromLogits(logits, shape);
  return aggLossNamed(entropy, responseMask, { rows: shape.rows, cols: shape.cols }, mode, agg, 'entropy');
}

/**
 * The entropy bonus term and its gradient with respect to the logits: `value = agg_loss(H, m, mode)`
 * (as {@link computeEntropyLoss}, computed in float64) and `grad[b,t,v] = ∂value/∂z[b,t,v] =
 * w[b,t] · ∂H/∂z_v` with `∂H/∂z_v = −p_v (log p_v + H)` and `w = ∂agg/∂H` (aggLossGrad: linear in
 * H for every mode). verl's actor minimises `pg_loss − entropy_coeff · value`, so its logits get
 * `−entropy_coeff · grad`. Shapes: logits `[B,T,V]`, mask `[B,T]`; grad `[B,T,V]` float64, 0 where
 * the mask is 0. Errors: as {@link computeEntropyLoss}; EMPTY_MASK for an all-zero mask.
 */
export function entropyLossGrad(
  inputs: EntropyLossInputs,
  shape: Shape3,
  mode: LossAggMode = 'token-mean',
  agg: AggOptions = {},
): { value: number; grad: Float64Array } {
  const { logits, responseMask } = inputs;
  entropyFromLogits(logits, shape); // validates shape, vocab and finiteness
  const { rows, cols, vocab } = shape;
  const shape2 = { rows, cols };
  const weights = aggLossGrad(responseMask, shape2, mode, agg);
  const grad = new Float64Array(rows * cols * vocab);
  const logp = new Float64Array(vocab);
  let value = 0;
  for (let p = 0; p < rows * cols; p++) {
    const w = weights[p] as number;
    if (w === 0) continue;
    const base = p * vocab;
    let max = Number.NEGATIVE_INFINITY;
    for (let v = 0; v < vocab; v++) max = Math.max(max, logits[base + v] as number);
    let s = 0;
    for (let v = 0; v < vocab; v++) s += Math.exp((logits[base + v] as number) - max);
    const lse = max + Math.log(s);
    let h = 0;
    for (let v = 0; v < vocab; v++) {
      logp[v] = (logits[base + v] as number) - lse;
      h -= Math.exp(logp[v] as number) * (logp[v] as number);
    }
    value += w * h;
    for (let v = 0; v < vocab; v++) {
      const lp = logp[v] as number;
      grad[base + v] = -w * Math.exp(lp) * (lp + h);
    }
  }
  return { value, grad };
}
