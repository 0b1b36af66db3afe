/**
 * Top-k / top-p (nucleus) sampling of one position, as an inference engine does it, with the two
 * log-probs a training–inference mismatch is made of:
 *
 *   kept set K = topP(topK(z))                          (vLLM's rule, below)
 *   pi_engine(v) = exp(z_v) / Σ_{u∈K} exp(z_u) for v ∈ K, 0 outside      (truncated, renormalised)
 *   log pi_engine(v) = z_v − logsumexp_{u∈K} z_u       (vLLM `logprobs_mode="processed_logprobs"`)
 *   log pi_full(v)   = z_v − logsumexp_u z_u           (the full softmax: what a trainer that does not
 *                                                       replay the logit processors computes, and
 *                                                       vLLM's default `"raw_logprobs"`)
 *
 * Because K is a subset of the vocabulary and the same logits are renormalised over it,
 * `log pi_engine(v) ≥ log pi_full(v)` for every kept v, with equality iff nothing was cut.
 *
 * The kept set follows `apply_top_k_top_p_pytorch` in vLLM (vllm/v1/sample/ops/topk_topp_sampler.py
 * at 01fa3fe7), the reference path of its sampler:
 * - **top-k** (`top_k`, integer ≥ 1; unset = off): sort the logits, take the k-th largest value as a
 *   threshold and mask every logit strictly below it (`logits_sort < top_k_mask`), so tokens tied
 *   with the k-th largest are all kept (K may hold more than k tokens).
 * - **top-p** (`top_p` in (0, 1]; 1 = off), applied after top-k, on the softmax of the logits that
 *   top-k kept: with the probabilities sorted ascending, `probs_sum = cumsum(probs_sort)` and
 *   every token with `probs_sum <= 1 − p` is masked, the most probable token always kept
 *   (`top_p_mask[:, -1] = False`). In exact arithmetic a token is kept iff the probability of the
 *   tokens ranked above it is < p: K is the smallest set of most probable tokens whose probability
 *   reaches p (the token that crosses p is in; when a prefix sums to exactly p, the next one is out).
 * Differences from vLLM, by design: sums here are in float64 (vLLM: float32 softmax and cumsum);
 * tokens with equal logits are ranked lowest index first (torch's sort is not stable, so vLLM's
 * order among exact ties is unspecified); the draw is inverse-CDF over the vocabulary with one
 * uniform from the passed stream (vLLM: the exponential race `argmax(p / Exp(1))`, the same
 * distribution). Temperature, when used, is applied to the logits before calling (as vLLM applies it
 * before top-k/top-p).
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';

/** Truncation options (vLLM `SamplingParams.top_k`, `top_p`). */
export interface TruncationOptions {
  /** Keep the k highest logits (ties with the k-th kept); integer ≥ 1; default undefined = off (vLLM 0/−1). */
  topK?: number | undefined;
  /** Nucleus mass in (0, 1]; default 1 = off. */
  topP?: number | undefined;
}

/** One draw of {@link sampleTruncated}. */
export interface TruncatedSample {
  /** The sampled token id (always in the kept set). */
  token: number;
  /** `log pi_engine(token)`: log of the renormalised truncated probability (the behaviour log-prob). */
  engineLogProb: number;
  /** `log pi_full(token)`: log of the full-softmax probability of the same logits. */
  fullLogProb: number;
  /** Size of the kept set K. */
  kept: number;
}

/**
 * Throws BAD_ARGUMENT naming `top_k` / `top_p` unless top_k is an integer ≥ 1 (or undefined) and
 * top_p a number in (0, 1] (or undefined).
 */
export function checkTruncation(options: TruncationOptions): void {
  const { topK, topP } = options;
  if (topK !== undefined && !(Number.isInteger(topK) && topK >= 1)) {
    throw new LabError('BAD_ARGUMENT', `top_k: expected an integer >= 1, got ${topK}`, {
      details: { field: 'top_k', value: topK },
    });
  }
  if (topP !== undefined && !(typeof topP === 'number' && topP > 0 && topP <= 1)) {
    throw new LabError('BAD_ARGUMENT', `top_p: expected a number in (0, 1], got ${topP}`, {
      details: { field: 'top_p', value: topP },
    });
  }
}

function checkLogits(logits: ArrayLike<number>): void {
  const V = logits.length;
  if (V < 1) {
    throw new LabError('SHAPE_MISMATCH', 'logits: expected at least one value', {
      details: { field: 'logits', actual: 0 },
    });
  }
  let anyFinite = false;
  for (let v = 0; v < V; v++) {
    const z = logits[v] as number;
    // −Infinity is a masked token (probability 0), as an engine's bad-words mask writes it
    if (Number.isNaN(z) || z === Number.POSITIVE_INFINITY) {
      throw new LabError('NON_FINITE', `logits: value ${z} at token ${v} is NaN or +Infinity`, {
        details: { field: 'logits', token: v, value: z },
      });
    }
    if (z !== Number.NEGATIVE_INFINITY) anyFinite = true;
  }
  if (!anyFinite) {
    throw new LabError('BAD_ARGUMENT', 'logits: every token is -Infinity (nothing to sample)', {
      details: { field: 'logits' },
    });
  }
}

/**
 * Marks the kept set: `keep[v] = 1` for v ∈ K, 0 otherwise (length V), and returns `|K|`.
 * Unchecked: callers validate logits and options first.
 */
