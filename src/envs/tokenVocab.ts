/**
 * The token vocabulary of the token-level arithmetic envs ({@link VOCAB}, 21 tokens) and the roles a
 * transcript token can have. Its own file so that the episode driver and the envs built on it can
 * share it without importing one another.
 *
 * Ids 0..5 are the tool actions `read`, `add`, `sub`, `verify`, `submit` and the no-op `think`;
 * ids 6..20 are observation tokens only the environment writes: digits `0`..`9` and `,` `;` `=`
 * `ok` `fix`.
 */

export const ACTION_TOKEN_NAMES = ['read', 'add', 'sub', 'verify', 'submit', 'think'] as const;
export const OBSERVATION_TOKEN_NAMES = [
  '0',
  '1',
  '2',
  '3',
  '4',
  '5',
  '6',
  '7',
  '8',
  '9',
  ',',
  ';',
  '=',
  'ok',
  'fix',
] as const;
export const VOCAB: readonly string[] = [...ACTION_TOKEN_NAMES, ...OBSERVATION_TOKEN_NAMES];
export const VOCAB_SIZE = VOCAB.length;
/** Action tokens are ids 0..5; every id >= this is an observation token. */
export const FIRST_OBSERVATION_TOKEN = ACTION_TOKEN_NAMES.length;

export const TOK_READ = 0;
export const TOK_ADD = 1;
export const TOK_SUB = 2;
export const TOK_VERIFY = 3;
export const TOK_SUBMIT = 4;
export const TOK_THINK = 5;
export const TOK_DIGIT0 = 6;
export const TOK_COMMA = 16;
export const TOK_END = 17;
export const TOK_EQUALS = 18;
export const TOK_OK = 19;
export const TOK_FIX = 20;

/** Token roles as verl's agent loop distinguishes them; padding exists only in packed batches. */
export const ROLE_PAD = 0;
export const ROLE_MODEL = 1;
export const ROLE_ENV = 2;
export type TokenRole = typeof ROLE_PAD | typeof ROLE_MODEL | typeof ROLE_ENV;

/** True for tokens only the environment writes (digits, separators, check results): ids ≥ the first observation token. */
export function isObservationToken(token: number): boolean {
  return token >= FIRST_OBSERVATION_TOKEN;
}

/** The decimal digits of a non-negative integer as observation tokens. */
export function digitTokens(n: number): number[] {
  return String(n)
    .split('')
    .map((c) => TOK_DIGIT0 + Number(c));
}
