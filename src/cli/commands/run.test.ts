import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { lockFileOf } from '../outputLock.js';
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
  progress: false,
  jobs: 1,
  jobsGiven: true,
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
