/**
 * The token-level PPO-style learner of the token lab: verl's actor update on a tabular policy.
 *
 * One update, as verl's trainer + `dp_actor.update_policy` do it:
 * 1. pack the transcripts into a right-padded `[B,T]` batch ({@link packTranscripts});
 * 2. build the response mask from token roles ({@link responseMaskFromRoles}: model 1, env 0,
 *    padding 0 — verl's `AgentLoopOutput.response_mask` times the attention mask); an experiment
 *    may override it (env tokens wrongly 1, truncated rows 0);
 * 3. place each trajectory's score on its last token ({@link outcomeTokenRewards}) and compute GRPO
 *    advantages with the core kernel `grpoAdvantage` (verl conventions by default);
 * 4. record the old log-probs of every token once, at rollout ({@link gatherLogProbs}), then run
 *    the PPO epochs with the lab's one update loop (train/ppoUpdate.ts on `tabularModel`,
 *    train/policyModel.ts): the core kernel's `∂loss/∂log_prob [B,T]` of the vanilla clipped loss
 *    is chained into the logits by `d log pi(v|c)/dz[c,u] = [u=v] − pi(u|c)` (as
 *    {@link tokenLossAndGrad} computes it for one evaluation) and an optimizer step follows.
 */

import type { GroupLabels, Shape2 } from '../core/batch.js';
import { LabError } from '../core/errors.js';
import { type GroupNormOptions, grpoAdvantage } from '../core/grpo.js';
import type { PolicyLossMetrics } from '../core/policyLossInputs.js';
import { policyLossVanillaGrad, type VanillaLossOptions } from '../core/vanillaPolicyLoss.js';
import { type ContextPolicy, chainLogProbGrad } from '../policy/contextPolicy.js';

/** Role codes of a packed batch (same values as the env's ROLE_* constants). */
const PAD = 0;
const MODEL = 1;
const ENV = 2;

/** What the learner needs of one trajectory (a TokenEpisode satisfies it). */
export interface Transcript {
  tokens: readonly number[];
  contexts: readonly number[];
  /** 1 = model token, 2 = environment token. */
  roles: readonly number[];
}

/** A right-padded `[B,T]` batch; padding has role 0, token 0, context 0. */
export interface PackedBatch {
  shape: Shape2;
  tokens: Int32Array;
  contexts: Int32Array;
  roles: Uint8Array;
  /** Transcript length (model + env tokens) per row. */
  lengths: Int32Array;
}

/** Packs transcripts into `[B, T]` with `T = max length` (at least 1), right padding. */
export function packTranscripts(transcripts: readonly Transcript[]): PackedBatch {
  if (transcripts.length === 0) {
    throw new LabError('SHAPE_MISMATCH', 'packTranscripts: no transcripts to pack', {
      details: { field: 'transcripts' },
    });
  }
  let cols = 1;
  for (const t of transcripts) cols = Math.max(cols, t.tokens.length);
  const rows = transcripts.length;
  const tokens = new Int32Array(rows * cols);
  const contexts = new Int32Array(rows * cols);
  const roles = new Uint8Array(rows * cols);
  const lengths = new Int32Array(rows);
  transcripts.forEach((t, b) => {
    const n = t.tokens.length;
    if (t.contexts.length !== n || t.roles.length !== n) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `transcript ${b}: tokens (${n}), contexts (${t.contexts.length}) and roles (${t.roles.length}) differ in length`,
        { details: { field: 'transcripts', row: b } },
      );
    }
    lengths[b] = n;
    for (let i = 0; i < n; i++) {
      const role = t.roles[i] as number;
      if (role !== MODEL && role !== ENV) {
        throw new LabError(
          'BAD_VALUE',
          `transcript ${b}: role ${role} at token ${i} is not 1 (model) or 2 (env)`,
          {
            details: { field: 'roles', row: b, token: i, value: role },
          },
        );
      }
      tokens[b * cols + i] = t.tokens[i] as number;
      contexts[b * cols + i] = t.contexts[i] as number;
      roles[b * cols + i] = role;
    }
  });
  return { shape: { rows, cols }, tokens, contexts, roles, lengths };
}

/**
 * Which tokens the loss treats as the policy's actions:
 * - `model_tokens`: verl's `response_mask` — 1 on model tokens, 0 on environment tokens and padding;
 * - `all_tokens`: the bug the course warns about — environment (tool output) tokens also 1
 *   (padding stays 0), as when a response mask is derived from the attention mask.
 */
