import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLabError } from '../core/errors.js';
import { Rng } from '../random.js';
import {
  type Action,
  answer,
  type EnvState,
  isCoincidentalSuccess,
  MAX_STEPS,
  type Outcome,
  protocolError,
  reset,
  sampleTask,
  sampleTasks,
  step,
  type Task,
  uniformSuccessProbability,
  zeroOperandProbability,
} from './toolArithmetic.js';

const READ: Action = 0;
const ADD: Action = 1;
const SUB: Action = 2;
const SUBMIT: Action = 3;

const addTask: Task = { kind: 0, a: 7, b: 5 }; // answer 12; the sub tool would give 2
const subTask: Task = { kind: 1, a: 7, b: 5 }; // answer 2; the add tool would give 12

function play(task: Task, actions: Action[]): { state: EnvState; reward: number; outcome: Outcome | null } {
  let state = reset(task);
  let reward = 0;
  let outcome: Outcome | null = null;
  for (const a of actions) {
    const r = step(state, a);
    state = r.state;
    reward = r.reward;
    outcome = r.outcome;
  }
  return { state, reward, outcome };
}

describe('tool-arithmetic env: every stage x action', () => {
  // Hand-written table: stage reached by a prefix, then each of the 4 actions.
  const cases: {
    stage: string;
    prefix: Action[];
    action: Action;
    done: boolean;
    stageAfter: number;
    outcome: Outcome | null;
  }[] = [
    { stage: 'fresh', prefix: [], action: READ, done: false, stageAfter: 1, outcome: null },
    { stage: 'fresh', prefix: [], action: ADD, done: true, stageAfter: 0, outcome: 'compute_before_read' },
    { stage: 'fresh', prefix: [], action: SUB, done: true, stageAfter: 0, outcome: 'compute_before_read' },
    {
      stage: 'fresh',
      prefix: [],
      action: SUBMIT,
      done: true,
      stageAfter: 0,
      outcome: 'submit_without_result',
    },
    { stage: 'read', prefix: [READ], action: READ, done: true, stageAfter: 1, outcome: 'read_twice' },
    { stage: 'read', prefix: [READ], action: ADD, done: false, stageAfter: 2, outcome: null },
    { stage: 'read', prefix: [READ], action: SUB, done: false, stageAfter: 2, outcome: null },
    {
      stage: 'read',
      prefix: [READ],
      action: SUBMIT,
      done: true,
      stageAfter: 1,
      outcome: 'submit_without_result',
    },
    {
      stage: 'computed',
      prefix: [READ, ADD],
      action: READ,
      done: true,
      stageAfter: 2,
      outcome: 'read_twice',
    },
    {
      stage: 'computed',
      prefix: [READ, ADD],
      action: ADD,
      done: true,
      stageAfter: 2,
      outcome: 'compute_twice',
    },
    {
      stage: 'computed',
      prefix: [READ, ADD],
      action: SUB,
      done: true,
      stageAfter: 2,
      outcome: 'compute_twice',
    },
    { stage: 'computed', prefix: [READ, ADD], action: SUBMIT, done: true, stageAfter: 2, outcome: 'success' },
  ];
  for (const c of cases) {
    it(`${c.stage} + action ${c.action} -> ${c.outcome ?? `stage ${c.stageAfter}`}`, () => {
      const before = play(addTask, c.prefix).state;
      const r = step(before, c.action);
      expect(r.done).toBe(c.done);
      expect(r.state.done).toBe(c.done);
      expect(r.state.stage).toBe(c.stageAfter);
      expect(r.outcome).toBe(c.outcome);
      expect(r.reward).toBe(c.outcome === 'success' ? 1 : 0);
      expect(r.state.steps).toBe(c.prefix.length + 1);
      // step is pure
      expect(before.steps).toBe(c.prefix.length);
    });
  }

  it('protocolError agrees with the table for all 12 cells', () => {
    const expected: (string | null)[][] = [
      [null, 'compute_before_read', 'compute_before_read', 'submit_without_result'],
      ['read_twice', null, null, 'submit_without_result'],
      ['read_twice', 'compute_twice', 'compute_twice', null],
    ];
    for (let s = 0; s < 3; s++) {
      for (let a = 0; a < 4; a++) {
        expect(protocolError(s as 0 | 1 | 2, a as Action)).toBe(expected[s]?.[a]);
      }
    }
  });

  it('the tool does the arithmetic: held value is a+b or a-b of the chosen tool', () => {
    expect(play(addTask, [READ, ADD]).state.held).toBe(12);
    expect(play(addTask, [READ, SUB]).state.held).toBe(2);
    expect(play(subTask, [READ, SUB]).state.held).toBe(2);
    expect(play(subTask, [READ, ADD]).state.held).toBe(12);
    expect(play(subTask, [READ, SUB]).state.tool).toBe(SUB);
  });

  it('correct protocol is rewarded, the wrong tool submits a wrong number', () => {
    expect(play(addTask, [READ, ADD, SUBMIT])).toMatchObject({ reward: 1, outcome: 'success' });
    expect(play(subTask, [READ, SUB, SUBMIT])).toMatchObject({ reward: 1, outcome: 'success' });
    expect(play(addTask, [READ, SUB, SUBMIT])).toMatchObject({ reward: 0, outcome: 'wrong_answer' });
    expect(play(subTask, [READ, ADD, SUBMIT])).toMatchObject({ reward: 0, outcome: 'wrong_answer' });
  });

  it('b = 0: the wrong tool gives the right number, is rewarded, and is flagged coincidental', () => {
    const t: Task = { kind: 1, a: 9, b: 0 };
    const r = play(t, [READ, ADD, SUBMIT]);
    expect(r.reward).toBe(1);
    expect(isCoincidentalSuccess(t, 'success', r.state.tool)).toBe(true);
    expect(isCoincidentalSuccess(t, 'success', SUB)).toBe(false);
    expect(isCoincidentalSuccess(addTask, 'wrong_answer', SUB)).toBe(false);
  });

  it('a finished episode cannot be stepped again', () => {
    const done = play(addTask, [SUBMIT]).state;
    expect(() => step(done, READ)).toThrowError(/already ended/);
    try {
      step(done, READ);
    } catch (e) {
      expect(isLabError(e) && e.code).toBe('BAD_ARGUMENT');
    }
  });

  it('rejects an action outside 0..3', () => {
    expect(() => step(reset(addTask), 4 as Action)).toThrowError(/action must be 0..3/);
  });

  it('property: any action sequence ends within 3 steps, reward 1 only via read-tool-submit with the right number', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 3, maxLength: 3 }),
        fc.integer({ min: 0, max: 1 }),
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: -50, max: 50 }),
        (acts, kind, a, b) => {
          const task: Task = { kind: kind as 0 | 1, a, b };
          let state = reset(task);
          let last = step(state, acts[0] as Action);
          let n = 1;
          while (!last.done) {
            state = last.state;
            last = step(state, acts[n] as Action);
            n++;
          }
          expect(n).toBeLessThanOrEqual(MAX_STEPS);
          const truth = kind === 0 ? a + b : a - b;
          const other = kind === 0 ? a - b : a + b;
          const wantReward =
            acts[0] === READ &&
            (acts[1] === ADD || acts[1] === SUB) &&
            acts[2] === SUBMIT &&
            (acts[1] === (kind === 0 ? ADD : SUB) ? truth : other) === truth;
          expect(last.reward).toBe(wantReward ? 1 : 0);
        },
      ),
    );
  });
});

