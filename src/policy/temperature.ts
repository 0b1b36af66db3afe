/**
 * Sampling temperature of a softmax policy (vLLM / verl `rollout.temperature`):
 *
 *   pi_tau(v | c) = softmax(z_c / tau)_v,   log pi_tau(v | c) = z_v / tau − logsumexp(z / tau)
 *
 * tau = 1 is the policy itself (the distribution training log-probs refer to); tau -> 0 tends to the
 * argmax (greedy decoding), tau -> inf to uniform. The behaviour log-prob of a sampled token is that
 * of the tempered distribution it was drawn from, which is what an importance weight against the
 * tau = 1 policy needs. tau must be a finite number > 0: the greedy limit is its own decoding mode
 * (SequenceSampler.sample(rng, 0), tabular greedyAction), not a temperature.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { logSumExpRow, softmaxRow } from './softmax.js';

/** Throws BAD_ARGUMENT naming `field` unless `tau` is a finite number > 0. */
export function checkTemperature(tau: number, field = 'temperature'): void {
  if (!(typeof tau === 'number' && tau > 0 && Number.isFinite(tau))) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected a finite number > 0, got ${tau}`, {
      details: { field, value: tau },
    });
  }
}

/**
 * Tempered tables of a `[contexts, vocab]` logits table: `probs[c, v] = softmax(z_c / tau)_v` and
 * `logProbs[c, v] = log` of it (finite where probs underflow). Errors: BAD_ARGUMENT for a bad tau.
 */
export function temperedTables(
  logits: ArrayLike<number>,
  contexts: number,
  vocab: number,
  tau: number,
): { probs: Float64Array; logProbs: Float64Array } {
  checkTemperature(tau);
  const n = contexts * vocab;
  const scaled = new Float64Array(n);
  for (let i = 0; i < n; i++) scaled[i] = (logits[i] as number) / tau;
  const probs = new Float64Array(n);
  const logProbs = new Float64Array(n);
  for (let c = 0; c < contexts; c++) {
    const o = c * vocab;
    softmaxRow(scaled, o, vocab, probs, o);
    const lse = logSumExpRow(scaled, o, vocab);
    for (let v = 0; v < vocab; v++) logProbs[o + v] = (scaled[o + v] as number) - lse;
  }
  return { probs, logProbs };
}

/**
 * Draws one token from `softmax(logits[offset .. offset + vocab) / tau)` with one uniform draw and
 * returns it with its tempered log-prob (the behaviour log-prob). `weights` is scratch of length
 * `vocab`. Errors: BAD_ARGUMENT for a bad tau.
 */
export function sampleTempered(
  logits: ArrayLike<number>,
  offset: number,
  vocab: number,
  tau: number,
  rng: Rng,
  weights: Float64Array = new Float64Array(vocab),
): { token: number; logProb: number } {
  checkTemperature(tau);
  let max = Number.NEGATIVE_INFINITY;
  for (let v = 0; v < vocab; v++) max = Math.max(max, (logits[offset + v] as number) / tau);
  let sum = 0;
  for (let v = 0; v < vocab; v++) {
    const e = Math.exp((logits[offset + v] as number) / tau - max);
    weights[v] = e;
    sum += e;
  }
  const token = rng.categorical(weights, 0, vocab);
  return { token, logProb: (logits[offset + token] as number) / tau - max - Math.log(sum) };
}
