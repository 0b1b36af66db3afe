import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
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
