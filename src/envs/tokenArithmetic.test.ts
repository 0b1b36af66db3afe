import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Rng } from '../random.js';
import {
  contextCount,
  contextIndex,
  describeContext,
  ROLE_ENV,
  ROLE_MODEL,
  runTokenEpisode,
  sampleTokenTask,
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
  type TokenTask,
  VOCAB,
  VOCAB_SIZE,
} from './tokenArithmetic.js';

/** A scripted policy: emits the given tokens in order, ignoring the context. */
function script(tokens: number[]) {
  let i = 0;
  return () => {
    const t = tokens[i++];
    if (t === undefined) throw new Error('script exhausted');
    return t;
  };
}

const d = (c: string) => VOCAB.indexOf(c);
const task47: TokenTask = { kind: 'add', a: 47, b: 5, answer: 52 };

describe('token vocabulary and contexts', () => {
  it('has 6 action tokens and 15 observation tokens', () => {
    expect(VOCAB_SIZE).toBe(21);
    expect(VOCAB.slice(0, 6)).toEqual(['read', 'add', 'sub', 'verify', 'submit', 'think']);
    expect(VOCAB[TOK_COMMA]).toBe(',');
    expect(VOCAB[TOK_END]).toBe(';');
    expect(VOCAB[TOK_FIX]).toBe('fix');
  });

  it('maps every (kind, stage, verified, bucket) to a distinct context and back', () => {
    const seen = new Set<number>();
    for (const kind of ['add', 'sub'] as const)
      for (let stage = 0; stage < 3; stage++)
        for (const verified of [false, true])
          for (let b = 0; b < 3; b++) {
            const c = contextIndex(kind, stage, verified, b, 3);
            seen.add(c);
            const name = describeContext(c, 3);
            expect(name.startsWith(`${kind}/${['fresh', 'read', 'computed'][stage]}/`)).toBe(true);
            expect(name.includes(verified ? '/verified/' : '/unverified/')).toBe(true);
          }
    expect(seen.size).toBe(contextCount(3));
    expect(Math.max(...seen)).toBe(contextCount(3) - 1);
    // think counts beyond the last bucket share it
    expect(contextIndex('sub', 1, false, 9, 3)).toBe(contextIndex('sub', 1, false, 2, 3));
  });
});

describe('runTokenEpisode: transcript, roles and contexts', () => {
  it('read -> add -> submit writes operands and result as environment tokens', () => {
    const ep = runTokenEpisode(task47, script([TOK_READ, TOK_ADD, TOK_SUBMIT]), new Rng(1), {
      toolErrorRate: 0,
    });
    // read | 4 7 , 5 ; | add | 5 2 ; | submit
    expect(ep.tokens).toEqual([
      TOK_READ,
      d('4'),
      d('7'),
      TOK_COMMA,
      d('5'),
      TOK_END,
      TOK_ADD,
      d('5'),
      d('2'),
      TOK_END,
      TOK_SUBMIT,
    ]);
    const M = ROLE_MODEL;
    const E = ROLE_ENV;
    expect(ep.roles).toEqual([M, E, E, E, E, E, M, E, E, E, M]);
    expect(ep.status).toBe('success');
    expect(ep.score).toBe(1);
    expect(ep.modelTokens).toBe(3);
    expect(ep.envTokens).toBe(8);
    // Environment tokens carry the context of the next decision, not of the action that caused them.
    const fresh = contextIndex('add', 0, false, 0, 3);
    const read = contextIndex('add', 1, false, 0, 3);
    const computed = contextIndex('add', 2, false, 0, 3);
    expect(ep.contexts).toEqual([
      fresh,
      read,
      read,
      read,
      read,
      read,
      read,
      computed,
      computed,
      computed,
      computed,
    ]);
  });

  it('a noisy tool gives a wrong number; verify writes the check and repairs it', () => {
    const noisy = { toolErrorRate: 1 };
    const plain = runTokenEpisode(task47, script([TOK_READ, TOK_ADD, TOK_SUBMIT]), new Rng(3), noisy);
    expect(plain.status).toBe('wrong_answer');
    expect(plain.toolWasWrong).toBe(true);
    const checked = runTokenEpisode(
      task47,
      script([TOK_READ, TOK_ADD, TOK_VERIFY, TOK_SUBMIT]),
      new Rng(3),
      noisy,
    );
    expect(checked.status).toBe('success');
    expect(checked.verified).toBe(true);
    // verify output: 4 7 , 5 = <held> fix 5 2 ;  — starts right after the verify token
    const v = checked.tokens.indexOf(TOK_VERIFY);
    const out = checked.tokens.slice(v + 1, -1); // up to the submit token
    expect(out.slice(0, 5)).toEqual([d('4'), d('7'), TOK_COMMA, d('5'), TOK_EQUALS]);
    expect(out.slice(-4)).toEqual([TOK_FIX, d('5'), d('2'), TOK_END]);
    expect(checked.roles.slice(v + 1, -1).every((r) => r === ROLE_ENV)).toBe(true);
    // a correct result gets `ok`
    const ok = runTokenEpisode(task47, script([TOK_READ, TOK_ADD, TOK_VERIFY, TOK_SUBMIT]), new Rng(3), {
      toolErrorRate: 0,
    });
    const okOut = ok.tokens.slice(ok.tokens.indexOf(TOK_VERIFY) + 1, -1);
    expect(okOut.slice(-2)).toEqual([TOK_OK, TOK_END]);
    expect(ok.status).toBe('success');
  });

  it('the wrong tool is not a protocol error: it submits a wrong number', () => {
    const ep = runTokenEpisode(task47, script([TOK_READ, TOK_SUB, TOK_SUBMIT]), new Rng(1), {
      toolErrorRate: 0,
    });
    expect(ep.status).toBe('wrong_answer');
    expect(ep.tokens.slice(7, 9)).toEqual([d('4'), d('2')]); // 47 - 5 = 42
  });

  it('think is a model token with no environment output and moves the think bucket', () => {
    const ep = runTokenEpisode(
      task47,
      script([TOK_THINK, TOK_THINK, TOK_THINK, TOK_READ, TOK_SUB]),
      new Rng(1),
      {
        toolErrorRate: 0,
        budget: 8,
      },
    );
    expect(ep.roles.slice(0, 4)).toEqual([ROLE_MODEL, ROLE_MODEL, ROLE_MODEL, ROLE_MODEL]);
    expect(ep.thinkTokens).toBe(3);
    expect(ep.contexts.slice(0, 4)).toEqual([0, 1, 2, 2].map((t) => contextIndex('add', 0, false, t, 3)));
  });

  it('protocol errors end the episode and are named', () => {
    const obs = runTokenEpisode(task47, script([TOK_READ, d('7')]), new Rng(1));
    expect(obs.status).toBe('protocol_error');
    expect(obs.errorKind).toBe('observation_token');
    expect(obs.roles.at(-1)).toBe(ROLE_MODEL);
    expect(runTokenEpisode(task47, script([TOK_SUBMIT]), new Rng(1)).errorKind).toBe('submit_at_fresh');
    expect(runTokenEpisode(task47, script([TOK_READ, TOK_READ]), new Rng(1)).errorKind).toBe('read_at_read');
    expect(runTokenEpisode(task47, script([TOK_READ, TOK_VERIFY]), new Rng(1)).errorKind).toBe(
      'verify_at_read',
    );
    expect(
      runTokenEpisode(task47, script([TOK_READ, TOK_ADD, TOK_VERIFY, TOK_VERIFY]), new Rng(1)).errorKind,
    ).toBe('verify_twice');
  });
});

