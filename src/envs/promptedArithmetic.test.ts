import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { Rng } from '../random.js';
import {
  maxPromptLength,
  PROMPTED_ENV_DEFAULTS,
  PROMPTED_VOCAB,
  type PromptedTask,
  promptedContextCount,
  promptedContextIndex,
  promptTokens,
  runPromptedEpisode,
  samplePromptedTask,
  slipProbability,
  TOK_MINUS,
  TOK_PLUS,
  type TranscriptAgent,
} from './promptedArithmetic.js';
import {
  ROLE_ENV,
  ROLE_MODEL,
  TOK_ADD,
  TOK_END,
  TOK_FIX,
  TOK_READ,
  TOK_SUB,
  TOK_SUBMIT,
  TOK_THINK,
  TOK_VERIFY,
} from './tokenArithmetic.js';

/** Emits the given tokens in order; records what it was shown. */
function script(tokens: number[]): TranscriptAgent & { seen: number[]; contexts: number[] } {
  let i = 0;
  const seen: number[] = [];
  const contexts: number[] = [];
  return {
    seen,
    contexts,
    start: (prompt) => seen.push(...prompt),
    choose: (ctx) => {
      contexts.push(ctx);
      const t = tokens[i++];
      if (t === undefined) throw new Error('script exhausted');
      return t;
    },
    append: (tok) => seen.push(tok),
  };
}

const d = (c: string) => PROMPTED_VOCAB.indexOf(c);
const task: PromptedTask = { operands: [47, 5, 12], operators: ['+', '-'], answer: 40 };
const exact = { toolErrorRate: 0 };

