/**
 * The episode loop shared by the token-level arithmetic envs (`runTokenEpisode` and
 * `runPromptedEpisode`): the policy picks a token in the current context, the driver appends
 * it and applies the tool protocol, the environment appends its answer, until submit, a protocol
 * error or the budget — verl's `ToolAgentLoop`, generation turns with `response_mask` 1 and tool
 * responses with 0.
 *
 * The protocol, for a task x0 op1 x1 ... opk xk (k = operands.length − 1 tool calls):
 * - fresh: `read` -> the env writes digits(x0) `,` digits(x1) ... `;` (the operands loaded).
 * - stage `read` (no call yet) or `computing` (some calls, fewer than k): `add`/`sub` applies the
 *   next operand to the held number (x0 before the first call); with probability
 *   {@link EpisodeRules.slipProbability} the result is off by a nonzero offset in [−9, 9] (kept ≥ 0);
 *   the env writes digits(|result|) `;`.
 * - computed (all k calls made): `verify` once -> the env writes the operands `,`-separated, `=`
 *   digits(held), then `ok` or `fix` digits(answer), `;`, and held becomes the answer; `submit` ends
 *   the episode, score 1 iff held = answer.
 * - `think`, anywhere: writes nothing; counted in `thinks` and `thinksSinceCall`.
 * Any other action is a protocol error `<action>_at_<stage>` (or `verify_twice`); an observation
 * token from the policy is `observation_token`. Model and environment tokens share the budget
 * (verl's `response_length`): a token that needs a position ≥ budget before submit ends the
 * episode as `truncated`, its transcript cut at the budget.
 *
 * The envs differ only in what the hooks of {@link EpisodeRules} say: the tabular context id and
 * the slip probability; a sequence policy also gets every transcript token through `append`.
 */

import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import {
  ACTION_TOKEN_NAMES,
  digitTokens,
  isObservationToken,
  ROLE_ENV,
  ROLE_MODEL,
  TOK_ADD,
  TOK_COMMA,
  TOK_END,
  TOK_EQUALS,
  TOK_FIX,
  TOK_OK,
  TOK_READ,
  TOK_SUB,
  TOK_SUBMIT,
  TOK_THINK,
  TOK_VERIFY,
  type TokenRole,
} from './tokenVocab.js';

/** Stage names as protocol errors spell them; `computing` needs a task of two or more calls. */
export const DRIVER_STAGE_NAMES = ['fresh', 'read', 'computing', 'computed'] as const;

export type EpisodeStatus = 'success' | 'wrong_answer' | 'protocol_error' | 'truncated';

/** The protocol state the hooks read; the driver updates it in place, hooks must not write it. */
export interface EpisodeState {
  /** Whether `read` has loaded the operands. */
  read: boolean;
  /** Tool calls made so far (0..k). */
  calls: number;
  /** Whether `verify` has run. */
  verified: boolean;
  /** `think` tokens in the episode so far. */
  thinks: number;
  /** `think` tokens since the last tool call (since the start before the first call). */
  thinksSinceCall: number;
}

/** What one env makes of the shared protocol: the task's numbers, the limits and two hooks. */
export interface EpisodeRules {
  /** x0 .. xk: what `read` and `verify` write; call i applies x_{i+1}. At least one. */
  operands: readonly number[];
  /** The number `submit` is scored against and `verify` repairs the held number to. */
  answer: number;
  /** Transcript length limit in tokens, model + env (verl's `response_length`); validated by the env. */
  budget: number;
  /** The policy may return ids 0..vocabSize − 1; anything else is a bug in the policy (BAD_ARGUMENT). */
  vocabSize: number;
  /** The context id in force: the one the next model token is chosen in and env tokens are recorded with. */
  context(state: Readonly<EpisodeState>): number;
  /** Probability in [0, 1] that the tool call about to run slips. */
  slipProbability(state: Readonly<EpisodeState>): number;
}

/** The policy as the driver sees it; `append` gets every token entering the transcript, in order. */
export interface EpisodePolicy {
  choose(context: number): number;
  append?(token: number): void;
}

/** One episode's transcript and outcome, without the task (each env adds its own). */
export interface DrivenEpisode {
  /** Token ids in transcript order, model and environment interleaved; length <= budget. */
  tokens: number[];
  /** The context id in force when each token was written. */
  contexts: number[];
  /** ROLE_MODEL or ROLE_ENV per token. */
  roles: TokenRole[];
  status: EpisodeStatus;
  /** 1 for a correct submission, else 0 (truncated, protocol error and wrong answer all score 0). */
  score: number;
  /** Protocol error name (`observation_token`, `submit_at_read`, ...) or null. */
  errorKind: string | null;
  modelTokens: number;
  envTokens: number;
  thinkTokens: number;
  /** Whether `verify` was executed (its output may have been cut by the budget). */
  verified: boolean;
  /** Whether a compute tool returned a wrong number in this episode. */
  toolWasWrong: boolean;
}

