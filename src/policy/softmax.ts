/**
 * Softmax and log-sum-exp of one row of logits, the arithmetic every tabular policy here shares
 * (`torch.softmax` / `torch.logsumexp` over the vocabulary dimension in an LLM):
 *
 *   softmax(z)_j = exp(z_j − max z) / Σ_k exp(z_k − max z)
 *   logsumexp(z) = max z + log Σ_k exp(z_k − max z)
 *
 * The row is `logits[offset .. offset + length)`. Subtracting the max keeps exp from overflowing
 * for large logits (the largest term is exp(0) = 1, so the sum is in [1, length]). No validation:
 * the callers check their tables once at the entry of a loop.
 */

/** Largest of `logits[offset .. offset + length)`. */
function rowMax(logits: ArrayLike<number>, offset: number, length: number): number {
  let max = Number.NEGATIVE_INFINITY;
  for (let j = 0; j < length; j++) max = Math.max(max, logits[offset + j] as number);
  return max;
}

/**
 * Writes `softmax(logits[offset .. offset + length))` into `out[outOffset .. outOffset + length)` and
 * returns `out`. Shapes: `logits` holds at least `offset + length` values, `out` at least
 * `outOffset + length`.
 */
export function softmaxRow(
  logits: ArrayLike<number>,
  offset: number,
  length: number,
  out: Float64Array,
  outOffset = 0,
): Float64Array {
  const max = rowMax(logits, offset, length);
  let total = 0;
  for (let j = 0; j < length; j++) {
    const e = Math.exp((logits[offset + j] as number) - max);
    out[outOffset + j] = e;
    total += e;
  }
  for (let j = 0; j < length; j++) out[outOffset + j] = (out[outOffset + j] as number) / total;
  return out;
}

/**
 * `logsumexp(logits[offset .. offset + length)) = max + log Σ exp(z − max)`, so that
 * `log softmax(z)_j = z_j − logsumexp(z)` stays finite where the softmax itself underflows to 0.
 */
export function logSumExpRow(logits: ArrayLike<number>, offset: number, length: number): number {
  const max = rowMax(logits, offset, length);
  let sum = 0;
  for (let j = 0; j < length; j++) sum += Math.exp((logits[offset + j] as number) - max);
  return max + Math.log(sum);
}
