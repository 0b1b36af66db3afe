/**
 * A tabular softmax policy over a token vocabulary, one row of logits per small context:
 * `pi(v | c) = exp(z[c,v]) / sum_u exp(z[c,u])`, logits `z` stored row-major `[contexts, vocab]`.
 *
 * It plays the role of the language model in the token-level lab: every token of a transcript —
 * including the environment's tokens — has a log-prob under it, as an LLM assigns one to every
 * position of a sequence (verl's actor recomputes `old_log_prob` over the whole response, tool
 * tokens included). The gradient of a log-prob is the usual softmax one:
 * `d log pi(v | c) / d z[c,u] = [u = v] - pi(u | c)`, zero for every other context.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { logSumExpRow, softmaxRow } from './softmax.js';

export interface ContextPolicyInit {
  /** Initial logit per vocabulary token, shared by every context (default all 0 = uniform). */
  tokenLogits?: ArrayLike<number>;
}

/**
 * Logits `[contexts, vocab]` (float64, row-major), all contexts starting from `init.tokenLogits`
 * (default 0: uniform). Learners update `logits` in place; read probabilities once per phase.
 */
export class ContextPolicy {
  readonly contexts: number;
  readonly vocab: number;
  /** Row-major `[contexts, vocab]` logits; learners update it in place. */
  readonly logits: Float64Array;

  constructor(contexts: number, vocab: number, init: ContextPolicyInit = {}) {
    if (!Number.isInteger(contexts) || contexts < 1 || !Number.isInteger(vocab) || vocab < 2) {
      throw new LabError('BAD_ARGUMENT', `ContextPolicy: bad size [${contexts}, ${vocab}]`, {
        details: { field: 'contexts/vocab', contexts, vocab },
      });
    }
    this.contexts = contexts;
    this.vocab = vocab;
    this.logits = new Float64Array(contexts * vocab);
    const base = init.tokenLogits;
    if (base) {
      if (base.length !== vocab) {
        throw new LabError('SHAPE_MISMATCH', `tokenLogits: expected ${vocab} values, got ${base.length}`, {
          details: { field: 'tokenLogits', expected: vocab, actual: base.length },
        });
      }
      for (let v = 0; v < vocab; v++) {
        const z = base[v] as number;
        if (!Number.isFinite(z)) {
          throw new LabError('NON_FINITE', `tokenLogits: value ${z} at token ${v} is not finite`, {
            details: { field: 'tokenLogits', token: v, value: z },
          });
        }
        for (let c = 0; c < contexts; c++) this.logits[c * vocab + v] = z;
      }
    }
  }

  /**
   * Softmax of every context, row-major `[contexts, vocab]` (max-subtracted for stability). Compute
   * it once per rollout phase: the logits do not change while a batch is being sampled.
   */
  probabilities(out: Float64Array = new Float64Array(this.logits.length)): Float64Array {
    const V = this.vocab;
    for (let c = 0; c < this.contexts; c++) softmaxRow(this.logits, c * V, V, out, c * V);
    return out;
  }

  /**
   * `log pi(v | c)` for every context, row-major `[contexts, vocab]`: `z[c,v] − logsumexp_u z[c,u]`.
   * Finite for any finite logits (where {@link probabilities} can underflow to 0).
   */
  logProbabilities(out: Float64Array = new Float64Array(this.logits.length)): Float64Array {
    const V = this.vocab;
    for (let c = 0; c < this.contexts; c++) {
      const o = c * V;
      const lse = logSumExpRow(this.logits, o, V);
      for (let v = 0; v < V; v++) out[o + v] = (this.logits[o + v] as number) - lse;
    }
    return out;
  }

  /** `log pi(token | context) = z[c,token] − logsumexp_u z[c,u]`, equal to its {@link logProbabilities} entry. */
  logProb(context: number, token: number): number {
    this.checkIndex(context, token);
    const o = context * this.vocab;
    return (this.logits[o + token] as number) - logSumExpRow(this.logits, o, this.vocab);
  }

  /** Draws a token for `context` from a probability table made by {@link probabilities}. */
  static sample(probs: Float64Array, vocab: number, context: number, rng: Rng): number {
    return rng.categorical(probs, context * vocab, vocab);
  }

  private checkIndex(context: number, token: number): void {
    if (!Number.isInteger(context) || context < 0 || context >= this.contexts) {
      throw new LabError('BAD_ARGUMENT', `context ${context} is outside [0, ${this.contexts})`, {
        details: { field: 'context', value: context },
      });
    }
    if (!Number.isInteger(token) || token < 0 || token >= this.vocab) {
      throw new LabError('BAD_ARGUMENT', `token ${token} is outside [0, ${this.vocab})`, {
        details: { field: 'token', value: token },
      });
    }
  }
}

/**
 * Chains per-token gradients `g[i] = dL/d log pi(tokens[i] | contexts[i])` into the logits:
 * `dL/dz[c,u] = sum_{i: contexts[i]=c} g[i] * ([u = tokens[i]] - pi(u | c))`
 *            `= G[c,u] - S[c] * pi(u | c)`, with `G[c,u] = sum_{i: c, u} g[i]`, `S[c] = sum_{i: c} g[i]`.
 * Positions with `g[i] = 0` (masked tokens, padding) contribute nothing; their context/token ids
 * are not read. `probs` is the `[contexts, vocab]` table of the logits the log-probs came from.
 * Returns a fresh `[contexts, vocab]` gradient (float64).
 */
export function chainLogProbGrad(
  probs: Float64Array,
  contexts: number,
  vocab: number,
  tokenContexts: ArrayLike<number>,
  tokens: ArrayLike<number>,
  gradLogProb: ArrayLike<number>,
): Float64Array {
  const n = gradLogProb.length;
  if (tokenContexts.length !== n || tokens.length !== n) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `chainLogProbGrad: contexts (${tokenContexts.length}), tokens (${tokens.length}) and gradient (${n}) differ in length`,
      { details: { field: 'gradLogProb', expected: n } },
    );
  }
  if (probs.length !== contexts * vocab) {
    throw new LabError('SHAPE_MISMATCH', `probs: expected ${contexts * vocab} values, got ${probs.length}`, {
      details: { field: 'probs', expected: contexts * vocab, actual: probs.length },
    });
  }
  const grad = new Float64Array(contexts * vocab);
  const rowSum = new Float64Array(contexts);
  for (let i = 0; i < n; i++) {
    const g = gradLogProb[i] as number;
    if (g === 0) continue;
    if (!Number.isFinite(g)) {
      throw new LabError('NON_FINITE', `gradLogProb: value ${g} at position ${i} is not finite`, {
        details: { field: 'gradLogProb', token: i, value: g },
      });
    }
    const c = tokenContexts[i] as number;
    const v = tokens[i] as number;
    if (!(c >= 0 && c < contexts && v >= 0 && v < vocab)) {
      throw new LabError('BAD_ARGUMENT', `position ${i}: context ${c} / token ${v} out of range`, {
        details: { field: 'tokens', token: i },
      });
    }
    grad[c * vocab + v] = (grad[c * vocab + v] as number) + g;
    rowSum[c] = (rowSum[c] as number) + g;
  }
  for (let c = 0; c < contexts; c++) {
    const s = rowSum[c] as number;
    if (s === 0) continue;
    const o = c * vocab;
    for (let u = 0; u < vocab; u++) grad[o + u] = (grad[o + u] as number) - s * (probs[o + u] as number);
  }
  return grad;
}
