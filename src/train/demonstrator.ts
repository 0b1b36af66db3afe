/**
 * A scripted demonstrator for the prompted arithmetic env (src/envs/promptedArithmetic.ts): the
 * source of the transcripts the sequence policy is pretrained on (src/train/sft.ts) before RL, as an
 * LLM is supervised-finetuned on demonstrations before reasoning RL starts from it.
 *
 * Its quality is controllable: each episode it draws one behaviour from a mixture and plays that
 * script through the real env (so the environment's tokens, tool slips and protocol errors are the
 * env's own). Behaviours, for a task of k tool calls with operators op_1..op_k:
 *
 * | behaviour      | script                                                     | outcome                 |
 * |---|---|---|
 * | `direct`       | read, op_1 .. op_k, submit                                 | right unless a tool slips (0.7^k) |
 * | `verify`       | read, op_1 .. op_k, verify, submit                         | right (verify repairs)  |
 * | `think`        | read, (1-2 thinks, op_i) for each call, verify w.p. 1/2, submit | fewer slips         |
 * | `wrong_tool`   | read, the ops with one (uniform) replaced by the other tool, verify w.p. 1/2, submit | wrong unless verified or the operand is 0 |
 * | `extra_call`   | read, op_1 .. op_k, one more add/sub                       | protocol error (`*_at_computed`) |
 * | `missing_call` | read, op_1 .. op_{k-1}, submit (k = 1: read, submit)       | protocol error (`submit_at_*`) |
 * | `early_submit` | submit before anything                                     | protocol error (`submit_at_fresh`) |
 *
 * So a model that imitates the mixture has a realistic spread of behaviours (correct protocols
 * with and without `verify` and `think`, wrong tools, too many and too few calls, early submits),
 * not one script. Every draw comes from the stream passed in.
 */
import { LabError } from '../core/errors.js';
import {
  type PromptedEnvOptions,
  type PromptedEpisode,
  type PromptedTask,
  runPromptedEpisode,
  type TranscriptAgent,
} from '../envs/promptedArithmetic.js';
import { TOK_ADD, TOK_READ, TOK_SUB, TOK_SUBMIT, TOK_THINK, TOK_VERIFY } from '../envs/tokenVocab.js';
import type { Rng } from '../random.js';

export const DEMONSTRATOR_BEHAVIOURS = [
  'direct',
  'verify',
  'think',
  'wrong_tool',
  'extra_call',
  'missing_call',
  'early_submit',
] as const;
export type DemonstratorBehaviour = (typeof DEMONSTRATOR_BEHAVIOURS)[number];

/** Non-negative weight per behaviour (need not sum to 1; the sum must be positive). */
export type DemonstratorMixture = Readonly<Record<DemonstratorBehaviour, number>>;

/**
 * The mixture's cumulative probabilities (behaviour order), after checking it. `field` names the
 * option a weight comes from (`sft_weight_<behaviour>`). Errors: BAD_ARGUMENT naming the weight for
 * a negative or non-finite weight, and naming every weight when they do not sum to a positive number.
 */
export function mixtureCdf(mixture: DemonstratorMixture, field = (b: string) => `sft_weight_${b}`): number[] {
  let sum = 0;
  for (const b of DEMONSTRATOR_BEHAVIOURS) {
    const w = mixture[b];
    if (!(typeof w === 'number' && Number.isFinite(w) && w >= 0)) {
      throw new LabError('BAD_ARGUMENT', `${field(b)}: expected a finite weight >= 0, got ${w}`, {
        details: { field: field(b), value: w },
      });
    }
    sum += w;
  }
  if (!(sum > 0)) {
    const names = DEMONSTRATOR_BEHAVIOURS.map(field).join(', ');
    throw new LabError(
      'BAD_ARGUMENT',
      `demonstrator weights ${names}: must sum to a positive number, got ${sum}`,
      { details: { field: field(DEMONSTRATOR_BEHAVIOURS[0]), value: sum } },
    );
  }
  let acc = 0;
  return DEMONSTRATOR_BEHAVIOURS.map((b) => {
    acc += mixture[b] / sum;
    return acc;
  });
}

