import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LabError } from '../core/errors.js';
import { exitCodeFor } from './errorOutput.js';
import { lockFileOf, lockOutputDir } from './outputLock.js';

function refusal(f: () => unknown): LabError | null {
  try {
    f();
  } catch (e) {
    return e as LabError;
  }
  return null;
}

/** The pid of a process that has exited (a stale lock's owner). */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(r.stdout);
}

describe('lockOutputDir', () => {
  const root = mkdtempSync(join(tmpdir(), 'labs-lock-'));

  it('lets one writer at a time into a directory, and creates nothing in it', () => {
    const dir = join(root, 'out');
    const lock = lockOutputDir(dir, { flag: '--out', force: false, command: 'labs run -e agent' });
    expect(existsSync(dir)).toBe(false); // made when the record is written, not before
    expect(JSON.parse(readFileSync(lock.file, 'utf8'))).toMatchObject({
      pid: process.pid,
      host: hostname(),
      command: 'labs run -e agent',
    });
    // the same directory through a symbolic link is the same lock
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'link'));
    expect(lockFileOf(join(root, 'link', 'x'))).toBe(lockFileOf(join(root, 'real', 'x')));
    const second = refusal(() => lockOutputDir(join(root, '.', 'out'), { flag: '--out', force: false }));
    expect(second?.code).toBe('OUTPUT_LOCKED');
    expect(second?.message).toMatch(
      new RegExp(
        `^--out .*out is being written by labs \\(pid ${process.pid} on .*: labs run -e agent\\); wait for it`,
      ),
    );
    expect(exitCodeFor(second)).toBe(1);
    lock.release();
    expect(existsSync(lock.file)).toBe(false);
    lockOutputDir(dir, { flag: '--out', force: false }).release();
  });

  it('takes over a stale lock (its process is gone)', () => {
    const dir = join(root, 'stale');
    const file = lockFileOf(dir);
    const pid = deadPid();
    lockOutputDir(dir, { flag: '--out', force: false }).release(); // makes the lock directory
    writeFileSync(file, JSON.stringify({ pid, host: hostname(), started: 'earlier', command: 'labs run' }));
    const lock = lockOutputDir(dir, { flag: '--out', force: false });
    expect(JSON.parse(readFileSync(file, 'utf8')).pid).toBe(process.pid);
    lock.release();
    // a lock from another host is never taken for stale: its pid means nothing here
    writeFileSync(file, JSON.stringify({ pid, host: `${hostname()}-other`, started: 'x', command: 'y' }));
    expect(refusal(() => lockOutputDir(dir, { flag: '--out', force: false }))?.code).toBe('OUTPUT_LOCKED');
    rmSync(file);
  });

  it('refuses a directory that already holds a record unless forced (usage error)', () => {
    const dir = join(root, 'done');
    mkdirSync(dir);
    writeFileSync(join(dir, 'record.json'), '{}');
    const e = refusal(() => lockOutputDir(dir, { flag: '--out', force: false }));
    expect(e?.code).toBe('BAD_CLI');
    expect(e?.message).toMatch(
      /^--out .*done already holds a record \(.*record\.json\): give another directory, or add --force/,
    );
    expect(exitCodeFor(e)).toBe(2);
    lockOutputDir(dir, { flag: '--out', force: true }).release();
    expect(readFileSync(join(dir, 'record.json'), 'utf8')).toBe('{}'); // forcing replaces it later, when written
  });
});
