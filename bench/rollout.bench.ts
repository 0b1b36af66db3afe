/**
 * Wall time of the rollout experiment (defaults, seed 7: 9 rows x 150 steps x 128 consumed
 * trajectories, plus the generated-but-unconsumed ones and 9 x 400 eval episodes), no I/O. Second
 * row: the event simulation alone for the unbounded schedule with constant-time hooks, to show that
 * the schedule is cheap and the time goes to sampling and learning. Floor for both: the agent
 * experiment's unit of work, 19,200 uniform-policy episodes.
 */
import { sampleTasks } from '../src/envs/toolArithmetic.js';
import { defaultConfig } from '../src/experiments/options.js';
import { rollout } from '../src/experiments/rollout/rollout.js';
import { createLogits } from '../src/policy/tabular.js';
import { Rng } from '../src/random.js';
import { rolloutEpisode } from '../src/train/episode.js';
import { simulateRollout } from '../src/train/eventSim.js';
import type { BenchRow } from './run.js';
import { timeMedian, timeMedianAsync } from './timing.js';

export async function run(): Promise<BenchRow[]> {
  const ms = await timeMedianAsync(async () => rollout.run(defaultConfig(rollout), { seed: 7 }), 5, 2);

  const sim = timeMedian(() => {
    const rng = new Rng(3);
    simulateRollout(
      {
        mode: 'unbounded',
        workers: 48,
        groupsPerBatch: 16,
        updates: 150,
        trainStepTime: 3,
        publishDelay: 0.5,
      },
      { generate: () => 1 + 20 * rng.next(), train: () => {} },
    );
  });

  const logits = createLogits();
  const tasks = sampleTasks(new Rng(7), 19_200);
  const floor = timeMedian(() => {
    const rng = new Rng(1);
    for (const t of tasks) rolloutEpisode(logits, t, rng);
  });
  return [
    {
      group: 'rollout',
      name: 'run --experiment rollout --seed 7 (defaults, 9 rows, no I/O)',
      ms,
      floor_ms: floor,
      ratio: ms / floor,
      note: 'floor: 19,200 uniform-policy episodes (one agent run of sampling)',
    },
    {
      group: 'rollout',
      name: 'event simulation only (unbounded, W=48, 150 steps, trivial hooks)',
      ms: sim,
      floor_ms: floor,
      ratio: sim / floor,
      note: 'schedule cost without sampling or learning',
    },
  ];
}