export type MaskRule = 'model_tokens' | 'all_tokens';
export const MASK_RULES: readonly MaskRule[] = ['model_tokens', 'all_tokens'];

/** The `[B,T]` 0/1 response mask (Float32Array) built from token roles by `rule`. */
export function responseMaskFromRoles(batch: PackedBatch, rule: MaskRule): Float32Array {
  if (!MASK_RULES.includes(rule)) {
    throw new LabError('UNKNOWN_MODE', `mask rule '${rule}' is not one of ${MASK_RULES.join(', ')}`, {
      details: { field: 'maskRule', value: rule },
    });
  }
  const mask = new Float32Array(batch.roles.length);
  for (let i = 0; i < mask.length; i++) {
    const role = batch.roles[i] as number;
    mask[i] = role === MODEL || (rule === 'all_tokens' && role === ENV) ? 1 : 0;
  }
  return mask;
}

/**
 * Token-level rewards `[B,T]` with each row's score on its last transcript token (position
 * `length − 1`, verl's `rm_scores` placement) and 0 elsewhere. An empty row keeps its score at t = 0
 * so that GRPO's sum over all positions still sees it.
 */
export function outcomeTokenRewards(scores: ArrayLike<number>, batch: PackedBatch): Float32Array {
  const { rows, cols } = batch.shape;
  if (scores.length !== rows) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `scores: expected ${rows} values (one per row), got ${scores.length}`,
      {
        details: { field: 'scores', expected: rows, actual: scores.length },
      },
    );
  }
  const out = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    const s = scores[b] as number;
    if (!Number.isFinite(s)) {
      throw new LabError('NON_FINITE', `scores: value ${s} at row ${b} is not finite`, {
        details: { field: 'scores', row: b, value: s },
      });
    }
    out[b * cols + Math.max(0, (batch.lengths[b] as number) - 1)] = s;
  }
  return out;
}

/**
 * GRPO advantages `[B,T]` (core `grpoAdvantage`, verl `compute_grpo_outcome_advantage`; defaults are
 * verl's: unbiased std, eps 1e-6, singleton mean 0 / std 1) from per-row scores and group labels.
 */
export function tokenGroupAdvantages(
  scores: ArrayLike<number>,
  index: GroupLabels,
  batch: PackedBatch,
  mask: Float32Array,
  options: GroupNormOptions = {},
): Float32Array {
  const rewards = outcomeTokenRewards(scores, batch);
  return grpoAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index }, batch.shape, options)
    .advantages;
}

/** `log pi(token | context)` at every position of the batch (0 at padding), from a log-prob table. */
export function gatherLogProbs(logProbTable: Float64Array, vocab: number, batch: PackedBatch): Float64Array {
  const out = new Float64Array(batch.tokens.length);
  for (let i = 0; i < out.length; i++) {
    if (batch.roles[i] === PAD) continue;
    out[i] = logProbTable[(batch.contexts[i] as number) * vocab + (batch.tokens[i] as number)] as number;
  }
  return out;
}

export interface TokenLossResult {
  loss: number;
  metrics: PolicyLossMetrics;
  /** `∂loss/∂log_prob [B,T]` from the core kernel. */
  gradLogProb: Float64Array;
  /** `∂loss/∂z [contexts, vocab]`, the chained gradient. */
  gradLogits: Float64Array;
}

/**
 * The vanilla clipped policy loss of the current policy on a batch (verl
 * `compute_policy_loss_vanilla` + `agg_loss`, core `policyLossVanillaGrad`) and its gradient with
 * respect to the logits. `oldLogProb`, `advantages`, `mask` are `[B,T]`.
 */
export function tokenLossAndGrad(
  policy: ContextPolicy,
  batch: PackedBatch,
  oldLogProb: Float64Array,
  advantages: Float32Array,
  mask: Float32Array,
  lossOptions: VanillaLossOptions = {},
): TokenLossResult {
  const logProb = gatherLogProbs(policy.logProbabilities(), policy.vocab, batch);
  const res = policyLossVanillaGrad(
    { oldLogProb, logProb, advantages, responseMask: mask },
    batch.shape,
    lossOptions,
  );
  const gradLogits = chainLogProbGrad(
    policy.probabilities(),
    policy.contexts,
    policy.vocab,
    batch.contexts,
    batch.tokens,
    res.grad,
  );
  return { loss: res.loss, metrics: res.metrics, gradLogProb: res.grad, gradLogits };
}
