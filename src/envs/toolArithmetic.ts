/**
 * The tool-arithmetic protocol environment of the course's first experiment (`labs/agent.py` on the
 * course page): a finite-action state machine in which a policy must learn the protocol
 * read -> the tool matching the task kind -> submit.
 *
 * - A task is `{kind, a, b}` with kind `add` (answer a + b) or `sub` (answer a - b) and integer
 *   operands drawn from a seeded stream ({@link sampleTask}).
 * - The policy observes only `(kind, stage)`: `fresh` (only the kind is visible), `read` (operands
 *   loaded), `computed` (a tool result is held). It never sees the operands or the held number.
 * - Actions: `read`, `add`, `sub`, `submit`. The tools do the arithmetic on the loaded operands;
 *   `submit` submits the held tool output. Reward is 1 when the submitted value equals the true
 *   answer, else 0 — an outcome reward, computed from the number, not from the protocol.
 * - An action the stage does not allow is a protocol error: the episode ends with reward 0 and the
 *   outcome names the error kind. Allowed: fresh -> read; read -> add | sub; computed -> submit.
 *   So every episode ends within {@link MAX_STEPS} = 3 steps.
 *
 * The b = 0 coincidence, kept on purpose: for b = 0 the wrong tool gives the right number
 * (a + 0 = a - 0), and since the reward checks the number, the wrong protocol is rewarded there. We do
 * not special-case it (that would make the reward inspect the process, which an outcome reward does
 * not); instead episodes record the tool used, so a success with the wrong tool is counted as a
 * "coincidental" success ({@link isCoincidentalSuccess}). Choose operands >= 1 to exclude it.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';

export const KIND_NAMES = ['add', 'sub'] as const;
export const STAGE_NAMES = ['fresh', 'read', 'computed'] as const;
export const ACTION_NAMES = ['read', 'add', 'sub', 'submit'] as const;

export type KindName = (typeof KIND_NAMES)[number];
export type StageName = (typeof STAGE_NAMES)[number];
export type ActionName = (typeof ACTION_NAMES)[number];

/** Task kind index: 0 = add, 1 = sub. */
export type TaskKind = 0 | 1;
/** Stage index: 0 = fresh, 1 = read, 2 = computed. */
export type Stage = 0 | 1 | 2;
/** Action index: 0 = read, 1 = add, 2 = sub, 3 = submit. */
export type Action = 0 | 1 | 2 | 3;

export const NUM_KINDS = 2;
export const NUM_STAGES = 3;
export const NUM_ACTIONS = 4;

export const KIND_ADD: TaskKind = 0;
export const KIND_SUB: TaskKind = 1;
export const STAGE_FRESH: Stage = 0;
export const STAGE_READ: Stage = 1;
export const STAGE_COMPUTED: Stage = 2;
export const ACTION_READ: Action = 0;
export const ACTION_ADD: Action = 1;
export const ACTION_SUB: Action = 2;
export const ACTION_SUBMIT: Action = 3;

/** No episode is longer than read, compute, submit. */
export const MAX_STEPS = 3;

/**
 * Protocol errors, one per disallowed (stage, action) cell:
 * - `compute_before_read`: add/sub at `fresh` (no operands loaded);
 * - `submit_without_result`: submit at `fresh` or `read` (nothing computed to submit);
 * - `read_twice`: read at `read` or `computed`;
 * - `compute_twice`: add/sub at `computed`.
 */
export const PROTOCOL_ERROR_KINDS = [
  'compute_before_read',
  'submit_without_result',
  'read_twice',
  'compute_twice',
] as const;
export type ProtocolErrorKind = (typeof PROTOCOL_ERROR_KINDS)[number];

/** How an episode ended: a correct submission, a wrong number submitted, or a protocol error. */
export type Outcome = 'success' | 'wrong_answer' | ProtocolErrorKind;
export const OUTCOMES: readonly Outcome[] = ['success', 'wrong_answer', ...PROTOCOL_ERROR_KINDS];

export interface Task {
  kind: TaskKind;
  a: number;
  b: number;
}

/** Inclusive integer range the operands a and b are drawn from. */
export interface OperandRange {
  operandMin: number;
  operandMax: number;
}

export const DEFAULT_OPERANDS: OperandRange = { operandMin: 0, operandMax: 99 };

/** Full environment state (the policy sees only `task.kind` and `stage`). */
export interface EnvState {
  readonly task: Task;
  readonly stage: Stage;
  /** The number the last tool produced (null before a tool ran). */
  readonly held: number | null;
  /** Which tool produced `held` (null before a tool ran). */
  readonly tool: Action | null;
  readonly steps: number;
  /** True once the episode ended (submit or protocol error); a done state cannot be stepped. */
  readonly done: boolean;
}

export interface StepResult {
  state: EnvState;
  /** 1 only for a submitted value equal to the true answer. */
  reward: 0 | 1;
  done: boolean;
  /** Set when `done`. */
  outcome: Outcome | null;
}

/** The true answer: a + b for add, a - b for sub. */
export function answer(task: Task): number {
  return task.kind === KIND_ADD ? task.a + task.b : task.a - task.b;
}

/** The tool that matches a task kind (add -> `add`, sub -> `sub`). */
export function matchingTool(kind: TaskKind): Action {
  return kind === KIND_ADD ? ACTION_ADD : ACTION_SUB;
}

