/**
 * One writer per output directory. A command that writes a record into a directory (`labs run`,
 * `--sweep`, `labs audit --out`) first takes the directory, before anything runs:
 *  - it refuses a directory that already holds a record (`record.json`) unless `--force` is given:
 *    a finished run's record is never replaced silently (a usage error, exit 2);
 *  - it creates a lock file with O_EXCL (`wx`) holding its pid, host, start time and command line. A
 *    second command into the same directory meanwhile is refused (OUTPUT_LOCKED, exit 1) instead of
 *    both exiting 0 with one's record beside the other's report. A lock whose process is gone (same
 *    host, no such pid: killed, or the machine rebooted) is stale and taken over. The lock is removed
 *    on exit (process.exit runs the `exit` handlers; the CLI exits that way, Ctrl-C included).
 *
 * The lock file lives in the system's temporary directory (`<tmp>/labs-locks/<hash of the directory's
 * real path>.lock`), not in the output directory: the directory is still created only when the record
 * is written, so a refused or interrupted run (even one killed outright, whose lock then stays behind
 * as a stale one) leaves nothing in the user's tree.
 *
 * The two rules are separate on purpose: the lock is about two processes at once, the record rule
 * about a finished result. A later resume (the same command run again skips finished seeds) can allow
 * an existing directory whose record matches the command without touching the lock.
 */
import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { LabError } from '../core/errors.js';
import { canonicalPath } from './outputPlaces.js';

/**
 * The lock file of output directory `dir`: one per real path (links resolved), shared by every user
 * (the directory is made world-writable and sticky, like /tmp itself).
 */
export function lockFileOf(dir: string): string {
  const real = canonicalPath(dir);
  // Two FNV-1a hashes (64 bits) of the real path, plus its last part to be recognisable; not
  // node:crypto, whose import would cost every `labs run` a few ms of start-up (docs/bench-startup.md).
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ real.length;
  for (let i = 0; i < real.length; i++) {
    const c = real.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c ^ (i & 0xff), 0x01000193) >>> 0;
  }
  const name = (basename(real) || 'root').replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 40);
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  return join(tmpdir(), 'labs-locks', `${name}-${hex(a)}${hex(b)}.lock`);
}

function ensureLockDir(path: string): void {
  try {
    mkdirSync(path, { mode: 0o1777 });
    chmodSync(path, 0o1777); // the umask may have narrowed it
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

interface LockContent {
  pid: number;
  host: string;
  started: string;
  command: string;
}

export interface OutputLock {
  dir: string;
  /** The lock file. */
  file: string;
  /** Removes the lock if it is still ours. Idempotent. */
  release(): void;
}

/** Whether process `pid` exists on this machine (EPERM: it exists, owned by another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(path: string): LockContent | null {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockContent>;
    if (typeof data.pid !== 'number' || typeof data.host !== 'string') return null;
    return {
      pid: data.pid,
      host: data.host,
      started: String(data.started ?? '?'),
      command: String(data.command ?? '?'),
    };
  } catch {
    return null;
  }
}

/**
 * Takes `dir` for this process (see the file's comment); `flag` names it in messages (`--out`).
 * Errors: BAD_CLI when `dir/record.json` exists and `force` is not set; OUTPUT_LOCKED when another
 * live process holds the lock; IO_ERROR when the lock cannot be created.
 */
export function lockOutputDir(
  dir: string,
  o: { flag: string; force: boolean; command?: string },
): OutputLock {
  const record = join(dir, 'record.json');
  let exists = false;
  try {
    exists = statSync(record).isFile();
  } catch {
    exists = false;
  }
  if (exists && !o.force) {
    throw new LabError(
      'BAD_CLI',
      `${o.flag} ${dir} already holds a record (${record}): give another directory, or add --force to replace it; nothing was run`,
      { details: { field: o.flag, file: record } },
    );
  }
  const path = lockFileOf(dir);
  const mine: LockContent = {
    pid: process.pid,
    host: hostname(),
    started: new Date().toISOString(),
    command: o.command ?? `labs ${process.argv.slice(2).join(' ')}`,
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      try {
        writeSync(fd, `${JSON.stringify(mine)}\n`);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && attempt === 0) {
        try {
          ensureLockDir(join(path, '..'));
        } catch {
          // reported by the next attempt's error
        }
        continue;
      }
      if (code !== 'EEXIST') {
        throw new LabError(
          'IO_ERROR',
          `${o.flag} ${dir}: cannot create the lock ${path} (${(e as Error).message})`,
          {
            cause: e,
            details: { field: o.flag, file: path },
          },
        );
      }
      const held = readLock(path);
      const stale = held !== null && held.host === mine.host && !alive(held.pid);
      if (!stale || attempt > 2) {
        const who = held
          ? `labs (pid ${held.pid} on ${held.host}, started ${held.started}: ${held.command})`
          : 'another labs command';
        throw new LabError(
          'OUTPUT_LOCKED',
          `${o.flag} ${dir} is being written by ${who}; wait for it or give another directory (if no such run is going, remove its lock ${path}); nothing was run`,
          { details: { field: o.flag, file: path, ...(held ? { pid: held.pid } : {}) } },
        );
      }
      // A stale lock (its process is gone): take it over.
      try {
        unlinkSync(path);
      } catch {
        // someone else took it over first: the next attempt sees theirs
      }
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    if (readLock(path)?.pid === process.pid) {
      try {
        unlinkSync(path);
      } catch {
        // already gone
      }
    }
  };
  // Also on process.exit() (the CLI exits as soon as a command returns, and on Ctrl-C).
  process.on('exit', release);
  return { dir, file: path, release };
}