describe('tasks and uniform-policy constants', () => {
  it('answer is a+b for add and a-b for sub', () => {
    expect(answer(addTask)).toBe(12);
    expect(answer(subTask)).toBe(2);
  });

  it('sampleTask stays in range and is deterministic per seed', () => {
    const range = { operandMin: 3, operandMax: 6 };
    const xs = sampleTasks(new Rng(1), 200, range);
    const ys = sampleTasks(new Rng(1), 200, range);
    expect(xs).toEqual(ys);
    expect(xs.every((t) => t.a >= 3 && t.a <= 6 && t.b >= 3 && t.b <= 6)).toBe(true);
    expect(new Set(xs.map((t) => t.kind)).size).toBe(2);
    expect(sampleTasks(new Rng(2), 200, range)).not.toEqual(xs);
    const t = sampleTask(new Rng(5));
    expect(t.a).toBeGreaterThanOrEqual(0);
    expect(t.a).toBeLessThanOrEqual(99);
  });

  it('rejects an empty operand range', () => {
    expect(() => sampleTasks(new Rng(1), 1, { operandMin: 5, operandMax: 4 })).toThrowError(/operand_min/);
  });

  it('uniform success is 1/64 without zero operands, (1 + 1/100)/64 on 0..99', () => {
    expect(uniformSuccessProbability({ operandMin: 1, operandMax: 99 })).toBe(1 / 64);
    expect(zeroOperandProbability({ operandMin: 0, operandMax: 99 })).toBe(1 / 100);
    expect(uniformSuccessProbability({ operandMin: 0, operandMax: 99 })).toBeCloseTo(1.01 / 64, 15);
    expect(zeroOperandProbability({ operandMin: -2, operandMax: 2 })).toBe(1 / 5);
  });
});