describe('runTokenEpisode: budget and truncation', () => {
  it('a budget that cuts the environment output marks the episode truncated at exactly the budget', () => {
    // read + "4 7 , 5 ;" needs 6 tokens; budget 4 cuts after "4 7 ,"
    const ep = runTokenEpisode(task47, script([TOK_READ]), new Rng(1), { budget: 4 });
    expect(ep.status).toBe('truncated');
    expect(ep.score).toBe(0);
    expect(ep.tokens).toEqual([TOK_READ, d('4'), d('7'), TOK_COMMA]);
  });

  it('submitting on the last position is not truncation; needing one more token is', () => {
    const path = [TOK_READ, TOK_ADD, TOK_SUBMIT]; // 11 tokens in total
    const fits = runTokenEpisode(task47, script(path), new Rng(1), { budget: 11, toolErrorRate: 0 });
    expect(fits.status).toBe('success');
    const cut = runTokenEpisode(task47, script(path), new Rng(1), { budget: 10, toolErrorRate: 0 });
    expect(cut.status).toBe('truncated');
    expect(cut.tokens.length).toBe(10);
  });

  it('property: any policy stays within the budget, roles count matches, env tokens share the next decision context', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 0, max: 1e6 }), (budget, seed) => {
        const rng = new Rng(seed);
        const task = sampleTokenTask(rng.fork('task'));
        const pick = rng.fork('policy');
        const ep = runTokenEpisode(task, () => pick.int(0, VOCAB_SIZE - 1), rng.fork('noise'), {
          budget,
          toolErrorRate: 0.5,
        });
        expect(ep.tokens.length).toBeLessThanOrEqual(budget);
        expect(ep.modelTokens + ep.envTokens).toBe(ep.tokens.length);
        expect(ep.roles.filter((r) => r === ROLE_MODEL).length).toBe(ep.modelTokens);
        if (ep.status === 'truncated') expect(ep.tokens.length).toBe(budget);
        for (let i = 1; i < ep.tokens.length; i++) {
          // an env token shares its context with the next token (env or the next model decision)
          if (ep.roles[i - 1] === ROLE_ENV) expect(ep.contexts[i]).toBe(ep.contexts[i - 1]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('is deterministic for a seed', () => {
    const go = (seed: number) => {
      const rng = new Rng(seed);
      const pick = rng.fork('policy');
      const noise = rng.fork('noise');
      return Array.from({ length: 20 }, () =>
        runTokenEpisode(sampleTokenTask(rng), () => pick.int(0, 5), noise, { toolErrorRate: 0.4 }),
      );
    };
    expect(go(11)).toEqual(go(11));
    expect(go(11)).not.toEqual(go(12));
  });

  it('rejects bad options with named errors', () => {
    expect(() => runTokenEpisode(task47, script([0]), new Rng(1), { budget: 0 })).toThrow(/budget/);
    expect(() => runTokenEpisode(task47, script([0]), new Rng(1), { toolErrorRate: 2 })).toThrow(
      /toolErrorRate/,
    );
    expect(() => runTokenEpisode(task47, () => 99, new Rng(1))).toThrow(/token 99/);
  });
});

describe('sampleTokenTask', () => {
  it('draws add/sub tasks with a >= b for sub and the right answer', () => {
    const rng = new Rng(5);
    let subs = 0;
    for (let i = 0; i < 500; i++) {
      const t = sampleTokenTask(rng, 99);
      expect(t.a).toBeGreaterThanOrEqual(0);
      expect(t.a).toBeLessThanOrEqual(99);
      if (t.kind === 'sub') {
        subs++;
        expect(t.a).toBeGreaterThanOrEqual(t.b);
        expect(t.answer).toBe(t.a - t.b);
      } else expect(t.answer).toBe(t.a + t.b);
    }
    expect(subs).toBeGreaterThan(200);
    expect(subs).toBeLessThan(300);
  });
});
