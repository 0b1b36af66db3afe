import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFileBytes } from '../../../test/support/tfeventsWriter.js';
import { csvMetricName } from './csv.js';
import { readJsonlLog } from './jsonl.js';
import { readMetricsLog } from './read.js';

const pairs = (rows: { step: number; metric: string; value: number }[]) =>
  rows.map((r) => `${r.step} ${r.metric}=${r.value}`).sort();

describe('readJsonlLog', () => {
  it('reads verl file-logger lines {step, data}', () => {
    const text =
      '{"step": 1, "data": {"critic/score/mean": 0.5, "val/generations": "x"}}\n{"step": 2, "data": {"critic/score/mean": 0.75}}\n';
    const r = readJsonlLog(text, 'v.jsonl');
    expect(r.format).toBe('verl-file-jsonl');
    expect(pairs(r.rows)).toEqual(['1 critic/score/mean=0.5', '2 critic/score/mean=0.75']);
    expect(r.notes).toEqual(['v.jsonl: 1 non-scalar value(s) (not finite numbers) skipped']);
  });
  it('reads prime-rl FileMonitor rows {step, time, ...} with wall time', () => {
    const r = readJsonlLog('{"step": 3, "time": 17.5, "solve_all": 0.25}\n', 'm.jsonl');
    expect(r.format).toBe('prime-rl-jsonl');
    expect(r.rows).toEqual([{ step: 3, metric: 'solve_all', value: 0.25, wallTime: 17.5 }]);
  });
  it('reads W&B history rows by _step and skips the internal keys', () => {
    const r = readJsonlLog('{"_step": 0, "_runtime": 3, "_timestamp": 9, "reward": 1}\n', 'h.jsonl');
    expect(r.format).toBe('wandb-history-jsonl');
    expect(r.rows).toEqual([{ step: 0, metric: 'reward', value: 1, wallTime: 9 }]);
  });
  it('notes an incomplete last line, and names file:line of a bad line in the middle', () => {
    const r = readJsonlLog('{"step": 1, "time": 1, "a": 1}\n{"step": 2, "ti', 'p.jsonl');
    expect(r.rows.length).toBe(1);
    expect(r.notes[0]).toMatch(/^p\.jsonl:2: incomplete last line/);
    expect(() => readJsonlLog('{"step": 1, "time": 1}\n{oops\n{"step": 2, "time": 2}\n', 'p.jsonl')).toThrow(
      /^p\.jsonl:2: not a JSON object/,
    );
  });
});

describe('readMetricsLog', () => {
  it('finds the logs of a directory and detects each format; W&B CSV with panel columns', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-metrics-'));
    await mkdir(join(dir, 'tb', 'run1'), { recursive: true });
    await writeFile(
      join(dir, 'tb', 'run1', 'events.out.tfevents.1.host'),
      eventFileBytes([{ step: 1, tag: 'reward', value: 0.5 }]),
    );
    await writeFile(
      join(dir, 'panel.csv'),
      'Step,"my run, v2 - reward_std","my run, v2 - reward_std__MIN","my run, v2 - reward_std__MAX"\n1,0.25,0.2,0.3\n2,,,\n',
    );
    await writeFile(join(dir, 'notes.txt'), 'ignored');
    const log = await readMetricsLog(dir);
    expect(log.formats.sort()).toEqual(['tensorboard', 'wandb-csv']);
    expect(pairs(log.rows)).toEqual(['1 reward=0.5', '1 reward_std=0.25']);
    expect(csvMetricName('run - completions/clipped_ratio')).toBe('completions/clipped_ratio');
    expect(csvMetricName('run - x__MAX')).toBeNull();
  });
  it('refuses a file of unknown format and a missing path', async () => {
    await expect(readMetricsLog('/nonexistent/x.jsonl')).rejects.toThrow(
      /--metrics \/nonexistent\/x\.jsonl: no such file/,
    );
    const dir = await mkdtemp(join(tmpdir(), 'labs-metrics-'));
    await writeFile(join(dir, 'x.txt'), '');
    await expect(readMetricsLog(join(dir, 'x.txt'))).rejects.toThrow(/unknown log format/);
  });
});
