/**
 * Every experiment, by name. Each entry is loaded lazily so `labs --help` and `labs list` stay fast
 * even when an experiment pulls in heavy modules.
 */
import { LabError } from '../core/errors.js';
import type { Experiment } from './types.js';

const loaders: Record<string, () => Promise<Experiment>> = {
  // one line per experiment: name -> lazy import
  agent: async () => (await import('./agent/agent.js')).agent,
  rollout: async () => (await import('./rollout/rollout.js')).rollout,
  mask: async () => (await import('./mask/mask.js')).mask,
  aggregation: async () => (await import('./aggregation/aggregation.js')).aggregation,
  truncation: async () => (await import('./truncation/truncation.js')).truncation,
  advantage: async () => (await import('./advantage/advantage.js')).advantage,
  saturation: async () => (await import('./saturation/saturation.js')).saturation,
  clip: async () => (await import('./clip/clip.js')).clip,
  filter: async () => (await import('./filter/filter.js')).filter,
  explore: async () => (await import('./explore/explore.js')).explore,
  mismatch: async () => (await import('./mismatch/mismatch.js')).mismatch,
};

export function experimentNames(): string[] {
  return Object.keys(loaders).sort();
}

export async function loadExperiment(name: string): Promise<Experiment> {
  const load = loaders[name];
  if (!load) {
    const known = experimentNames();
    throw new LabError(
      'UNKNOWN_EXPERIMENT',
      `unknown experiment '${name}'; known: ${known.length ? known.join(', ') : '(none yet)'}`,
      { details: { field: '--experiment', value: name } },
    );
  }
  return load();
}