function markKept(
  logits: ArrayLike<number>,
  topK: number | undefined,
  topP: number,
  keep: Uint8Array,
): number {
  const V = logits.length;
  // ranks by descending logit, lowest id first among ties
  const order = Array.from({ length: V }, (_, v) => v).sort(
    (a, b) => (logits[b] as number) - (logits[a] as number) || a - b,
  );
  let m = V;
  if (topK !== undefined && topK < V) {
    const threshold = logits[order[topK - 1] as number] as number;
    m = topK;
    while (m < V && (logits[order[m] as number] as number) >= threshold) m++; // ties with the k-th kept
  }
  // masked (−Infinity) tokens are never kept, even when top-k reaches them
  while (m > 1 && logits[order[m - 1] as number] === Number.NEGATIVE_INFINITY) m--;
  let n = m;
  if (topP < 1) {
    // softmax over the m tokens top-k kept, then vLLM's ascending cumsum: drop while cumsum <= 1 − p
    const max = logits[order[0] as number] as number;
    let total = 0;
    for (let i = 0; i < m; i++) total += Math.exp((logits[order[i] as number] as number) - max);
    const limit = 1 - topP;
    let cum = 0;
    n = m;
    for (let i = m - 1; i >= 1; i--) {
      cum += Math.exp((logits[order[i] as number] as number) - max) / total;
      if (cum <= limit) n = i;
      else break;
    }
  }
  keep.fill(0);
  for (let i = 0; i < n; i++) keep[order[i] as number] = 1;
  return n;
}

/**
 * `log softmax(z)_v` over the tokens with `keep[u]` (all when `keep` is null), as
 * `(z_v − max) − log Σ_u exp(z_u − max)` summed in token order: the same operations, in the same
 * order, as `SequenceModel.logProbs`, so that an untruncated float64 engine reproduces the trainer's
 * log-probs bit for bit.
 */
function logProbOver(logits: ArrayLike<number>, keep: Uint8Array | null, v: number): number {
  const V = logits.length;
  let max = Number.NEGATIVE_INFINITY;
  for (let u = 0; u < V; u++) if (!keep || keep[u]) max = Math.max(max, logits[u] as number);
  let sum = 0;
  for (let u = 0; u < V; u++) if (!keep || keep[u]) sum += Math.exp((logits[u] as number) - max);
  return (logits[v] as number) - max - Math.log(sum);
}

/**
 * The kept set of {@link sampleTruncated} as a 0/1 mask over the vocabulary (length V = logits.length),
 * written into `out` when given. Errors: BAD_ARGUMENT naming `top_k` / `top_p`; NON_FINITE for a NaN or
 * +Infinity logit; SHAPE_MISMATCH for an `out` of another length.
 */
export function truncationMask(
  logits: ArrayLike<number>,
  options: TruncationOptions = {},
  out?: Uint8Array,
): Uint8Array {
  checkTruncation(options);
  checkLogits(logits);
  const keep = out ?? new Uint8Array(logits.length);
  if (keep.length !== logits.length) {
    throw new LabError('SHAPE_MISMATCH', `out: expected ${logits.length} values, got ${keep.length}`, {
      details: { field: 'out', expected: logits.length, actual: keep.length },
    });
  }
  markKept(logits, options.topK, options.topP ?? 1, keep);
  return keep;
}

/**
 * `log pi_engine(v)` for every token (length V): `z_v − logsumexp_K z` inside the kept set, −Infinity
 * outside (vLLM `processed_logprobs`). Written into `out` when given (length V). Errors as
 * {@link truncationMask}.
 */
export function truncatedLogProbs(
  logits: ArrayLike<number>,
  options: TruncationOptions = {},
  out?: Float64Array,
): Float64Array {
  const keep = truncationMask(logits, options);
  const V = logits.length;
  const res = out ?? new Float64Array(V);
  if (res.length !== V) {
    throw new LabError('SHAPE_MISMATCH', `out: expected ${V} values, got ${res.length}`, {
      details: { field: 'out', expected: V, actual: res.length },
    });
  }
  let max = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < V; v++) if (keep[v]) max = Math.max(max, logits[v] as number);
  let sum = 0;
  for (let v = 0; v < V; v++) if (keep[v]) sum += Math.exp((logits[v] as number) - max);
  const logSum = Math.log(sum);
  // (z − max) − log Σ, as logProbOver and SequenceModel.logProbs compute it
  for (let v = 0; v < V; v++)
    res[v] = keep[v] ? (logits[v] as number) - max - logSum : Number.NEGATIVE_INFINITY;
  return res;
}

/**
 * Draws one token from the truncated, renormalised distribution of `logits` (one position, length V)
 * with one uniform draw from `rng`, and returns it with both log-probs (see the file comment).
 * With no truncation (top_k unset or ≥ V, top_p = 1) the draw is the same as
 * `rng.categorical(exp(z − max z))`, the plain sampler's, and the two log-probs are equal.
 * Errors: BAD_ARGUMENT naming `top_k` / `top_p`; NON_FINITE for a NaN or +Infinity logit.
 */
export function sampleTruncated(
  logits: ArrayLike<number>,
  rng: Rng,
  options: TruncationOptions = {},
): TruncatedSample {
  const keep = truncationMask(logits, options);
  const V = logits.length;
  let kept = 0;
  let max = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < V; v++) {
    if (keep[v]) {
      kept++;
      max = Math.max(max, logits[v] as number);
    }
  }
  const weights = new Float64Array(V);
  for (let v = 0; v < V; v++) weights[v] = keep[v] ? Math.exp((logits[v] as number) - max) : 0;
  const token = rng.categorical(weights);
  const engineLogProb = logProbOver(logits, keep, token);
  return {
    token,
    engineLogProb,
    fullLogProb: kept === V ? engineLogProb : logProbOver(logits, null, token),
    kept,
  };
}
