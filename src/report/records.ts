/**
 * RunRecords on disk: `runs/<experiment>__<seed>__<timestamp>/record.json`, written to a temporary
 * file in the same directory and renamed, so an interrupted run never leaves a half-written record.
 * The functions keep their promise-returning signatures but use node:fs's synchronous calls: a
 * record is one small file, and node:fs/promises costs about ten of Node's own modules (readline,
 * watchers), a few ms of every `labs run` that writes one.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LabError } from '../core/errors.js';
import type { SweepRecord } from '../experiments/sweep.js';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';
import { makeDirs } from '../makeDirs.js';

/** Re-exported for the writers of this layer; defined below the layers in src/makeDirs.ts. */
export { makeDirs };

/** JSON with non-finite numbers written as the strings 'NaN' / 'Infinity' / '-Infinity' (as the golden file does). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 2);
}

/** The inverse of {@link toJson}: JSON with the strings 'NaN' / 'Infinity' / '-Infinity' read back as those numbers. */
export function fromJson(text: string): unknown {
  return JSON.parse(text, (_k, v) =>
    v === 'NaN' ? Number.NaN : v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v,
  );
}

/**
 * Writes `data` to `path` atomically (temp file + rename in the same directory). When the write or
 * the rename fails (disk full, `path` is a directory) the temp file is removed before rethrowing.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  writeFileAtomicSync(path, data);
}

/** {@link writeFileAtomic}, synchronously: done before the caller's next statement (a seed's record as it finishes). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/** `1..20` for consecutive seeds, else `1,5,9`: a range would name seeds that were never run. */
export function seedsDirLabel(seeds: readonly number[]): string {
  const consecutive = seeds.every((s, i) => i === 0 || s === (seeds[i - 1] as number) + 1);
  return consecutive && seeds.length > 1 ? `${seeds[0]}..${seeds[seeds.length - 1]}` : seeds.join(',');
}

/** `<experiment>__<seed label>__<ISO time with ':' and '.' as '-'>`: sortable, and valid on every file system. */
export function runDirName(experiment: string, seedLabel: string, now: Date): string {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  return `${experiment}__${seedLabel}__${stamp}`;
}

/**
 * Writes a record to `<outDir>/<experiment>__<seed>__<timestamp>/record.json` (or directly into
 * `outDir` when `exactDir` is set) and returns the file path.
 */
export async function writeRecord(
  record: RunRecord | MultiSeedRecord,
  options: { root?: string; dir?: string; now?: Date } = {},
): Promise<string> {
  const seedLabel = 'seeds' in record ? seedsDirLabel(record.seeds) : String(record.seed);
  const dir =
    options.dir ??
    join(options.root ?? 'runs', runDirName(record.experiment, seedLabel, options.now ?? new Date()));
  try {
    makeDirs(dir);
    const path = join(dir, 'record.json');
    await writeFileAtomic(path, `${toJson(record)}\n`);
    return path;
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write record under ${dir}: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Reads a record file: a RunRecord, a multi-seed record or a sweep record (`sweep` and `points`). A
 * file that is not JSON, has no `experiment` or is none of these is a BAD_RECORD error naming the file.
 */
export async function readRecord(path: string): Promise<RunRecord | MultiSeedRecord | SweepRecord> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot read record ${path}: ${(e as Error).message}`, {
      cause: e,
      details: { file: path },
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new LabError('BAD_RECORD', `${path}: not valid JSON (${(e as Error).message})`, {
      cause: e,
      details: { file: path },
    });
  }
  if (
    typeof data !== 'object' ||
    data === null ||
    typeof (data as { experiment?: unknown }).experiment !== 'string'
  ) {
    throw new LabError('BAD_RECORD', `${path}: not a RunRecord (no "experiment" field)`, {
      details: { file: path },
    });
  }
  const rec = data as Record<string, unknown>;
  if ('sweep' in rec && 'points' in rec) return data as SweepRecord;
  if (!('runs' in rec) && (typeof rec.metrics !== 'object' || rec.metrics === null)) {
    throw new LabError('BAD_RECORD', `${path}: not a RunRecord (no "metrics" object)`, {
      details: { file: path },
    });
  }
  return data as RunRecord | MultiSeedRecord;
}
