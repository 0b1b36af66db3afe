/**
 * The worker file of a kept pool library (tinypool, piscina) for bench/pool/libraries.ts: one task
 * runs one seed of experiment `name` with `config` (the experiment loaded once per thread) and
 * returns its record, as seedWorker.ts does for the project's pool.
 */
import { loadExperiment } from '../../src/experiments/registry.js';
import type { Experiment, JsonValue, RunRecord } from '../../src/experiments/types.js';

const loaded = new Map<string, Promise<Experiment>>();

export default async function runSeed(task: {
  name: string;
  config: Record<string, JsonValue>;
  seed: number;
}): Promise<RunRecord> {
  let experiment = loaded.get(task.name);
  if (!experiment) {
    experiment = loadExperiment(task.name) as Promise<Experiment>;
    loaded.set(task.name, experiment);
  }
  return (await experiment).run(task.config, { seed: task.seed });
}
