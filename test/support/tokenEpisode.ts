/** A token episode for hand-made tests: a one-task success with no tokens, overridden by `partial`. */
import type { TokenEpisode } from '../../src/envs/tokenArithmetic.js';

export function episode(partial: Partial<TokenEpisode>): TokenEpisode {
  return {
    task: { kind: 'add', a: 1, b: 2, answer: 3 },
    tokens: [],
    contexts: [],
    roles: [],
    status: 'success',
    score: 1,
    errorKind: null,
    modelTokens: 0,
    envTokens: 0,
    thinkTokens: 0,
    verified: false,
    toolWasWrong: false,
    ...partial,
  };
}
