/**
 * Wall time of the agent experiment (defaults, seed 7: 19,200 training trajectories + 2 x 400 eval
 * episodes), no I/O: `experiment.run` only, no record writing or printing. Floor: the same number of
 * episodes (20,000) sampled from the uniform policy with no learning, to show what the learner adds.
 */
import { sampleTasks } from '../src/envs/toolArithmetic.js';
import { agent } from '../src/experiments/agent/agent.js';
import { defaultConfig } from '../src/experiments/options.js';
import { createLogits } from '../src/policy/tabular.js';
import { Rng } from '../src/random.js';
import { rolloutEpisode } from '../src/train/episode.js';
import type { BenchRow } from './run.js';
import { timeMedian, timeMedianAsync } from './timing.js';

export async function run(): Promise<BenchRow[]> {
  // agent.run is async in signature only; time whole runs after two warm-ups (JIT), median of 7
  const ms = await timeMedianAsync(async () => agent.run(defaultConfig(agent), { seed: 7 }), 7, 2);

  const logits = createLogits();
  const tasks = sampleTasks(new Rng(7), 20_000);
  const floor = timeMedian(() => {
    const rng = new Rng(1);
    for (const t of tasks) rolloutEpisode(logits, t, rng);
  });
  return [
    {
      group: 'agent',
      name: 'run --experiment agent --seed 7 (defaults, no I/O)',
      ms,
      floor_ms: floor,
      ratio: ms / floor,
      note: 'floor: 20,000 uniform-policy episodes, no learning',
    },
  ];
}
