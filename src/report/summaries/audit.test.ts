import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../../experiments/types.js';
import { formatAudit } from './audit.js';

function record(extra: Record<string, unknown> = {}): RunRecord {
  return {
    experiment: 'audit',
    seed: 0,
    version: '0.1.0',
    config: { path: 'dump/', preset: 'verl', reward_columns: ['score'] },
    metrics: {
      files: 2,
      rows: 12,
      groups: 3,
      steps: 2,
      pass_value: 1,
      fail_value: 0,
      all_wrong_groups: 1,
      all_right_groups: 1,
      all_equal_other_groups: 0,
      mixed_groups: 1,
      singleton_groups: 0,
      zero_variance_group_fraction: 2 / 3,
      wasted_samples: 8,
      wasted_sample_fraction: 8 / 12,
      mixed_task_groups: 0,
      tasks: 2,
      tasks_always_solved: 1,
      tasks_never_solved: 0,
      tasks_sometimes_solved: 1,
      mean_reward: 0.5,
      correct_fraction: 0.5,
      length_unit: 'characters',
      ...extra,
    },
    curves: {},
    tables: {
      per_task: [
        {
          task: 'easy',
          groups: 1,
          samples: 4,
          zero_variance_groups: 1,
          zero_variance_fraction: 1,
          mean_reward: 1,
          status: 'always solved',
        },
      ],
      steps: [],
      group_sizes: [{ size: 4, groups: 3 }],
      reward_distribution: [
        { value: 0, samples: 6 },
        { value: 1, samples: 6 },
      ],
      length_by_correctness: [],
    },
    timing: { wall_ms: 10 },
  };
}

describe('formatAudit', () => {
  it('shows the group kinds, wasted samples and per-task table', () => {
    const text = formatAudit(record());
    expect(text).toMatch(/3\s+1\s+1\s+0\s+1\s+0\s+66\.7%/);
    expect(text).toContain('wasted samples (in zero-variance groups, advantage 0): 8 of 12 (66.7%)');
    expect(text).toContain('group sizes: 4x3');
    expect(text).toContain('rewards: mean 0.5, correct 50.0%; 0: 6, 1: 6');
  });

  it('prints token denominators and the advantage check only when the dump has them', () => {
    expect(formatAudit(record())).not.toContain('token denominators');
    const text = formatAudit(
      record({
        denominators: {
          'token-mean': 100,
          'seq-mean-token-sum': 12,
          'seq-mean-token-mean': 12,
          'seq-mean-token-sum-norm': 30,
        },
        action_tokens: 100,
        env_tokens: 40,
        zero_advantage_action_tokens: 60,
        zero_advantage_token_fraction: 0.6,
        logged_advantages_compared: 12,
        logged_advantages_differing: 3,
        logged_advantage_max_abs_diff: 0.25,
        logged_advantages_in_singleton_groups: 0,
        advantage_convention: 'trl',
      }),
    );
    expect(text).toMatch(/token-mean\s+100\s+action tokens/);
    expect(text).toMatch(/seq-mean-token-sum-norm\s+30/);
    expect(text).toContain('60 action tokens (60.0%) sit in zero-variance groups');
    expect(text).toContain('3 of 12 differ');
  });
});