describe('prompted arithmetic env', () => {
  it('writes the task in the prompt and needs one tool call per operator', () => {
    expect(promptTokens(task)).toEqual([
      d('4'),
      d('7'),
      TOK_PLUS,
      d('5'),
      TOK_MINUS,
      d('1'),
      d('2'),
      TOK_END,
    ]);
    const agent = script([TOK_READ, TOK_ADD, TOK_SUB, TOK_SUBMIT]);
    const ep = runPromptedEpisode(task, agent, new Rng(1), exact);
    expect(ep.status).toBe('success');
    expect(ep.level).toBe(2);
    // read -> 47 , 5 , 12 ;   add -> 52 ;   sub -> 40 ;
    const env = ep.tokens.filter((_, i) => ep.roles[i] === ROLE_ENV);
    expect(env).toEqual([
      ...[d('4'), d('7'), d(','), d('5'), d(','), d('1'), d('2'), TOK_END],
      ...[d('5'), d('2'), TOK_END],
      ...[d('4'), d('0'), TOK_END],
    ]);
    expect(agent.seen).toEqual([...ep.prompt, ...ep.tokens]);
    // tabular contexts: fresh, '+' due, '-' due, computed
    expect(agent.contexts).toEqual([0, 1, 2, 3].map((phase) => promptedContextIndex(phase, false, 0, 3)));
  });

  it('numbers the tabular contexts densely: every (phase, verified, bucket) a distinct id below the count', () => {
    const ids = new Set<number>();
    for (let phase = 0; phase < 4; phase++)
      for (const verified of [false, true])
        for (let thinks = 0; thinks < 5; thinks++) ids.add(promptedContextIndex(phase, verified, thinks, 3));
    expect(ids.size).toBe(promptedContextCount(3));
    expect(Math.max(...ids)).toBe(promptedContextCount(3) - 1);
  });

  it('gives a wrong number for the wrong tool, which verify repairs', () => {
    const wrong = runPromptedEpisode(
      task,
      script([TOK_READ, TOK_ADD, TOK_ADD, TOK_SUBMIT]),
      new Rng(1),
      exact,
    );
    expect(wrong.status).toBe('wrong_answer');
    const fixed = runPromptedEpisode(
      task,
      script([TOK_READ, TOK_ADD, TOK_ADD, TOK_VERIFY, TOK_SUBMIT]),
      new Rng(1),
      exact,
    );
    expect(fixed.status).toBe('success');
    expect(fixed.verified).toBe(true);
    expect(fixed.tokens).toContain(TOK_FIX);
  });

  it('names protocol errors by action and stage', () => {
    const at = (tokens: number[]) => runPromptedEpisode(task, script(tokens), new Rng(1), exact).errorKind;
    expect(at([TOK_ADD])).toBe('add_at_fresh');
    expect(at([TOK_READ, TOK_SUBMIT])).toBe('submit_at_read');
    expect(at([TOK_READ, TOK_ADD, TOK_SUBMIT])).toBe('submit_at_computing');
    expect(at([TOK_READ, TOK_ADD, TOK_SUB, TOK_READ])).toBe('read_at_computed');
    expect(at([TOK_READ, TOK_ADD, TOK_SUB, TOK_VERIFY, TOK_VERIFY])).toBe('verify_twice');
    expect(at([d('7')])).toBe('observation_token');
    expect(at([TOK_PLUS])).toBe('observation_token');
  });

  it('truncates at the budget', () => {
    const ep = runPromptedEpisode(task, script(new Array(60).fill(TOK_THINK)), new Rng(1), { budget: 10 });
    expect(ep.status).toBe('truncated');
    expect(ep.tokens.length).toBe(10);
  });

  it('lets the first thinks before a call lower its slip chance, with diminishing returns', () => {
    const o = PROMPTED_ENV_DEFAULTS;
    const p = [0, 1, 2, 3].map((n) => slipProbability(n, o));
    expect(p).toEqual([0.3, 0.15, 0.075, 0.075]);
    // measured: slips of a 1-call task with 0 vs 2 thinks
    const one: PromptedTask = { operands: [30, 20], operators: ['+'], answer: 50 };
    const rate = (thinks: number) => {
      const noise = new Rng(9);
      let wrong = 0;
      for (let i = 0; i < 4000; i++) {
        const toks = [TOK_READ, ...new Array(thinks).fill(TOK_THINK), TOK_ADD, TOK_SUBMIT];
        if (runPromptedEpisode(one, script(toks), noise).toolWasWrong) wrong++;
      }
      return wrong / 4000;
    };
    expect(Math.abs(rate(0) - 0.3)).toBeLessThan(0.03);
    expect(Math.abs(rate(2) - 0.075)).toBeLessThan(0.02);
  });

  it('samples tasks of every level with non-negative partial results and bounded prompts', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 0, max: 999 }), (seed, maxOperand) => {
        const t = samplePromptedTask(new Rng(seed), maxOperand);
        let v = t.operands[0] as number;
        t.operators.forEach((op, i) => {
          v = op === '+' ? v + (t.operands[i + 1] as number) : v - (t.operands[i + 1] as number);
          expect(v).toBeGreaterThanOrEqual(0);
        });
        expect(v).toBe(t.answer);
        expect(promptTokens(t).length).toBeLessThanOrEqual(maxPromptLength(maxOperand));
      }),
    );
    const levels = new Set<number>();
    const rng = new Rng(3);
    for (let i = 0; i < 100; i++) levels.add(samplePromptedTask(rng).operators.length);
    expect([...levels].sort()).toEqual([1, 2, 3]);
  });

  it('is deterministic for a seed and rejects bad options', () => {
    const run = () => {
      const rng = new Rng(4);
      return runPromptedEpisode(task, script([TOK_READ, TOK_ADD, TOK_SUB, TOK_SUBMIT]), rng);
    };
    expect(run()).toEqual(run());
    expect(run().roles[0]).toBe(ROLE_MODEL);
    expectLabError(
      () => runPromptedEpisode(task, script([]), new Rng(1), { thinkDecay: 2 }),
      'BAD_ARGUMENT',
      'think_decay',
    );
    expectLabError(() => samplePromptedTask(new Rng(1), 9, 1, 4), 'BAD_ARGUMENT', 'max_level');
  });
});
