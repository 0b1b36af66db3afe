/**
 * The token arithmetic env with the task written in the prompt, for a policy that has to *read*
 * (the neural sequence policy): an extension of {@link runTokenEpisode}'s protocol where a task is a
 * chain of 1, 2 or 3 tool calls (`x0 + x1 − x2`), the prompt spells it out as tokens, and `think`
 * genuinely helps, so a longer trajectory can be a better one.
 *
 * Vocabulary: the 21 tokens of {@link VOCAB} (same ids) plus two observation tokens `+` and `-`
 * (ids 21, 22) that only the prompt contains: {@link PROMPTED_VOCAB}, 23 tokens. Every id ≥ 6 is
 * still an observation token; a policy that emits one ends the episode (`observation_token`).
 *
 * Prompt (environment-written, not part of the response, as verl's prompt): digits(x0) op1
 * digits(x1) ... opk digits(xk) `;`, at most 4·2 + 3 + 1 = 12 tokens for operands ≤ 99.
 *
 * Response protocol (model and environment tokens, at most `budget` of them, verl's response_length):
 * - fresh: `read` -> env writes digits(x0) `,` digits(x1) ... `;` (the operands loaded); or `think`.
 * - after read, i < k tool calls done: `add` or `sub` applies x_{i+1} to the held number with the
 *   chosen operation (the right one is op_{i+1} of the prompt: the policy must read it and count its
 *   calls); env writes digits(held) `;`. A negative result is written as its magnitude (as today).
 *   With probability {@link slipProbability}(thinks since the last call) the tool slips: the result
 *   is off by a nonzero offset in [−9, 9] (kept ≥ 0). Or `think`.
 * - all k calls done: `submit` (score 1 iff held = answer), `verify` once -> env writes the operands
 *   `,`-separated, `=` digits(held), then `ok` or `fix` digits(answer), `;` (held becomes the answer:
 *   costs tokens, repairs a wrong result), or `think` (which then does nothing).
 * Anything else is a protocol error `<action>_at_<stage>` (stages fresh, read, computing, computed)
 * or `verify_twice`. The wrong tool is not a protocol error: it gives a wrong number (unless the
 * operand is 0), which verify repairs.
 *
 * Tabular context (for a tabular policy on the same env, which is *handed* what the neural one must
 * read): `(next operator: + | − | none, stage: fresh | tool due | computed, verified, think bucket)`
 * -> {@link promptedContextIndex}; the neural policy ignores it.
 *
 * Constants and why (each an option, see {@link PROMPTED_ENV_DEFAULTS}):
 * - levels 1..3 uniformly: with a near-uniform initial policy a 1-call task is sometimes solved and a
 *   3-call task almost never (it needs read + 3 right tools + submit in a row), so the batch holds
 *   both "sometimes" and "never solved" groups.
 * - toolErrorRate 0.3 (as the tabular lab): without thinking a 3-call chain survives 0.7³ = 34%.
 * - thinkDecay 0.5, thinkCap 2: each of the first two thinks before a call halves its slip chance
 *   (0.3 -> 0.15 -> 0.075), a third does nothing: returns diminish (+15, +7.5, 0 points per call) and
 *   stop, so the best length is finite and a length bias can push it either way.
 * - maxOperand 99: two-digit operands make the env's outputs several tokens long (what a wrong mask
 *   trains on) without making the answer matter to the policy (the tools compute).
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { type DrivenEpisode, driveEpisode } from './episodeDriver.js';
import { digitTokens, TOK_END, VOCAB } from './tokenVocab.js';

export const TOK_PLUS = 21;
export const TOK_MINUS = 22;
/** {@link VOCAB} plus `+` and `-`: 23 tokens, the first 21 with their usual ids. */
export const PROMPTED_VOCAB: readonly string[] = [...VOCAB, '+', '-'];
export const PROMPTED_VOCAB_SIZE = PROMPTED_VOCAB.length;

export type Operator = '+' | '-';

export interface PromptedTask {
  /** x0 .. xk (k + 1 operands). */
  operands: number[];
  /** op1 .. opk (k = level, the number of tool calls the task needs). */
  operators: Operator[];
  /** x0 op1 x1 ... opk xk evaluated left to right (every partial result ≥ 0). */
  answer: number;
}

export interface PromptedEnvOptions {
  /** Response budget in tokens (model + environment), verl's `response_length`. */
  budget: number;
  /** Slip probability of a tool call made with no think before it. */
  toolErrorRate: number;
  /** Factor by which each helpful think multiplies the next call's slip chance, in [0, 1]. */
  thinkDecay: number;
  /** How many thinks since the last tool call help (later ones do nothing). */
  thinkCap: number;
  /** Think buckets of the tabular context (counts 0..b−2, then ≥ b−1). */
  thinkBuckets: number;
}

export const PROMPTED_ENV_DEFAULTS: PromptedEnvOptions = Object.freeze({
  budget: 48,
  toolErrorRate: 0.3,
  thinkDecay: 0.5,
  thinkCap: 2,
  thinkBuckets: 3,
});

/** Slip chance of a tool call after `thinks` thinks since the last call: rate · decay^min(thinks, cap). */
export function slipProbability(thinks: number, o: PromptedEnvOptions): number {
  return o.toolErrorRate * o.thinkDecay ** Math.min(thinks, o.thinkCap);
}

/** Number of tabular contexts: 4 (next operator + / − after read, fresh, computed) x 2 x thinkBuckets. */
export function promptedContextCount(thinkBuckets: number): number {
  return 4 * 2 * thinkBuckets;
}

/**
 * Tabular context id = (phase · 2 + verified) · thinkBuckets + bucket, phase 0 fresh, 1 tool due
 * with operator +, 2 tool due with operator −, 3 computed.
 */
