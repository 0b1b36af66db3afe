import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';
import { runCommand } from './run.js';

const base: Extract<ParsedCli, { command: 'run' }> = {
  command: 'run',
  experiment: 'agent',
  seeds: [7],
  multi: false,
  sets: [],
  sweep: null,
  json: true,
  out: null,
  html: null,
  dump: null,
  progress: false,
  jobs: 1,
  jobsGiven: true,
  debug: false,
};

describe('labs run output checks', () => {
  it('fails before running when --out is not a writable directory (a run was lost after it finished)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-run-out-'));
    const file = join(dir, 'not-a-dir');
    await writeFile(file, 'x');
    const write = vi.spyOn(output, 'write').mockImplementation(() => true);
    try {
      await expect(runCommand({ ...base, out: file })).rejects.toMatchObject({
        code: 'IO_ERROR',
        message: expect.stringMatching(/^--out .*not-a-dir: cannot write there .*; nothing was run$/),
      });
      await expect(
        runCommand({ ...base, out: join(dir, 'out'), html: join(file, 'r.html') }),
      ).rejects.toMatchObject({
        code: 'IO_ERROR',
        message: expect.stringContaining('--html'),
      });
      // The refused run left nothing behind: --out's directory was never created.
      expect(existsSync(join(dir, 'out'))).toBe(false);
    } finally {
      write.mockRestore();
    }
    expect(write).not.toHaveBeenCalled();
  });
});

describe('labs run with a warm-started neural policy', () => {
  it('says in the summary whether the checkpoint was pretrained or reused, and writes identical records', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-run-sft-'));
    const sets = [
      'policy=neural',
      'init=sft',
      'd_model=8',
      'updates=2',
      'tasks_per_update=2',
      'group_size=2',
      'eval_tasks=30',
      'sft_steps=4',
      'sft_batch=4',
      `sft_cache_dir=${join(dir, 'cache')}`,
    ];
    const printed: string[] = [];
    const write = vi.spyOn(output, 'write').mockImplementation((s: string | Uint8Array) => {
      printed.push(String(s));
      return true;
    });
    try {
      for (const n of [1, 2]) {
        await runCommand({ ...base, experiment: 'mask', json: false, sets, out: join(dir, `out${n}`) });
      }
    } finally {
      write.mockRestore();
    }
    expect(printed).toHaveLength(2);
    expect(printed[0]).toContain('checkpoint: pretrained (4 steps x 4 demonstrations) and saved to');
    expect(printed[0]).toContain('held-out success by level');
    expect(printed[1]).toMatch(
      /checkpoint: reused the cached .*sft-[0-9a-f]{16}\.ckpt \(pretraining skipped\)/,
    );
    const record = async (n: number) => {
      const r = JSON.parse(await readFile(join(dir, `out${n}`, 'record.json'), 'utf8'));
      r.timing = null;
      return r;
    };
    expect(await record(2)).toEqual(await record(1));
  }, 120_000);
});
