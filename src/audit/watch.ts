/**
 * `labs audit DIR --watch`: which dump files are ready to (re)read while a job is still writing the
 * directory. A poll of `stat` sizes (no file watcher: `fs.watch` misses events on network and
 * container file systems, and a poll every second over a dump directory's few hundred files is cheap).
 *
 * A file is ready when it matches the preset's file pattern, its size changed since it was last
 * read, and it is complete:
 *  - JSONL: it ends with a newline (a last line still being written is not read yet);
 *  - a file under a `step_*` directory that holds a `STABLE` file only (prime-rl writes the marker
 *    when a step of its token export, `token_exports/step_N/rank_R.jsonl`, is complete: PRs #2592 and
 *    #2596; without the marker
 *    the step is still being written);
 *  - Parquet: any size (a Parquet file that is still incomplete fails to read and is retried at the
 *    next poll).
 * Each ready file is audited alone, so the cost of a new step does not grow with the steps already
 * read; the final record is a one-shot audit of the whole directory.
 */
import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { AuditPreset } from './presets.js';

export interface WatchState {
  /** File → size when last read. */
  read: Map<string, number>;
}

async function walk(dir: string, out: string[]): Promise<void> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return; // a directory removed while we looked
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else out.push(p);
  }
}

async function endsWithNewline(file: string, size: number): Promise<boolean> {
  if (size === 0) return false;
  const h = await open(file, 'r');
  try {
    const b = Buffer.alloc(1);
    await h.read(b, 0, 1, size - 1);
    return b[0] === 0x0a;
  } finally {
    await h.close();
  }
}

/** The files of `dir` that are ready to (re)read (see the module comment), sorted; updates nothing. */
export async function readyFiles(
  dir: string,
  preset: AuditPreset,
  state: WatchState,
): Promise<{ file: string; size: number }[]> {
  const all: string[] = [];
  await walk(dir, all);
  const names = new Set(all);
  const out: { file: string; size: number }[] = [];
  for (const file of all.sort()) {
    const name = basename(file);
    if (!preset.filePattern.test(name)) continue;
    const parent = dirname(file);
    if (/^step_\d+$/.test(basename(parent)) && !names.has(join(parent, 'STABLE'))) continue;
    let size: number;
    try {
      size = (await stat(file)).size;
    } catch {
      continue;
    }
    if (state.read.get(file) === size) continue;
    if (!name.endsWith('.parquet') && !(await endsWithNewline(file, size))) continue;
    out.push({ file, size });
  }
  return out;
}