export function promptedContextIndex(
  phase: number,
  verified: boolean,
  thinks: number,
  thinkBuckets: number,
): number {
  return (phase * 2 + (verified ? 1 : 0)) * thinkBuckets + Math.min(thinks, thinkBuckets - 1);
}

/**
 * Draws a task: level uniform in [minLevel, maxLevel], x0 uniform in [0, maxOperand], each operator
 * + or − with probability 1/2 and each next operand uniform in [0, maxOperand] (for −: in
 * [0, min(maxOperand, partial result)], so no partial result is negative).
 */
export function samplePromptedTask(rng: Rng, maxOperand = 99, minLevel = 1, maxLevel = 3): PromptedTask {
  if (!Number.isInteger(maxOperand) || maxOperand < 0) {
    throw new LabError('BAD_ARGUMENT', `maxOperand: expected a non-negative integer, got ${maxOperand}`, {
      details: { field: 'maxOperand', value: maxOperand },
    });
  }
  if (
    !(
      Number.isInteger(minLevel) &&
      Number.isInteger(maxLevel) &&
      minLevel >= 1 &&
      maxLevel >= minLevel &&
      maxLevel <= 3
    )
  ) {
    throw new LabError(
      'BAD_ARGUMENT',
      `levels: expected 1 <= min_level <= max_level <= 3, got ${minLevel}..${maxLevel}`,
      {
        details: { field: 'max_level', value: maxLevel },
      },
    );
  }
  const level = rng.int(minLevel, maxLevel);
  let value = rng.int(0, maxOperand);
  const operands = [value];
  const operators: Operator[] = [];
  for (let i = 0; i < level; i++) {
    const op: Operator = rng.next() < 0.5 ? '+' : '-';
    const x = rng.int(0, op === '+' ? maxOperand : Math.min(maxOperand, value));
    value = op === '+' ? value + x : value - x;
    operators.push(op);
    operands.push(x);
  }
  return { operands, operators, answer: value };
}

/** The prompt's tokens: digits(x0) op1 digits(x1) ... `;`. */
export function promptTokens(task: PromptedTask): number[] {
  const out = digitTokens(task.operands[0] as number);
  task.operators.forEach((op, i) => {
    out.push(op === '+' ? TOK_PLUS : TOK_MINUS, ...digitTokens(task.operands[i + 1] as number));
  });
  out.push(TOK_END);
  return out;
}

/** Longest prompt for operands ≤ maxOperand and 3 tool calls: 4 operands, 3 operators, `;`. */
export function maxPromptLength(maxOperand: number): number {
  return 4 * String(maxOperand).length + 3 + 1;
}

/**
 * The policy as the env sees it: `start(prompt)` once, then `choose(context)` for each model token
 * (the tabular context id; a sequence policy ignores it) and `append(token)` for every token that
 * enters the transcript, the model's own included, in order.
 */
export interface TranscriptAgent {
  start(prompt: readonly number[]): void;
  choose(context: number): number;
  append(token: number): void;
}

/**
 * A prompted episode: the token environment's episode record (same fields, same meaning), with the
 * task read from the prompt tokens and the number of tool calls it needs.
 */
export interface PromptedEpisode extends DrivenEpisode {
  task: PromptedTask;
  prompt: number[];
  /** Tool calls the task needs (1..3). */
  level: number;
}

function checkOptions(o: PromptedEnvOptions): void {
  const bad = (field: string, want: string, value: number) =>
    new LabError('BAD_ARGUMENT', `${field}: expected ${want}, got ${value}`, { details: { field, value } });
  if (!Number.isInteger(o.budget) || o.budget < 1) throw bad('budget', 'a positive integer', o.budget);
  if (!(o.toolErrorRate >= 0 && o.toolErrorRate <= 1))
    throw bad('tool_error_rate', 'a probability in [0, 1]', o.toolErrorRate);
  if (!(o.thinkDecay >= 0 && o.thinkDecay <= 1)) throw bad('think_decay', 'a number in [0, 1]', o.thinkDecay);
  if (!Number.isInteger(o.thinkCap) || o.thinkCap < 0) throw bad('think_cap', 'an integer >= 0', o.thinkCap);
  if (!Number.isInteger(o.thinkBuckets) || o.thinkBuckets < 1)
    throw bad('think_buckets', 'a positive integer', o.thinkBuckets);
}

/**
 * Runs one episode of {@link PromptedTask} with `agent`; `noise` drives the tool slips (one draw per
 * call, two more when it slips). Ends at submit, a protocol error, or the budget (`truncated`).
 */
export function runPromptedEpisode(
  task: PromptedTask,
  agent: TranscriptAgent,
  noise: Rng,
  options: Partial<PromptedEnvOptions> = {},
): PromptedEpisode {
  const o: PromptedEnvOptions = { ...PROMPTED_ENV_DEFAULTS, ...options };
  checkOptions(o);
  const level = task.operators.length;
  const prompt = promptTokens(task);
  agent.start(prompt);
  const episode = driveEpisode(
    {
      operands: task.operands,
      answer: task.answer,
      budget: o.budget,
      vocabSize: PROMPTED_VOCAB_SIZE,
      // Phase 0 fresh, 1/2 a call due with operator +/−, 3 computed (promptedContextIndex).
      context: (s) => {
        const phase = !s.read ? 0 : s.calls < level ? (task.operators[s.calls] === '+' ? 1 : 2) : 3;
        return promptedContextIndex(phase, s.verified, s.thinksSinceCall, o.thinkBuckets);
      },
      slipProbability: (s) => slipProbability(s.thinksSinceCall, o),
    },
    agent,
    noise,
  );
  return { task, prompt, ...episode, level };
}
