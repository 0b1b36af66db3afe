/**
 * Token lab: wall time of each token-level experiment's default single-seed run (seed 7, no I/O),
 * and of one arm's parts (rollout of a 128-trajectory batch, one PPO epoch on it). The default runs
 * must stay around a second so `--seeds 1..10` stays well under a minute.
 */
import { aggregation } from '../src/experiments/aggregation/aggregation.js';
import { mask } from '../src/experiments/mask/mask.js';
import { defaultConfig } from '../src/experiments/options.js';
import { runTokenArm, TOKEN_LAB_OPTIONS } from '../src/experiments/tokenLab.js';
import { truncation } from '../src/experiments/truncation/truncation.js';
import type { Experiment } from '../src/experiments/types.js';
import type { BenchRow } from './run.js';
import { timeMedian } from './timing.js';

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const e of [mask, aggregation, truncation] as Experiment[]) {
    const config = defaultConfig(e);
    const ms = timeMedian(() => void e.run(config, { seed: 7 }), 3, 1);
    rows.push({ group: 'tokenlab', name: `${e.name} --seed 7 (defaults)`, ms });
  }
  const spec = {
    arm: 'a',
    maskRule: 'model_tokens',
    lossAggMode: 'token-mean',
    truncation: 'zero_score',
  } as const;
  const one = TOKEN_LAB_OPTIONS.parse({ updates: 1, eval_tasks: 1 });
  const ms = timeMedian(() => void runTokenArm(spec, one, 7), 15, 3);
  rows.push({
    group: 'tokenlab',
    name: 'one update: rollout 16x8 + 2 PPO epochs (uniform-ish policy)',
    ms,
    note: 'includes a 1-task evaluation',
  });
  return rows;
}
