/**
 * Directories made one level at a time, for every layer that writes files (records and pages in
 * report/, per-seed records, the warm start's checkpoint cache in policy/). A file of its own below
 * the layers, like random.ts, so that the policy layer can use it without importing report/.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Makes `dir` and its missing parents, one level at a time, and returns the directories it created
 * (outermost first). Not `mkdir(dir, { recursive: true })`: Node's recursive mkdir never returns on
 * procfs (`/proc/nope`: mkdir answers ENOENT and Node retries the parent, forever); one level at a
 * time, the same place fails at once with that ENOENT.
 */
export function makeDirs(dir: string): string[] {
  const missing: string[] = [];
  let path = resolve(dir);
  for (;;) {
    try {
      statSync(path); // exists (a file in the way is reported below)
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      const parent = dirname(path);
      if (parent === path) break;
      missing.unshift(path);
      path = parent;
    }
  }
  const created: string[] = [];
  for (const level of missing) {
    try {
      mkdirSync(level);
      created.push(level);
    } catch (e) {
      // Made by someone else meanwhile: fine if it is a directory.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(level).isDirectory()) throw e;
    }
  }
  if (!statSync(resolve(dir)).isDirectory()) {
    throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), { code: 'ENOTDIR' });
  }
  return created;
}
