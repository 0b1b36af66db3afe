import { describe, expect, it } from 'vitest';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { auditRerunCommand, rerunCommand } from './rerun.js';

const rec = (config: RunRecord['config'], seed = 7): RunRecord => ({
  experiment: 'agent',
  seed,
  version: '0.1.0',
  config,
  metrics: {},
  curves: {},
  tables: {},
  timing: { wall_ms: 1 },
});

describe('rerunCommand', () => {
  it('sets only what differs from the defaults, quoting values the shell would split', () => {
    const r = rec({ lr: 0.5, std: 'population', rows: 'sync,unbounded:is', note: "a b's" });
    expect(rerunCommand(r, { lr: 2, std: 'population', rows: 'sync' })).toBe(
      `labs run --experiment agent --seed 7 --set lr=0.5 --set rows=sync,unbounded:is --set note='a b'\\''s'`,
    );
  });

  it('sets a key the defaults do not know, and names the seeds of a --seeds record', () => {
    expect(rerunCommand(rec({ lr: 2, old_key: 1 }), { lr: 2 })).toBe(
      'labs run --experiment agent --seed 7 --set old_key=1',
    );
    const multi: MultiSeedRecord = {
      experiment: 'agent',
      seeds: [1, 5, 9],
      version: '0.1.0',
      config: { lr: 2 },
      runs: [],
      summary: {},
      timing: { wall_ms: 1 },
    };
    expect(rerunCommand(multi, { lr: 2 })).toBe('labs run --experiment agent --seeds 1,5,9');
  });

  it('reruns an audit record with labs audit: the path, the preset, remapped columns and non-default flags', () => {
    const audit = (config: RunRecord['config']): RunRecord => ({ ...rec(config, 0), experiment: 'audit' });
    expect(
      auditRerunCommand(
        audit({ path: 'dumps/x.jsonl', preset: 'generic', columns: { step: 'step', reward: 'reward' } }),
      ),
    ).toBe('labs audit dumps/x.jsonl');
    expect(
      auditRerunCommand(
        audit({
          path: 'my dumps',
          preset: 'trl',
          columns: { step: 'step', group: 'prompt', reward: 'acc' },
          skip_bad_rows: true,
          pass_value: 0.5,
          fail_value: 0,
          grouping: 'contiguous blocks of 8 rows per file (given with --group-size)',
          group_size: 8,
          reward_weights: [1, 0.5],
          scale_rewards: 'none',
          zero_std_tol: 0.01,
          rank_columns: { quality: 'q', independent: 'i' },
        }),
      ),
    ).toBe(
      "labs audit 'my dumps' --preset trl --col-reward acc --skip-bad-rows --pass-value 0.5 --group-size 8 --reward-weights 1,0.5 --scale-rewards none --zero-std-tol 0.01 --quality q --independent i",
    );
    // An inferred group size is not a flag; a config without a path gives no command.
    expect(
      auditRerunCommand(
        audit({
          path: 'd',
          preset: 'trl',
          group_size: 8,
          grouping: 'contiguous blocks of 8 rows (inferred ...)',
        }),
      ),
    ).toBe('labs audit d --preset trl');
    expect(auditRerunCommand(audit({ preset: 'verl' }))).toBeNull();
  });
});
