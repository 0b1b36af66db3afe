import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { Rng } from '../random.js';
import { driveEpisode, type EpisodePolicy, type EpisodeRules, type EpisodeState } from './episodeDriver.js';
import {
  digitTokens,
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
  VOCAB_SIZE,
} from './tokenVocab.js';

/** Context id that spells the whole state, so a test can read back what the hook was shown. */
const spell = (s: Readonly<EpisodeState>) =>
  (s.read ? 10000 : 0) + s.calls * 1000 + (s.verified ? 100 : 0) + s.thinks * 10 + s.thinksSinceCall;

function rules(operands: number[], answer: number, over: Partial<EpisodeRules> = {}): EpisodeRules {
  return {
    operands,
    answer,
    budget: 200,
    vocabSize: VOCAB_SIZE,
    context: spell,
    slipProbability: () => 0,
    ...over,
  };
}

/** Emits `tokens` in order; records every token appended to the transcript. */
function script(tokens: number[]): EpisodePolicy & { appended: number[] } {
  let i = 0;
  const appended: number[] = [];
  return {
    appended,
    choose: () => {
      const t = tokens[i++];
      if (t === undefined) throw new Error('script exhausted');
      return t;
    },
    append: (tok) => appended.push(tok),
  };
}

describe('driveEpisode', () => {
  it('shows each hook the state in force: before a model token, after the action for env tokens', () => {
    const slipSeen: number[] = [];
    const r = rules([12, 3, 4], 11, {
      slipProbability: (s) => {
        slipSeen.push(s.thinksSinceCall);
        return 0;
      },
    });
    const policy = script([
      TOK_THINK,
      TOK_READ,
      TOK_THINK,
      TOK_THINK,
      TOK_ADD,
      TOK_SUB,
      TOK_VERIFY,
      TOK_SUBMIT,
    ]);
    const ep = driveEpisode(r, policy, new Rng(1));
    expect(ep.status).toBe('success');
    // thinks since the last call: 3 before the first call, 0 before the second
    expect(slipSeen).toEqual([3, 0]);
    const model = ep.contexts.filter((_, i) => ep.roles[i] === ROLE_MODEL);
    expect(model).toEqual([0, 11, 10011, 10022, 10033, 11030, 12030, 12130]);
    // env tokens carry the state after the action that wrote them: read's 7 (`12,3,4;`), add's 3
    // (`15;`, thinksSinceCall reset), sub's 3 (`11;`), verify's 11 (`12,3,4=11ok;`)
    const env = ep.contexts.filter((_, i) => ep.roles[i] === ROLE_ENV);
    const runs = (...parts: [number, number][]) => parts.flatMap(([ctx, n]) => Array<number>(n).fill(ctx));
    expect(env).toEqual(runs([10011, 7], [11030, 3], [12030, 3], [12130, 11]));
    expect(ep.thinkTokens).toBe(3);
    expect(policy.appended).toEqual(ep.tokens);
  });

  it('applies the operands in order to the held number and writes them as the task has them', () => {
    // 12 + 3 = 15, 15 - 4 = 11; verify writes the operands, = held, ok
    const ep = driveEpisode(
      rules([12, 3, 4], 11),
      script([TOK_READ, TOK_ADD, TOK_SUB, TOK_VERIFY, TOK_SUBMIT]),
      new Rng(1),
    );
    const list = [...digitTokens(12), TOK_COMMA, ...digitTokens(3), TOK_COMMA, ...digitTokens(4)];
    const env = ep.tokens.filter((_, i) => ep.roles[i] === ROLE_ENV);
    expect(env).toEqual([
      ...list,
      TOK_END,
      ...digitTokens(15),
      TOK_END,
      ...digitTokens(11),
      TOK_END,
      ...list,
      TOK_EQUALS,
      ...digitTokens(11),
      TOK_OK,
      TOK_END,
    ]);
    // the wrong second tool (add) gives 19; verify repairs it to the answer
    const wrong = driveEpisode(
      rules([12, 3, 4], 11),
      script([TOK_READ, TOK_ADD, TOK_ADD, TOK_VERIFY, TOK_SUBMIT]),
      new Rng(1),
    );
    expect(wrong.status).toBe('success');
    expect(wrong.tokens).toContain(TOK_FIX);
    const unverified = driveEpisode(
      rules([12, 3, 4], 11),
      script([TOK_READ, TOK_ADD, TOK_ADD, TOK_SUBMIT]),
      new Rng(1),
    );
    expect(unverified.status).toBe('wrong_answer');
  });

  it('names protocol errors by stage, computing included', () => {
    const err = (tokens: number[], operands = [5, 1, 1]) =>
      driveEpisode(rules(operands, 7), script(tokens), new Rng(1)).errorKind;
    expect(err([TOK_ADD])).toBe('add_at_fresh');
    expect(err([TOK_READ, TOK_SUBMIT])).toBe('submit_at_read');
    expect(err([TOK_READ, TOK_ADD, TOK_VERIFY])).toBe('verify_at_computing');
    expect(err([TOK_READ, TOK_ADD, TOK_ADD, TOK_SUB])).toBe('sub_at_computed');
    expect(err([TOK_READ, TOK_ADD, TOK_ADD, TOK_VERIFY, TOK_VERIFY])).toBe('verify_twice');
    expect(err([TOK_COMMA])).toBe('observation_token');
    // no calls needed: read leads straight to computed
    expect(err([TOK_READ, TOK_ADD], [5])).toBe('add_at_computed');
    expectLabError(() => err([VOCAB_SIZE]), 'BAD_ARGUMENT', 'token 21', 'position 0');
  });

  it('draws noise once per tool call, three times when it slips, and nowhere else', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 1e6 }),
        (k, slip, seed) => {
          const operands = Array.from({ length: k + 1 }, () => 50);
          const noise = new Rng(seed).fork('noise');
          const tokens = [
            TOK_THINK,
            TOK_READ,
            ...Array.from({ length: k }, () => TOK_ADD),
            TOK_VERIFY,
            TOK_SUBMIT,
          ];
          const r = rules(operands, 50 * (k + 1), { slipProbability: () => (slip ? 1 : 0) });
          const ep = driveEpisode(r, script(tokens), noise);
          expect(ep.status).toBe('success');
          expect(ep.toolWasWrong).toBe(slip && k > 0);
          const reference = new Rng(seed).fork('noise');
          for (let i = 0; i < k * (slip ? 3 : 1); i++) reference.next();
          expect(noise.next()).toBe(reference.next());
        },
      ),
      { numRuns: 100 },
    );
  });

  it('property: any policy stops at the budget; truncation fills it exactly; append sees every token', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 1e6 }),
        (budget, k, seed) => {
          const rng = new Rng(seed);
          const task = rng.fork('task');
          const operands = Array.from({ length: k + 1 }, () => task.int(0, 99));
          const pick = rng.fork('policy');
          const appended: number[] = [];
          const policy: EpisodePolicy = {
            // mostly actions, so episodes get past the first token
            choose: () => (pick.next() < 0.98 ? pick.int(0, 5) : pick.int(0, VOCAB_SIZE - 1)),
            append: (tok) => appended.push(tok),
          };
          const r = rules(operands, task.int(0, 300), { budget, slipProbability: () => 0.5 });
          const ep = driveEpisode(r, policy, rng.fork('noise'));
          expect(ep.tokens.length).toBeLessThanOrEqual(budget);
          if (ep.status === 'truncated') expect(ep.tokens.length).toBe(budget);
          expect(ep.modelTokens + ep.envTokens).toBe(ep.tokens.length);
          expect(ep.roles.filter((role) => role === ROLE_MODEL).length).toBe(ep.modelTokens);
          expect(ep.contexts.length).toBe(ep.tokens.length);
          expect(appended).toEqual(ep.tokens);
          expect(ep.score).toBe(ep.status === 'success' ? 1 : 0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