/** Checks an operand range once (integers, min <= max, results stay exact integers). */
export function checkOperandRange(range: OperandRange): void {
  const { operandMin, operandMax } = range;
  const limit = 2 ** 50;
  if (!Number.isSafeInteger(operandMin) || !Number.isSafeInteger(operandMax) || operandMax < operandMin) {
    throw new LabError(
      'BAD_ARGUMENT',
      `operand range: expected integers with operand_min <= operand_max, got [${operandMin}, ${operandMax}]`,
      { details: { field: 'operand_min', operandMin, operandMax } },
    );
  }
  if (Math.abs(operandMin) > limit || Math.abs(operandMax) > limit) {
    throw new LabError(
      'BAD_ARGUMENT',
      `operand range: |operands| must be <= 2^50, got [${operandMin}, ${operandMax}]`,
      {
        details: { field: 'operand_max', operandMin, operandMax },
      },
    );
  }
}

/**
 * Draws one task: kind uniform over {add, sub}, then a and b uniform over the operand range
 * (three draws from `rng`, in that order).
 */
export function sampleTask(rng: Rng, range: OperandRange = DEFAULT_OPERANDS): Task {
  const kind = rng.int(0, 1) as TaskKind;
  const a = rng.int(range.operandMin, range.operandMax);
  const b = rng.int(range.operandMin, range.operandMax);
  return { kind, a, b };
}

/** `count` tasks drawn in sequence from `rng` (see {@link sampleTask}). */
export function sampleTasks(rng: Rng, count: number, range: OperandRange = DEFAULT_OPERANDS): Task[] {
  checkOperandRange(range);
  if (!Number.isInteger(count) || count < 0) {
    throw new LabError('BAD_ARGUMENT', `sampleTasks: count must be a non-negative integer, got ${count}`, {
      details: { field: 'count' },
    });
  }
  const tasks: Task[] = [];
  for (let i = 0; i < count; i++) tasks.push(sampleTask(rng, range));
  return tasks;
}

/** The initial state of an episode: stage `fresh`, nothing held. */
export function reset(task: Task): EnvState {
  return { task, stage: STAGE_FRESH, held: null, tool: null, steps: 0, done: false };
}

/** Which protocol error `action` is at `stage`, or null when the action is allowed there. */
export function protocolError(stage: Stage, action: Action): ProtocolErrorKind | null {
  if (stage === STAGE_FRESH) {
    if (action === ACTION_READ) return null;
    return action === ACTION_SUBMIT ? 'submit_without_result' : 'compute_before_read';
  }
  if (stage === STAGE_READ) {
    if (action === ACTION_ADD || action === ACTION_SUB) return null;
    return action === ACTION_READ ? 'read_twice' : 'submit_without_result';
  }
  if (action === ACTION_SUBMIT) return null;
  return action === ACTION_READ ? 'read_twice' : 'compute_twice';
}

/**
 * One transition. Pure: returns a new state, never mutates `state`.
 * - allowed `read`: fresh -> read (operands loaded), reward 0;
 * - allowed `add`/`sub`: read -> computed, holding a + b or a - b (the tool chosen, not the task's);
 * - allowed `submit`: done, reward 1 iff held === answer(task);
 * - anything else: done with reward 0 and the protocol-error kind as outcome.
 */
export function step(state: EnvState, action: Action): StepResult {
  if (state.done || state.steps >= MAX_STEPS) {
    throw new LabError('BAD_ARGUMENT', `step: the episode already ended (after ${state.steps} steps)`, {
      details: { field: 'state', steps: state.steps },
    });
  }
  if (!(action === 0 || action === 1 || action === 2 || action === 3)) {
    throw new LabError('BAD_ARGUMENT', `step: action must be 0..3 (read, add, sub, submit), got ${action}`, {
      details: { field: 'action', value: action },
    });
  }
  const steps = state.steps + 1;
  const error = protocolError(state.stage, action);
  if (error !== null) {
    return { state: { ...state, steps, done: true }, reward: 0, done: true, outcome: error };
  }
  if (action === ACTION_READ) {
    return { state: { ...state, stage: STAGE_READ, steps }, reward: 0, done: false, outcome: null };
  }
  if (action === ACTION_ADD || action === ACTION_SUB) {
    const { a, b } = state.task;
    const held = action === ACTION_ADD ? a + b : a - b;
    return {
      state: { ...state, stage: STAGE_COMPUTED, held, tool: action, steps },
      reward: 0,
      done: false,
      outcome: null,
    };
  }
  const correct = state.held === answer(state.task);
  return {
    state: { ...state, steps, done: true },
    reward: correct ? 1 : 0,
    done: true,
    outcome: correct ? 'success' : 'wrong_answer',
  };
}

/** A success obtained with the wrong tool (only possible when b = 0: a + 0 = a - 0). */
export function isCoincidentalSuccess(task: Task, outcome: Outcome, tool: Action | null): boolean {
  return outcome === 'success' && tool !== matchingTool(task.kind);
}

/**
 * Success probability of the uniform policy (every action 1/4 at every stage) on tasks drawn from
 * `range`: read (1/4), then the matching tool (1/4) or — only when b = 0 — the other tool (1/4),
 * then submit (1/4): `(1 + P(b = 0)) / 64`. With operands that exclude 0 this is exactly 1/64.
 */
export function uniformSuccessProbability(range: OperandRange = DEFAULT_OPERANDS): number {
  return (1 + zeroOperandProbability(range)) / 64;
}

/** P(b = 0) for b uniform over the inclusive operand range. */
export function zeroOperandProbability(range: OperandRange): number {
  checkOperandRange(range);
  const { operandMin, operandMax } = range;
  return operandMin <= 0 && operandMax >= 0 ? 1 / (operandMax - operandMin + 1) : 0;
}
