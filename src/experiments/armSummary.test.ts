import { describe, expect, it } from 'vitest';
import { formatAggregation } from './aggregation/aggregationSummary.js';
import { formatArmsRecord, rowsTable } from './armSummary.js';
import { formatMask } from './mask/maskSummary.js';
import { formatTruncation } from './truncation/truncationSummary.js';
import type { RunRecord } from './types.js';

function record(
  experiment: string,
  arms: RunRecord['tables']['arms'],
  extra: RunRecord['tables'] = {},
): RunRecord {
  return {
    experiment,
    seed: 7,
    version: '0.1.0',
    config: {
      updates: 3,
      tasks_per_update: 2,
      group_size: 4,
      ppo_epochs: 2,
      optimizer: 'adam',
      lr: 0.05,
      clip_ratio: 0.2,
      std: 'unbiased',
      budget: 25,
      tool_error_rate: 0.3,
      loss_agg_mode: 'token-mean',
      overlong_buffer: 5,
      unbounded_budget: 400,
    },
    metrics: {},
    curves: {},
    tables: { arms: arms ?? [], ...extra },
    notes: ['CONCLUSION 0.123 vs 0.456', 'a caveat'],
    timing: { wall_ms: 12 },
  };
}

describe('token-lab terminal summaries', () => {
  it('rowsTable prints the chosen columns in order, missing cells as -', () => {
    const text = rowsTable([{ arm: 'x', a: 1.5 }, { arm: 'y' }], ['arm', 'a']);
    const lines = text.split('\n');
    expect(lines[0]).toMatch(/^arm\s+a$/);
    expect(lines[2]).toMatch(/^x\s+1\.5$/);
    expect(lines[3]).toMatch(/^y\s+-$/);
  });

  it('puts the setup first, the arms table, the caveats, and the conclusion last', () => {
    const text = formatArmsRecord(record('mask', [{ arm: 'correct', eval_success: 0.9 }]), 'TITLE', [
      'arm',
      'eval_success',
    ]);
    const lines = text.split('\n');
    expect(lines[0]).toBe('mask  seed 7  (12 ms)');
    expect(lines[1]).toBe('TITLE');
    expect(lines[2]).toContain('3 updates x 2 tasks x 4 samples');
    expect(text).toContain('note: a caveat');
    expect(lines.at(-1)).toBe('CONCLUSION 0.123 vs 0.456');
    expect(text.indexOf('correct')).toBeLessThan(text.indexOf('note: a caveat'));
  });

  it('each experiment shows its key columns', () => {
    expect(formatMask(record('mask', [{ arm: 'flipped', observation_token_action_rate: 0.04 }]))).toMatch(
      /observation_token_action_rate[\s\S]*flipped\s+[-\s]*0\.04/,
    );
    expect(
      formatAggregation(record('aggregation', [{ arm: 'token-mean', failed_mean_length: 7.3 }])),
    ).toContain('failed_mean_length');
    const t = formatTruncation(record('truncation', [{ arm: 'drop', eval_success_unbounded: 0.92 }]));
    expect(t).toContain('eval_success_unbounded');
    expect(t).toContain('budget 25');
  });
});