/**
 * Runs one episode of the tool protocol (see the file comment) with `policy` under `rules`.
 * `noise` drives the tool slips only: one draw per tool call, two more (offset size, sign) when the
 * call slips. Environment tokens are recorded with the context *after* the action that caused them
 * changed the state, i.e. the context of the policy's next decision.
 */
export function driveEpisode(rules: EpisodeRules, policy: EpisodePolicy, noise: Rng): DrivenEpisode {
  const { operands, answer, budget } = rules;
  const toolCalls = operands.length - 1;
  const state: EpisodeState = { read: false, calls: 0, verified: false, thinks: 0, thinksSinceCall: 0 };
  const tokens: number[] = [];
  const contexts: number[] = [];
  const roles: TokenRole[] = [];
  let held = operands[0] as number;
  let toolWasWrong = false;
  let modelTokens = 0;
  let envTokens = 0;
  const finish = (status: EpisodeStatus, errorKind: string | null): DrivenEpisode => ({
    tokens,
    contexts,
    roles,
    status,
    score: status === 'success' ? 1 : 0,
    errorKind,
    modelTokens,
    envTokens,
    thinkTokens: state.thinks,
    verified: state.verified,
    toolWasWrong,
  });
  const record = (tok: number, ctx: number, role: TokenRole) => {
    tokens.push(tok);
    contexts.push(ctx);
    roles.push(role);
    policy.append?.(tok);
  };
  /** Appends environment tokens in the (already updated) context; false when the budget cuts them. */
  const writeEnv = (out: readonly number[]): boolean => {
    const ctx = rules.context(state);
    for (const tok of out) {
      if (tokens.length >= budget) return false;
      record(tok, ctx, ROLE_ENV);
      envTokens++;
    }
    return true;
  };
  const operandList = () => {
    const out: number[] = [];
    operands.forEach((x, i) => {
      if (i > 0) out.push(TOK_COMMA);
      out.push(...digitTokens(x));
    });
    return out;
  };

  for (;;) {
    if (tokens.length >= budget) return finish('truncated', null);
    const ctx = rules.context(state);
    const tok = policy.choose(ctx);
    if (!Number.isInteger(tok) || tok < 0 || tok >= rules.vocabSize) {
      throw new LabError('BAD_ARGUMENT', `choose: returned token ${tok} at position ${tokens.length}`, {
        details: { field: 'token', token: tokens.length, value: tok },
      });
    }
    record(tok, ctx, ROLE_MODEL);
    modelTokens++;
    if (isObservationToken(tok)) return finish('protocol_error', 'observation_token');
    const stage = !state.read ? 0 : state.calls < toolCalls ? (state.calls === 0 ? 1 : 2) : 3;
    if (tok === TOK_THINK) {
      state.thinks++;
      state.thinksSinceCall++;
      continue;
    }
    if (tok === TOK_READ && stage === 0) {
      state.read = true;
      if (!writeEnv([...operandList(), TOK_END])) return finish('truncated', null);
      continue;
    }
    if ((tok === TOK_ADD || tok === TOK_SUB) && (stage === 1 || stage === 2)) {
      const x = operands[state.calls + 1] as number;
      let result = tok === TOK_ADD ? held + x : held - x;
      if (noise.next() < rules.slipProbability(state)) {
        const offset = noise.int(1, 9) * (noise.next() < 0.5 ? -1 : 1);
        result = result + offset < 0 ? result - offset : result + offset;
        toolWasWrong = true;
      }
      // The wrong tool can go negative (sub on an add task); the tool writes its magnitude.
      held = Math.abs(result);
      state.calls++;
      state.thinksSinceCall = 0;
      if (!writeEnv([...digitTokens(held), TOK_END])) return finish('truncated', null);
      continue;
    }
    if (tok === TOK_VERIFY && stage === 3) {
      if (state.verified) return finish('protocol_error', 'verify_twice');
      const before = held;
      held = answer;
      state.verified = true;
      const check = before === answer ? [TOK_OK] : [TOK_FIX, ...digitTokens(answer)];
      if (!writeEnv([...operandList(), TOK_EQUALS, ...digitTokens(before), ...check, TOK_END])) {
        return finish('truncated', null);
      }
      continue;
    }
    if (tok === TOK_SUBMIT && stage === 3) {
      return finish(held === answer ? 'success' : 'wrong_answer', null);
    }
    return finish('protocol_error', `${ACTION_TOKEN_NAMES[tok]}_at_${DRIVER_STAGE_NAMES[stage]}`);
  }
}
