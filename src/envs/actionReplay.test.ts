import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { Rng } from '../random.js';
import { actionSequence, replaySuccessRate } from './actionReplay.js';
import {
  runTokenEpisode,
  TOK_ADD,
  TOK_READ,
  TOK_SUBMIT,
  TOK_THINK,
  TOK_VERIFY,
  type TokenTask,
} from './tokenArithmetic.js';

const task: TokenTask = { kind: 'add', a: 12, b: 30, answer: 42 };

function scripted(actions: number[], rate: number) {
  let i = 0;
  return runTokenEpisode(task, () => actions[i++] as number, new Rng(1).fork('noise'), {
    toolErrorRate: rate,
  });
}

describe('action replay', () => {
  it('the action sequence is the model tokens in order', () => {
    const ep = scripted([TOK_THINK, TOK_READ, TOK_ADD, TOK_SUBMIT], 0);
    expect(actionSequence(ep)).toEqual([TOK_THINK, TOK_READ, TOK_ADD, TOK_SUBMIT]);
  });

  it('a verified sequence succeeds in every replay even when the tool always slips', () => {
    const ep = scripted([TOK_READ, TOK_ADD, TOK_VERIFY, TOK_SUBMIT], 0);
    expect(replaySuccessRate(ep, new Rng(3), 50, { toolErrorRate: 1 })).toBe(1);
  });

  it('an unverified sequence succeeds about 1 − rate of the time (seeded, 2000 replays)', () => {
    const ep = scripted([TOK_READ, TOK_ADD, TOK_SUBMIT], 0);
    expect(ep.status).toBe('success');
    const rate = replaySuccessRate(ep, new Rng(5), 2000, { toolErrorRate: 0.6 });
    expect(rate).toBeGreaterThan(0.36);
    expect(rate).toBeLessThan(0.44);
    expect(replaySuccessRate(ep, new Rng(5), 2000, { toolErrorRate: 0.6 })).toBe(rate); // same seed, same number
    expect(replaySuccessRate(ep, new Rng(5), 10, { toolErrorRate: 1 })).toBe(0);
  });

  it('a replay that runs out of recorded actions fails (budget-cut original)', () => {
    const ep = scripted([TOK_READ, TOK_ADD, TOK_VERIFY, TOK_SUBMIT], 0);
    const cut = { ...ep, tokens: ep.tokens.slice(0, 2), roles: ep.roles.slice(0, 2) };
    expect(replaySuccessRate(cut, new Rng(1), 5, { toolErrorRate: 0 })).toBe(0);
  });

  it('replays must be a positive integer', () => {
    const ep = scripted([TOK_READ, TOK_ADD, TOK_SUBMIT], 0);
    expectLabError(() => replaySuccessRate(ep, new Rng(1), 0, {}), 'BAD_ARGUMENT', 'replays');
  });
});
