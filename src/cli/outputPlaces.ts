/**
 * One check of every place a command will write (`--out DIR`, `--html FILE`, `--png DIR`), run
 * before anything runs or is written, so a bad place fails in a second with one line naming the flag
 * instead of after a long run (or after half the outputs were written). It refuses:
 *  - a file given where a directory goes, and a directory (or a device, a FIFO) where a file goes;
 *  - a place whose nearest existing ancestor is not a directory, or where nothing can be created:
 *    tried for real (a directory made and removed at once, or a file created and removed), because
 *    `access(W_OK)` says yes to root everywhere and to procfs and read-only mounts too;
 *  - an output that is one of the command's inputs (`labs report R.json --html R.json`), compared
 *    after resolving symbolic links (realpath) and, for existing files, by device and inode (hard links);
 *  - two outputs of one command that are the same file (`--out d --html d/record.json`).
 * All are usage errors (BAD_CLI, exit 2): the command line asked for an impossible place.
 *
 * Why the check creates no directory: Node's `mkdir(..., { recursive: true })` loops forever on procfs
 * (`/proc/nope`: mkdir answers ENOENT, Node retries the parent, and so on); the writers make
 * directories one level at a time (report/records.ts `makeDirs`), and this check finds such a place first.
 */
import { closeSync, mkdirSync, openSync, realpathSync, rmdirSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { LabError } from '../core/errors.js';

/** A place a command writes: a directory (`--out`, `--png`) or a file (`--html`). */
export interface OutputPlace {
  /** The flag that named it, for messages: `--out`, `--html`, `--png`, or a phrase for a default. */
  flag: string;
  path: string;
  kind: 'dir' | 'file';
  /** Files the command writes inside a `dir` place (`record.json`): checked against the inputs. */
  files?: readonly string[];
  /** File names in a `dir` place matching this are written too (`--png`: `01-family.png`). */
  filePattern?: RegExp;
}

/** An input the command reads (a record, a dump): no output may be it. */
export interface InputPlace {
  flag: string;
  path: string;
}

export interface CheckOptions {
  /** The end of every message: what did not happen (default 'nothing was run'). */
  consequence?: string;
}

function errnoCode(e: unknown): string {
  return (e as NodeJS.ErrnoException)?.code ?? String(e);
}

/** `path` with every existing part's symbolic links resolved (the missing tail appended as given). */
export function canonicalPath(path: string): string {
  let head = resolve(path);
  const tail: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...tail);
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(path);
      tail.unshift(basename(head));
      head = parent;
    }
  }
}

/** Device and inode of an existing file, else null. */
function identity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
}

/** Whether two paths name the same file (same canonical path, or the same inode when both exist). */
function sameFile(a: string, b: string): boolean {
  if (canonicalPath(a) === canonicalPath(b)) return true;
  const ia = identity(a);
  return ia !== null && ia === identity(b);
}

/**
 * Throws BAD_CLI when a directory could not be made and written at `dir`. Creates nothing that stays:
 * when `dir` exists a probe file is created in it and removed; else the first missing directory on
 * the way is created (one level, never recursively) and removed.
 */
function checkWritableDirectory(dir: string, refuse: (why: string, cause?: unknown) => LabError): void {
  let path = resolve(dir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOTDIR') throw refuse(`a parent of ${path} is a file, not a directory`, e);
      if (code !== 'ENOENT') throw refuse(`cannot inspect ${path} (${code})`, e);
      const parent = dirname(path);
      if (parent === path) throw refuse('no existing parent directory');
      path = parent;
      continue;
    }
    if (!isDir) throw refuse(`${path} is not a directory`);
    const target = resolve(dir);
    if (path === target) {
      const probe = join(path, `.labs-write-probe-${process.pid}-${Date.now()}`);
      try {
        closeSync(openSync(probe, 'wx'));
      } catch (e) {
        throw refuse(`cannot create files in ${path} (${errnoCode(e)})`, e);
      }
      unlinkSync(probe);
    } else {
      // The first missing level below the nearest existing directory.
      const first = join(path, relative(path, target).split(sep)[0] as string);
      try {
        rmdirProbe(first);
      } catch (e) {
        throw refuse(`cannot create the directory ${first} (${errnoCode(e)})`, e);
      }
    }
    return;
  }
}

/** Makes `dir` (one level: on procfs this answers ENOENT at once instead of looping) and removes it. */
function rmdirProbe(dir: string): void {
  mkdirSync(dir);
  rmdirSync(dir);
}

/**
 * Checks every place in `places` (see the file's comment) against each other and against `inputs`.
 * Throws BAD_CLI `<flag> <path>: <why>; <consequence>` with `details.field` the flag.
 */
export function checkOutputPlaces(
  places: readonly OutputPlace[],
  inputs: readonly InputPlace[] = [],
  options: CheckOptions = {},
): void {
  const consequence = options.consequence ?? 'nothing was run';
  const written: { place: OutputPlace; file: string }[] = [];
  for (const place of places) {
    const refuse = (why: string, cause?: unknown) =>
      new LabError('BAD_CLI', `${place.flag} ${place.path}: ${why}; ${consequence}`, {
        ...(cause === undefined ? {} : { cause }),
        details: { field: place.flag, file: place.path },
      });
    let info: ReturnType<typeof statSync> | null = null;
    try {
      info = statSync(place.path);
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOTDIR') throw refuse('a parent directory is a file', e);
      if (code !== 'ENOENT') throw refuse(`cannot inspect it (${code})`, e);
    }
    if (place.kind === 'dir') {
      if (info && !info.isDirectory()) throw refuse('exists and is not a directory');
      checkWritableDirectory(place.path, refuse);
      for (const f of place.files ?? []) written.push({ place, file: join(place.path, f) });
      if (place.filePattern) {
        for (const input of inputs) {
          if (
            canonicalPath(dirname(input.path)) === canonicalPath(place.path) &&
            place.filePattern.test(basename(input.path))
          ) {
            throw refuse(`writing there would overwrite the input ${input.path}`);
          }
        }
      }
    } else {
      if (info?.isDirectory()) throw refuse('is a directory; give a file name');
      if (info && !info.isFile()) throw refuse('exists and is not a regular file');
      checkWritableDirectory(dirname(resolve(place.path)), refuse);
      written.push({ place, file: place.path });
    }
  }
  for (const [i, w] of written.entries()) {
    const refuse = (why: string) =>
      new LabError('BAD_CLI', `${w.place.flag} ${w.place.path}: ${why}; ${consequence}`, {
        details: { field: w.place.flag, file: w.file },
      });
    for (const input of inputs) {
      if (sameFile(w.file, input.path)) {
        const which = w.file === w.place.path ? '' : ` (its ${basename(w.file)})`;
        throw refuse(`would overwrite the input ${input.path}${which}`);
      }
    }
    for (const other of written.slice(0, i)) {
      if (sameFile(w.file, other.file)) {
        throw refuse(`is the same file as ${other.place.flag}'s ${other.file}`);
      }
    }
  }
}
