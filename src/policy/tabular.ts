/**
 * The tabular softmax policy of the agent experiment: a logits table `[2 kinds][3 stages][4 actions]`
 * = 24 logits in one plain `Float64Array`, row-major, so the row of observation (kind, stage) starts
 * at `(kind * 3 + stage) * 4`. A policy version (snapshot) is a cheap `logits.slice()`.
 *
 *   pi(a | kind, stage) = exp(z[k,s,a]) / sum_j exp(z[k,s,j])
 *   log pi(a | k, s)    = z[k,s,a] - logsumexp_j z[k,s,j]
 *   d log pi(a | k, s) / d z[k,s,j] = 1[j = a] - pi(j | k, s)   (0 for every other row)
 *
 * All functions take the table explicitly (no hidden state); `checkLogits` validates it once at the
 * entry of a loop, the per-action functions do not re-check.
 */
import { LabError } from '../core/errors.js';
import {
  type Action,
  NUM_ACTIONS,
  NUM_KINDS,
  NUM_STAGES,
  type Stage,
  type TaskKind,
} from '../envs/toolArithmetic.js';
import type { Rng } from '../random.js';
import { softmaxRow } from './softmax.js';

/** 2 * 3 * 4 = 24. */
export const NUM_LOGITS = NUM_KINDS * NUM_STAGES * NUM_ACTIONS;

/** A zero table: the uniform policy (every action 1/4 in every observation). */
export function createLogits(): Float64Array {
  return new Float64Array(NUM_LOGITS);
}

/** Throws unless `logits` is a length-24 table of finite numbers (names the first bad entry). */
export function checkLogits(logits: ArrayLike<number>, field = 'logits'): void {
  if (logits.length !== NUM_LOGITS) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${field}: expected ${NUM_LOGITS} logits [2,3,4], got ${logits.length}`,
      {
        details: { field, expected: NUM_LOGITS, actual: logits.length },
      },
    );
  }
  for (let i = 0; i < NUM_LOGITS; i++) {
    const v = logits[i] as number;
    if (!Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: logit ${v} at index ${i} is not finite`, {
        details: { field, index: i, value: v },
      });
    }
  }
}

/** Offset of the 4-action row for observation (kind, stage). */
export function rowOffset(kind: TaskKind, stage: Stage): number {
  return (kind * NUM_STAGES + stage) * NUM_ACTIONS;
}

/**
 * pi(. | kind, stage) as 4 probabilities written into `out` (max-subtracted softmax, so large logits
 * do not overflow).
 */
export function actionProbs(
  logits: ArrayLike<number>,
  kind: TaskKind,
  stage: Stage,
  out: Float64Array = new Float64Array(NUM_ACTIONS),
): Float64Array {
  return softmaxRow(logits, rowOffset(kind, stage), NUM_ACTIONS, out);
}

/**
 * log pi(action | kind, stage) = z_a - logsumexp(z), with logsumexp = max + log1p(sum of the other
 * exp(z_j - max)) rather than softmax.ts's `logSumExpRow` (max + log(sum)): log1p keeps full precision for a near-deterministic row (log-probs like -3e-13),
 * which matters when log-probs are differenced into probability ratios.
 */
export function logProb(logits: ArrayLike<number>, kind: TaskKind, stage: Stage, action: Action): number {
  const o = rowOffset(kind, stage);
  let best = 0;
  for (let j = 1; j < NUM_ACTIONS; j++)
    if ((logits[o + j] as number) > (logits[o + best] as number)) best = j;
  const max = logits[o + best] as number;
  let rest = 0;
  for (let j = 0; j < NUM_ACTIONS; j++) if (j !== best) rest += Math.exp((logits[o + j] as number) - max);
  return (logits[o + action] as number) - max - Math.log1p(rest);
}

/**
 * Scratch row of probabilities for {@link sampleAction} and {@link accumulateGradLogProb}: each
 * reads it right after writing it and neither calls the other, so nothing escapes. A fresh typed
 * array per action was most of a cold `labs run`'s garbage (over 100k 4-element arrays in one agent
 * run), and on a VM where a fresh memory page is expensive the young generation that garbage grew
 * cost more than the arithmetic.
 */
const probsScratch = new Float64Array(NUM_ACTIONS);

/** Draws an action from pi(. | kind, stage) with one uniform draw from `rng`. */
export function sampleAction(logits: ArrayLike<number>, kind: TaskKind, stage: Stage, rng: Rng): Action {
  return rng.categorical(actionProbs(logits, kind, stage, probsScratch)) as Action;
}

/** argmax_a pi(a | kind, stage); ties go to the lowest action index. Draws nothing. */
export function greedyAction(logits: ArrayLike<number>, kind: TaskKind, stage: Stage): Action {
  const o = rowOffset(kind, stage);
  let best = 0;
  for (let j = 1; j < NUM_ACTIONS; j++)
    if ((logits[o + j] as number) > (logits[o + best] as number)) best = j;
  return best as Action;
}

/**
 * Accumulates `scale * d log pi(action | kind, stage) / d z` into `grad` (length 24):
 * `grad[row + j] += scale * (1[j = action] - pi(j | kind, stage))`; other rows are untouched.
 * Summing this over a trajectory's steps with scale = its advantage gives the REINFORCE term
 * `A * sum_t grad log pi(a_t | s_t)`.
 */
export function accumulateGradLogProb(
  logits: ArrayLike<number>,
  kind: TaskKind,
  stage: Stage,
  action: Action,
  scale: number,
  grad: Float64Array,
): void {
  const probs = actionProbs(logits, kind, stage, probsScratch);
  const o = rowOffset(kind, stage);
  for (let j = 0; j < NUM_ACTIONS; j++) {
    const indicator = j === action ? 1 : 0;
    grad[o + j] = (grad[o + j] as number) + scale * (indicator - (probs[j] as number));
  }
}
