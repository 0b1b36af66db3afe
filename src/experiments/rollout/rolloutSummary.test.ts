import { beforeAll, describe, expect, it } from 'vitest';
import { formatRecord } from '../../report/summaries/index.js';
import { runExperiment } from '../options.js';
import { formatNumber } from '../text.js';
import type { JsonValue, RunRecord } from '../types.js';
import { rollout } from './rollout.js';
import { formatRollout } from './rolloutSummary.js';

type Row = Record<string, JsonValue>;

describe('rollout terminal summary', () => {
  let rec: RunRecord;
  let text: string;
  let lines: string[];
  beforeAll(async () => {
    rec = await runExperiment(
      rollout,
      { rows: 'sync,unbounded:none', workers: 16, updates: 20, eval_tasks: 50 },
      { seed: 3 },
    );
    text = formatRollout(rec);
    lines = text.split('\n');
  });

  it('is the registered formatter and states the setup from the config', async () => {
    expect(await formatRecord(rec)).toBe(text);
    expect(lines[0]).toMatch(/^rollout {2}seed 3 {2}\(/);
    expect(lines[1]).toBe(
      '16 workers, 16 groups x 8 samples per step, 20 steps per row (2,560 consumed trajectories); step 3 s, publication delay 0.5 s; eta=2, tis cap 2',
    );
    expect(lines[2]).toContain('median 100, sigma 1), 0.01 s/token');
  });

  it('prints one line per row in the schedule, lag, shift and learning tables', () => {
    for (const title of [
      'schedule (traj/s',
      'version lag of consumed groups',
      'distribution shift of consumed actions',
      'learning (steps / sim s to 0.9',
    ]) {
      const at = lines.findIndex((l) => l.startsWith(title));
      expect(at, title).toBeGreaterThan(0);
      const body = lines.slice(at + 3, at + 5); // title, header, rule, then the rows
      expect(body.map((l) => l.trim().split(/\s+/)[0])).toEqual(['sync', 'unbounded_none']);
    }
  });

  it('the lag buckets of each row sum to 1 and sync has all its groups at lag 0', () => {
    const at = lines.findIndex((l) => l.startsWith('version lag of consumed groups'));
    const rowOf = (run: string) =>
      (lines.slice(at + 3, at + 5).find((l) => l.trim().startsWith(run)) ?? '')
        .trim()
        .split(/\s+/)
        .slice(1)
        .map(Number);
    const sync = rowOf('sync');
    const unbounded = rowOf('unbounded_none');
    expect(sync).toHaveLength(7);
    expect(sync[0]).toBe(1);
    expect(unbounded.reduce((s, x) => s + x, 0)).toBeCloseTo(1, 2); // 3 digits per printed cell
    expect(unbounded[0]).toBeLessThan(1); // async work is consumed stale
  });

  it('ends with one headline per async row, computed from the rows against sync', () => {
    const rows = rec.tables.modes as Row[];
    const sync = rows.find((r) => r.run === 'sync') as Row;
    const unbounded = rows.find((r) => r.run === 'unbounded_none') as Row;
    const speedup = formatNumber((unbounded.throughput as number) / (sync.throughput as number), 3);
    expect(lines.at(-1)).toBe(
      `unbounded_none: ${speedup}x sync throughput, lag mean ${formatNumber(unbounded.lag_mean as number, 3)} (max ${unbounded.lag_max}), ratio p99 ${formatNumber(unbounded.ratio_p99 as number, 3)}, eval ${formatNumber(unbounded.eval_success as number, 3)} vs sync ${formatNumber(sync.eval_success as number, 3)}`,
    );
    expect(lines.filter((l) => l.includes('x sync throughput'))).toHaveLength(1);
  });

  it('shows the ratio by lag for the stalest row and every note', () => {
    expect(text).toContain('ratio by version lag, unbounded_none');
    for (const note of rec.notes ?? []) expect(text).toContain(`note: ${note}`);
  });

  it('leaves out the sections a record lacks (no sync row, no lag histogram)', () => {
    const rows = (rec.tables.modes as Row[]).filter((r) => r.run !== 'sync');
    const bare = formatRollout({ ...rec, tables: { modes: rows }, notes: [] });
    expect(bare).not.toContain('x sync throughput');
    expect(bare).not.toContain('version lag of consumed groups');
    expect(bare).not.toContain('ratio by version lag');
    expect(bare).toContain('schedule (traj/s');
  });
});
