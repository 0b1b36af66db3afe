/**
 * Independent quality of a token-env trajectory: how often its action sequence still succeeds when
 * the tools slip more often. The same model tokens, on the same task, are re-played against fresh
 * tool noise at `toolErrorRate` (typically above the training rate), `replays` times; the fraction of
 * replays that submit the right answer is the trajectory's robustness. It is measured outside any
 * ranker: a trajectory that verified is repaired by `verify` whatever the tool returned, one that did
 * not succeeds only when the tool happened to be right.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import {
  ROLE_MODEL,
  runTokenEpisode,
  TOK_DIGIT0,
  type TokenEnvOptions,
  type TokenEpisode,
} from './tokenArithmetic.js';

/** The model tokens of an episode, in order (its action sequence, thinks included). */
export function actionSequence(episode: Pick<TokenEpisode, 'tokens' | 'roles'>): number[] {
  return episode.tokens.filter((_, i) => episode.roles[i] === ROLE_MODEL);
}

/**
 * Fraction of `replays` re-simulations of `episode`'s action sequence (same task, tool noise from
 * `noise`, env `options`) that succeed. Stage transitions depend only on the actions, so a replay
 * asks for exactly the recorded tokens; should it ask for more (the original was cut by the budget
 * and the replay's numbers are shorter), the replay emits an observation token: a failure.
 * Errors: BAD_ARGUMENT for `replays` not a positive integer.
 */
export function replaySuccessRate(
  episode: Pick<TokenEpisode, 'task' | 'tokens' | 'roles'>,
  noise: Rng,
  replays: number,
  options: Partial<TokenEnvOptions>,
): number {
  if (!Number.isInteger(replays) || replays < 1) {
    throw new LabError('BAD_ARGUMENT', `replays: expected a positive integer, got ${replays}`, {
      details: { field: 'replays', value: replays },
    });
  }
  const actions = actionSequence(episode);
  let wins = 0;
  for (let r = 0; r < replays; r++) {
    let next = 0;
    const choose = () => (next < actions.length ? (actions[next++] as number) : TOK_DIGIT0);
    if (runTokenEpisode(episode.task, choose, noise, options).status === 'success') wins++;
  }
  return wins / replays;
}