/** One behaviour drawn from the mixture's cumulative probabilities (one uniform draw). */
export function drawBehaviour(cdf: readonly number[], rng: Rng): DemonstratorBehaviour {
  const u = rng.next();
  for (let i = 0; i < cdf.length; i++) {
    if (u < (cdf[i] as number)) return DEMONSTRATOR_BEHAVIOURS[i] as DemonstratorBehaviour;
  }
  // u is below the last entry (1 up to rounding); rounding can leave it just under u: the last positive weight
  for (let i = cdf.length - 1; i >= 0; i--) {
    if ((cdf[i] as number) > (i > 0 ? (cdf[i - 1] as number) : 0)) {
      return DEMONSTRATOR_BEHAVIOURS[i] as DemonstratorBehaviour;
    }
  }
  return DEMONSTRATOR_BEHAVIOURS[0];
}

const toolOf = (op: '+' | '-'): number => (op === '+' ? TOK_ADD : TOK_SUB);

/**
 * The action tokens `behaviour` plays on `task` (see the file comment), drawing its choices (think
 * counts, whether to verify, which call uses the wrong tool, the extra call's tool) from `rng`.
 * The env may end the episode before the plan does (a protocol error, the budget).
 */
export function demonstrationPlan(task: PromptedTask, behaviour: DemonstratorBehaviour, rng: Rng): number[] {
  const tools = task.operators.map(toolOf);
  const k = tools.length;
  switch (behaviour) {
    case 'direct':
      return [TOK_READ, ...tools, TOK_SUBMIT];
    case 'verify':
      return [TOK_READ, ...tools, TOK_VERIFY, TOK_SUBMIT];
    case 'think': {
      const out = [TOK_READ];
      for (const t of tools) {
        const thinks = rng.int(1, 2);
        for (let i = 0; i < thinks; i++) out.push(TOK_THINK);
        out.push(t);
      }
      if (rng.next() < 0.5) out.push(TOK_VERIFY);
      out.push(TOK_SUBMIT);
      return out;
    }
    case 'wrong_tool': {
      const wrong = rng.int(0, k - 1);
      const out = [TOK_READ, ...tools.map((t, i) => (i === wrong ? (t === TOK_ADD ? TOK_SUB : TOK_ADD) : t))];
      if (rng.next() < 0.5) out.push(TOK_VERIFY);
      out.push(TOK_SUBMIT);
      return out;
    }
    case 'extra_call':
      return [TOK_READ, ...tools, rng.next() < 0.5 ? TOK_ADD : TOK_SUB];
    case 'missing_call':
      return [TOK_READ, ...tools.slice(0, k - 1), TOK_SUBMIT];
    case 'early_submit':
      return [TOK_SUBMIT];
  }
}

/** A {@link TranscriptAgent} that plays a fixed list of action tokens (and ignores what it reads). */
class ScriptAgent implements TranscriptAgent {
  private next = 0;
  constructor(private readonly plan: readonly number[]) {}
  start(): void {
    this.next = 0;
  }
  choose(): number {
    // A plan always ends in submit or a protocol error, so the env stops before it runs out.
    const tok = this.plan[this.next++];
    return tok ?? TOK_SUBMIT;
  }
  append(): void {}
}

/** A demonstration: the env's episode and the behaviour that played it. */
export interface Demonstration extends PromptedEpisode {
  behaviour: DemonstratorBehaviour;
}

/**
 * One demonstration per task: a behaviour from `cdf` ({@link mixtureCdf}) and its plan's choices
 * from `behaviourRng`, the tool slips from `noise`, under the env options `env`.
 */
export function demonstrate(
  tasks: readonly PromptedTask[],
  cdf: readonly number[],
  behaviourRng: Rng,
  noise: Rng,
  env: Partial<PromptedEnvOptions>,
): Demonstration[] {
  return tasks.map((task) => {
    const behaviour = drawBehaviour(cdf, behaviourRng);
    const plan = demonstrationPlan(task, behaviour, behaviourRng);
    return { ...runPromptedEpisode(task, new ScriptAgent(plan), noise, env), behaviour };
  });
}
