import type { RunRecord } from '../../src/experiments/types.js';

/** A minimal per-seed RunRecord of a toy experiment with these metrics (findings and summary tests). */
export const seedRecord = (seed: number, metrics: RunRecord['metrics']): RunRecord => ({
  experiment: 'toy',
  seed,
  version: '0.1.0',
  config: {},
  metrics,
  curves: {},
  tables: {},
  timing: { wall_ms: 0 },
});
