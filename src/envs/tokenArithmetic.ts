/**
 * The token-level variant of the tool-arithmetic environment: a transcript that interleaves tokens
 * the policy emits with tokens the environment writes, as a multi-turn agent transcript does
 * (verl's `ToolAgentLoop`: generation turns with `response_mask` 1, tool responses with 0).
 *
 * Vocabulary ({@link VOCAB}, 21 tokens). The policy samples from all of them:
 * - tool actions `read`, `add`, `sub`, `verify`, `submit`, and a no-op `think`;
 * - observation tokens the environment writes: digits `0`..`9` and `,` `;` `=` `ok` `fix`.
 *   A policy that emits an observation token is imitating the environment instead of acting: a
 *   protocol error (`observation_token`) that ends the episode with score 0.
 *
 * What the environment appends after each action (each list ends with `;`):
 * - `read`  -> digits(a) `,` digits(b) `;`                      (operands loaded)
 * - `add`/`sub` -> digits(result) `;`  — the tool is noisy: with probability `toolErrorRate` the
 *   result is off by a nonzero offset in [-9, 9] (kept >= 0).
 * - `verify` -> digits(a) `,` digits(b) `=` digits(held) then `ok`, or `fix` digits(answer); `;`.
 *   Verification checks the held number against the task and repairs it, so it costs tokens and
 *   makes a trajectory longer but genuinely better.
 * - `think` -> nothing (a no-op model token); `submit` ends the episode, score 1 iff the held number
 *   equals the answer.
 * Allowed: fresh -> read | think; read -> add | sub | think; computed -> submit | think, and
 * `verify` once. Anything else is a protocol error named `<action>_at_<stage>` (or
 * `verify_twice`). The wrong tool (add on a sub task) is not a protocol error: it gives a wrong
 * number (except when b = 0), which `verify` then repairs.
 *
 * Token budget: a transcript holds at most `budget` tokens, model and environment tokens together
 * (verl's `response_length`). A trajectory that needs a position >= budget before it has submitted is
 * `truncated` — a status of its own, not a failure — and its transcript is cut at the budget.
 *
 * Context: the policy sees only (kind, stage, verified, think bucket) — {@link contextIndex}, 36
 * contexts with 3 think buckets — so a tabular policy suffices. Every token is recorded with the
 * context in force when it was written; an environment token is written *after* the action that
 * caused it changed the state, so it carries the context in which the policy makes its next
 * decision. Training on an environment token (mask wrongly 1) therefore moves exactly the logits
 * that the next action is drawn from.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { type DrivenEpisode, driveEpisode } from './episodeDriver.js';
import { VOCAB_SIZE } from './tokenVocab.js';

// Re-exported: the vocabulary has its own file so the episode driver can share it without an import
// cycle, and importers of this env keep finding it here.
export type { EpisodeStatus } from './episodeDriver.js';
export * from './tokenVocab.js';

export const STAGE_NAMES = ['fresh', 'read', 'computed'] as const;
export type StageName = (typeof STAGE_NAMES)[number];
export type TaskKindName = 'add' | 'sub';

export interface TokenTask {
  kind: TaskKindName;
  a: number;
  b: number;
  answer: number;
}

export interface TokenEnvOptions {
  /** Maximum transcript length in tokens (model + environment), as verl's `response_length`. */
  budget: number;
  /** Probability that `add`/`sub` returns a wrong number. */
  toolErrorRate: number;
  /** Think-count buckets in the context: counts 0..thinkBuckets-2, then ">= thinkBuckets-1". */
  thinkBuckets: number;
}

export const TOKEN_ENV_DEFAULTS: TokenEnvOptions = Object.freeze({
  budget: 48,
  toolErrorRate: 0.3,
  thinkBuckets: 3,
});

/** Number of distinct contexts: 2 kinds x 3 stages x 2 verified flags x thinkBuckets. */
export function contextCount(thinkBuckets: number): number {
  return 2 * 3 * 2 * thinkBuckets;
}

