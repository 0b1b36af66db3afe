import { describe, expect, it } from 'vitest';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { rerunCommand } from './rerun.js';

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
});
