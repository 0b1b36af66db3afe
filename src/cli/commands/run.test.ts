import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { lockFileOf } from '../outputLock.js';
import { type ParsedCli, parseCli } from '../parse.js';
import { output } from '../stdout.js';
import { reportCommand } from './report.js';
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
  shard: null,
  shardCount: null,
  force: false,
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
        code: 'BAD_CLI',
        message: expect.stringMatching(/^--out .*not-a-dir: exists and is not a directory; nothing was run$/),
      });
      await expect(
        runCommand({ ...base, out: join(dir, 'out'), html: join(file, 'r.html') }),
      ).rejects.toMatchObject({
        code: 'BAD_CLI',
        message: expect.stringContaining('--html'),
      });
      // The refused run left nothing behind: --out's directory was never created.
      expect(existsSync(join(dir, 'out'))).toBe(false);
    } finally {
      write.mockRestore();
    }
    expect(write).not.toHaveBeenCalled();
  });

  it('releases the --out lock when the command ends (a second command in the same process is not locked out)', async () => {
    const out = join(await mkdtemp(join(tmpdir(), 'labs-run-lock-')), 'out');
    const write = vi.spyOn(output, 'write').mockImplementation(() => true);
    const small = { ...base, experiment: 'advantage', out };
    try {
      expect(await runCommand(small)).toBe(0);
      expect(existsSync(lockFileOf(out))).toBe(false);
      await expect(runCommand(small)).rejects.toMatchObject({ code: 'BAD_CLI' }); // the record stays
      expect(await runCommand({ ...small, force: true })).toBe(0);
    } finally {
      write.mockRestore();
    }
  });
});

describe('labs run --dump', () => {
  it('checks the --dump directory with the other output places, before anything runs', async () => {
    // before the merge with the output-place check, --dump /proc/nope would have looped in mkdir
    const write = vi.spyOn(output, 'write').mockImplementation(() => true);
    try {
      await expect(
        runCommand({ ...base, experiment: 'mismatch', dump: '/proc/nope/dump' }),
      ).rejects.toMatchObject({
        code: 'BAD_CLI',
        message: expect.stringMatching(/^--dump \/proc\/nope\/dump: .*; nothing was run$/),
      });
    } finally {
      write.mockRestore();
    }
    expect(write).not.toHaveBeenCalled();
  });
});

describe('labs run: the record rule and resume', () => {
  it('a finished --seeds run rerun into its own --out resumes (all skipped, same record); another config is refused', async () => {
    // The record rule (no record.json replaced without --force) must not stop a resume: the plan
    // in the directory says the aggregate is rebuilt from the same seeds.
    const out = join(await mkdtemp(join(tmpdir(), 'labs-run-resume-')), 'out');
    const write = vi.spyOn(output, 'write').mockImplementation(() => true);
    const err = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const multi = { ...base, experiment: 'advantage', seeds: [1, 2], multi: true, out };
    try {
      expect(await runCommand(multi)).toBe(0);
      const first = JSON.parse(await readFile(join(out, 'record.json'), 'utf8'));
      expect(await runCommand(multi)).toBe(0);
      expect(err.mock.calls.map((c) => String(c[0])).join('')).toMatch(/2 of 2 seed runs already in/);
      const second = JSON.parse(await readFile(join(out, 'record.json'), 'utf8'));
      expect({ ...second, timing: null }).toEqual({ ...first, timing: null });
      // a different config into the same directory: refused, the record kept
      await expect(runCommand({ ...multi, sets: ['epsilon=0.001'] })).rejects.toMatchObject({
        code: 'BAD_SEED_RECORD',
      });
      // a single-seed run into a directory holding a record: refused without --force
      await expect(runCommand({ ...base, experiment: 'advantage', out })).rejects.toMatchObject({
        code: 'BAD_CLI',
      });
    } finally {
      write.mockRestore();
      err.mockRestore();
    }
  });
});

describe('labs run: where the plots are', () => {
  /** The printed text of one command (`output.write` captured). */
  async function printed(run: () => Promise<number>): Promise<string> {
    const out: string[] = [];
    const write = vi.spyOn(output, 'write').mockImplementation((chunk) => {
      out.push(String(chunk));
      return true;
    });
    try {
      expect(await run()).toBe(0);
    } finally {
      write.mockRestore();
    }
    return out.join('');
  }

  it('ends with a plots line naming a labs report command that works, or the page --html wrote', async () => {
    // before: the run ended with 'record: PATH' and never said how to see its plots
    const dir = await mkdtemp(join(tmpdir(), 'labs-run-hint-'));
    const text = await printed(() => runCommand({ ...base, experiment: 'advantage', json: false, out: dir }));
    const record = join(dir, 'record.json');
    const page = join(dir, 'report.html');
    const lines = text.trimEnd().split('\n');
    expect(lines.slice(-2)).toEqual([
      `record: ${record}`,
      `plots: labs report ${record} --html ${page} (or run again with --html)`,
    ]);
    // the hinted command, as typed, writes the page
    const command = /^plots: labs (.*) \(or run again with --html\)$/.exec(lines.at(-1) ?? '')?.[1] ?? '';
    const parsed = parseCli(command.split(' '));
    if (parsed.command !== 'report') throw new Error(`expected a report command, got ${parsed.command}`);
    await printed(() => reportCommand(parsed));
    expect(await readFile(page, 'utf8')).toMatch(/^<!doctype html>/i);
    // with --html the run names its page instead
    const withHtml = await printed(() =>
      runCommand({ ...base, experiment: 'advantage', json: false, out: join(dir, 'b'), html: '' }),
    );
    expect(withHtml.trimEnd().split('\n').at(-1)).toBe(`report: ${join(dir, 'b', 'report.html')}`);
    expect(withHtml).not.toContain('plots:');
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
    // what each run printed, all its writes joined
    const printed: string[] = [];
    const write = vi.spyOn(output, 'write').mockImplementation((s: string | Uint8Array) => {
      printed[printed.length - 1] += String(s);
      return true;
    });
    try {
      for (const n of [1, 2]) {
        printed.push('');
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
