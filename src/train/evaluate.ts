/**
 * Held-out evaluation of a tabular policy on the tool-arithmetic env: one episode per task, outcome
 * counts by kind (success, wrong answer, each protocol error) and coincidental successes (right
 * number from the wrong tool, b = 0).
 */
import {
  ACTION_READ,
  ACTION_SUBMIT,
  KIND_ADD,
  KIND_SUB,
  matchingTool,
  OUTCOMES,
  type Outcome,
  STAGE_COMPUTED,
  STAGE_FRESH,
  STAGE_READ,
  type Task,
} from '../envs/toolArithmetic.js';
import { actionProbs, checkLogits } from '../policy/tabular.js';
import type { Rng } from '../random.js';
import { type ActionSelection, rolloutEpisode } from './episode.js';

export interface EvalResult {
  tasks: number;
  /** successes / tasks. */
  success: number;
  /** Episodes per outcome (every outcome present, 0 when none); the counts sum to `tasks`. */
  counts: Record<Outcome, number>;
  /** Successes with the wrong tool (possible only for b = 0). */
  coincidental: number;
}

/**
 * Plays every task once with `logits` (sampled actions from `rng`, or greedy) and counts outcomes.
 * `success = #success / tasks`. Draws only from `rng`, in task order.
 */
export function evaluatePolicy(
  logits: ArrayLike<number>,
  tasks: readonly Task[],
  rng: Rng,
  selection: ActionSelection = 'sample',
): EvalResult {
  checkLogits(logits);
  const counts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  let coincidental = 0;
  for (const task of tasks) {
    const ep = rolloutEpisode(logits, task, rng, selection);
    counts[ep.outcome] += 1;
    if (ep.coincidental) coincidental += 1;
  }
  return {
    tasks: tasks.length,
    success: tasks.length ? counts.success / tasks.length : 0,
    counts,
    coincidental,
  };
}

/**
 * Exact probability that the policy plays the correct protocol (read -> matching tool -> submit),
 * averaged over the two task kinds (tasks are add/sub with probability 1/2 each):
 *   (1/2) * sum_k pi(read | k, fresh) * pi(tool_k | k, read) * pi(submit | k, computed).
 * This is the success probability on tasks with b != 0 (with b = 0 the wrong tool also succeeds).
 * A noise-free companion to the sampled success rate.
 */
export function protocolSuccessProbability(logits: ArrayLike<number>): number {
  checkLogits(logits);
  let total = 0;
  for (const kind of [KIND_ADD, KIND_SUB]) {
    const read = actionProbs(logits, kind, STAGE_FRESH)[ACTION_READ] as number;
    const tool = actionProbs(logits, kind, STAGE_READ)[matchingTool(kind)] as number;
    const submit = actionProbs(logits, kind, STAGE_COMPUTED)[ACTION_SUBMIT] as number;
    total += read * tool * submit;
  }
  return total / 2;
}
