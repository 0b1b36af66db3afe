/**
 * The episode the token-level arms train on and measure. In its own file because the measures
 * (tokenMeasures.ts) read the loss-weight buckets (lossWeights.ts) and the truncation policy
 * (truncationPolicy.ts), which both take these episodes: declared here, none of the three imports
 * another in a circle.
 */
import type { TokenEpisode } from '../envs/tokenArithmetic.js';

/**
 * What the arm's loop and its measures read of an episode: a TokenEpisode (tabular policy) or a
 * PromptedEpisode (neural policy, which also carries its prompt).
 */
export type ArmEpisode = Omit<TokenEpisode, 'task'> & { prompt?: readonly number[]; level?: number };