/** Context id = ((kind * 3 + stage) * 2 + verified) * thinkBuckets + bucket. */
export function contextIndex(
  kind: TaskKindName,
  stage: number,
  verified: boolean,
  thinkCount: number,
  thinkBuckets: number,
): number {
  const bucket = Math.min(thinkCount, thinkBuckets - 1);
  return (((kind === 'add' ? 0 : 1) * 3 + stage) * 2 + (verified ? 1 : 0)) * thinkBuckets + bucket;
}

/** Human-readable name of a context id, e.g. `add/computed/verified/think>=2`. */
export function describeContext(context: number, thinkBuckets: number): string {
  const bucket = context % thinkBuckets;
  const rest = Math.floor(context / thinkBuckets);
  const verified = rest % 2 === 1;
  const stage = Math.floor(rest / 2) % 3;
  const kind = Math.floor(rest / 6) === 0 ? 'add' : 'sub';
  const think = bucket === thinkBuckets - 1 ? `think>=${bucket}` : `think=${bucket}`;
  return `${kind}/${STAGE_NAMES[stage]}/${verified ? 'verified' : 'unverified'}/${think}`;
}

/** Draws a task: kind add or sub with probability 1/2, operands uniform in [0, maxOperand], a >= b for sub. */
export function sampleTokenTask(rng: Rng, maxOperand = 99): TokenTask {
  if (!Number.isInteger(maxOperand) || maxOperand < 0) {
    throw new LabError('BAD_ARGUMENT', `maxOperand: expected a non-negative integer, got ${maxOperand}`, {
      details: { field: 'maxOperand', value: maxOperand },
    });
  }
  const kind: TaskKindName = rng.next() < 0.5 ? 'add' : 'sub';
  let a = rng.int(0, maxOperand);
  let b = rng.int(0, maxOperand);
  if (kind === 'sub' && a < b) [a, b] = [b, a];
  return { kind, a, b, answer: kind === 'add' ? a + b : a - b };
}

/** An episode of the token env: the driver's transcript and outcome, with its task. */
export interface TokenEpisode extends DrivenEpisode {
  task: TokenTask;
}

/** Picks the next model token given the context id (the policy, with its own random stream). */
export type ChooseToken = (context: number) => number;

function checkEnvOptions(o: TokenEnvOptions): void {
  if (!Number.isInteger(o.budget) || o.budget < 1) {
    throw new LabError('BAD_ARGUMENT', `budget: expected a positive integer, got ${o.budget}`, {
      details: { field: 'budget', value: o.budget },
    });
  }
  if (!(o.toolErrorRate >= 0 && o.toolErrorRate <= 1)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `toolErrorRate: expected a probability in [0, 1], got ${o.toolErrorRate}`,
      {
        details: { field: 'toolErrorRate', value: o.toolErrorRate },
      },
    );
  }
  if (!Number.isInteger(o.thinkBuckets) || o.thinkBuckets < 1) {
    throw new LabError('BAD_ARGUMENT', `thinkBuckets: expected a positive integer, got ${o.thinkBuckets}`, {
      details: { field: 'thinkBuckets', value: o.thinkBuckets },
    });
  }
}

/**
 * Runs one episode: asks `choose` for a model token in the current context, appends it, lets the
 * environment append its tokens, until submit, a protocol error, or the budget (the loop is
 * {@link driveEpisode}'s). `noiseRng` drives the compute tools' errors (one draw per compute call,
 * two more when the result is wrong).
 */
export function runTokenEpisode(
  task: TokenTask,
  choose: ChooseToken,
  noiseRng: Rng,
  options: Partial<TokenEnvOptions> = {},
): TokenEpisode {
  const o: TokenEnvOptions = { ...TOKEN_ENV_DEFAULTS, ...options };
  checkEnvOptions(o);
  // A token task is the driver's one-call task a op b: its tool applies b to the held a.
  const episode = driveEpisode(
    {
      operands: [task.a, task.b],
      answer: task.answer,
      budget: o.budget,
      vocabSize: VOCAB_SIZE,
      context: (s) =>
        contextIndex(task.kind, !s.read ? 0 : s.calls < 1 ? 1 : 2, s.verified, s.thinks, o.thinkBuckets),
      slipProbability: () => o.toolErrorRate,
    },
    { choose },
    noiseRng,
  );
  return { task, ...episode };
}
