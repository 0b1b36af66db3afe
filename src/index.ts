/**
 * reasoning-rl-labs public API: the verl-exact kernels and the lab's building blocks.
 * (Each kernel family adds its exports below.)
 */
export * from './core/batch.js';
export * from './core/errors.js';
export * from './core/stats.js';
export { Rng } from './random.js';
export type * from './experiments/types.js';
export * from './core/aggLoss.js';
export * from './core/policyLoss.js';
