/**
 * Synthetic records shaped like the agent experiment's (group-kind fractions, success, zero-advantage
 * fraction, a lag histogram table), built from closed-form curves so tests know every value.
 */
import { summarizeRuns } from '../../src/experiments/multiSeed.js';
import type { RunRecord } from '../../src/experiments/types.js';

/** all_wrong = 0.8 * 0.9^u, all_right = (1 - all_wrong) * u / (u + 5), mixed = the rest; success = 1 - all_wrong - 0.5 mixed. */
export function agentLikeRecord(seed: number, updates = 30, shift = 0): RunRecord {
  const update = Array.from({ length: updates }, (_, u) => u);
  const allWrong = update.map((u) => 0.8 * 0.9 ** (u + shift));
  const allRight = update.map((u, i) => (1 - (allWrong[i] as number)) * (u / (u + 5)));
  const mixed = update.map((_, i) => 1 - (allWrong[i] as number) - (allRight[i] as number));
  const success = update.map((_, i) => 1 - (allWrong[i] as number) - 0.5 * (mixed[i] as number));
  return {
    experiment: 'agent',
    seed,
    version: '0.1.0',
    config: { updates, group_size: 8, lr: 0.5 + shift / 10 },
    metrics: { eval_success_before: 0.02 + seed / 1000, eval_success_after: 0.9 + seed / 1000 },
    curves: {
      update,
      'group_kind.all_wrong': allWrong,
      'group_kind.mixed': mixed,
      'group_kind.all_right': allRight,
      'success.train': success,
      'zero_advantage.fraction': update.map((_, i) => (allWrong[i] as number) + (allRight[i] as number)),
    },
    tables: {
      lag_histogram: [
        { lag: 0, count: 50 + seed },
        { lag: 1, count: 30 },
        { lag: 2, count: 15 },
        { lag: 3, count: 5 },
      ],
    },
    notes: ['synthetic record for tests'],
    plots: {
      group_kind: { title: 'Group kinds over training', y: 'fraction of groups', kind: 'stacked-area' },
      success: { title: 'Training success', y: 'success rate (fraction of rollouts)' },
      lag: {
        title: 'Version lag',
        y: 'rollouts (count)',
        x: 'lag (versions)',
        kind: 'bar',
        table: 'lag_histogram',
        xField: 'lag',
        yFields: ['count'],
      },
    },
    timing: { wall_ms: 12 },
  };
}

export function agentLikeMultiSeed(seeds: number[]) {
  const runs = seeds.map((s) => agentLikeRecord(s, 30, s % 3));
  return summarizeRuns('agent', runs[0]?.config ?? {}, runs, 40);
}
