/**
 * `reasoning-rl-labs/experiments`: run an experiment from code exactly as `labs run` does, and get
 * the same record. A subpath of its own, apart from the pure kernels of the package entry (`.`),
 * because experiments reach Node built-ins (the token lab's warm-start checkpoints use `node:fs` and
 * `node:crypto`): `import { grpoAdvantage } from 'reasoning-rl-labs'` stays free of them
 * (docs/architecture.md §2, the exports map).
 */

export { runSeeds } from './multiSeed.js';
export { runExperiment } from './options.js';
export { experimentNames, loadExperiment } from './registry.js';
export type * from './types.js';
