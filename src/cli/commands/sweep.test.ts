import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { SweepRecord } from '../../experiments/sweep.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';
import { runCommand } from './run.js';

describe('labs run --sweep', () => {
  it('writes the sweep record and the HTML dose-response page, and prints the tables', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-sweep-'));
    const p: Extract<ParsedCli, { command: 'run' }> = {
      command: 'run',
      experiment: 'truncation',
      seeds: [1, 2],
      multi: true,
      sets: ['updates=10', 'eval_tasks=20', 'tasks_per_update=4'],
      sweep: { key: 'budget', values: ['22', '30'] },
      json: false,
      out: dir,
      html: '',
      dump: null,
      progress: false,
      jobs: 1,
      jobsGiven: true,
      shard: null,
      shardCount: null,
      force: false,
      debug: false,
    };
    const out: string[] = [];
    const write = vi.spyOn(output, 'write').mockImplementation((s) => {
      out.push(String(s));
      return true;
    });
    try {
      expect(await runCommand(p)).toBe(0);
    } finally {
      write.mockRestore();
    }
    const rec = JSON.parse(await readFile(join(dir, 'record.json'), 'utf8')) as SweepRecord;
    expect(rec.sweep).toEqual({ key: 'budget', values: [22, 30] });
    expect(rec.points.map((pt) => pt.record.seeds)).toEqual([
      [1, 2],
      [1, 2],
    ]);
    // 4 metrics x 4 arms x 2 budgets
    expect(rec.dose_response).toHaveLength(32);
    const text = out.join('');
    expect(text).toContain('truncation  sweep budget = 22, 30  seeds 1..2');
    expect(text).toContain('verify_rate: paired difference from zero_score');
    const html = await readFile(join(dir, 'report.html'), 'utf8');
    expect(html).toContain('data-family="sweep.verify_rate"');
    expect(html).toContain('Dose-response');
  });
});
