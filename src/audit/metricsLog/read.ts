/**
 * `--metrics PATH`: a run's scalar log, a file or a directory of them, its format detected from the
 * file name and content: `events.out.tfevents.*` (TensorBoard, tfevents.ts), `*.csv` (W&B export,
 * csv.ts), `*.jsonl` (verl file logger, W&B history, prime-rl FileMonitor; jsonl.ts). A directory is
 * searched recursively for those names (TensorBoard writes one file per writer, in run subdirectories).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { openDuckSession } from '../duckdb.js';
import { readWandbCsv } from './csv.js';
import { readJsonlLog } from './jsonl.js';
import { readTfEvents } from './tfevents.js';
import type { MetricsLogFormat, ScalarLog, ScalarRow } from './types.js';

function kindOf(name: string): 'tensorboard' | 'csv' | 'jsonl' | null {
  if (name.startsWith('events.out.tfevents.')) return 'tensorboard';
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.jsonl')) return 'jsonl';
  return null;
}

async function walk(dir: string, out: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (kindOf(e.name) !== null) out.push(p);
  }
}

/** The metric log files under `path` (itself when a file), sorted. */
export async function listMetricsFiles(path: string): Promise<string[]> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (e) {
    throw new LabError(
      'IO_ERROR',
      `--metrics ${path}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (e as Error).message}`,
      {
        cause: e,
        details: { field: '--metrics', file: path },
      },
    );
  }
  if (info.isFile()) {
    if (kindOf(basename(path)) === null) {
      throw new LabError(
        'PARSE_ERROR',
        `--metrics ${path}: unknown log format (expected events.out.tfevents.*, *.csv or *.jsonl)`,
        { details: { field: '--metrics', file: path } },
      );
    }
    return [path];
  }
  const files: string[] = [];
  await walk(path, files);
  if (files.length === 0) {
    throw new LabError(
      'IO_ERROR',
      `--metrics ${path}: no events.out.tfevents.*, *.csv or *.jsonl file in it`,
      {
        details: { field: '--metrics', file: path },
      },
    );
  }
  return files;
}

/**
 * Reads every scalar of the log at `path`. When the same (step, metric) is logged more than once
 * (a resumed run, two event files) the last one read wins, in file order then record order, and a
 * note counts them.
 */
export async function readMetricsLog(path: string): Promise<ScalarLog> {
  const files = await listMetricsFiles(path);
  const rows: ScalarRow[] = [];
  const notes: string[] = [];
  const formats = new Set<MetricsLogFormat>();
  let db: Awaited<ReturnType<typeof openDuckSession>> | null = null;
  try {
    for (const file of files) {
      const kind = kindOf(basename(file));
      if (kind === 'tensorboard') {
        const r = readTfEvents(new Uint8Array(await readFile(file)), file);
        rows.push(...r.rows);
        notes.push(...r.notes);
        formats.add('tensorboard');
      } else if (kind === 'jsonl') {
        const r = readJsonlLog(await readFile(file, 'utf8'), file);
        rows.push(...r.rows);
        notes.push(...r.notes);
        formats.add(r.format);
      } else {
        db ??= await openDuckSession();
        const r = await readWandbCsv(db, file);
        rows.push(...r.rows);
        notes.push(...r.notes);
        formats.add('wandb-csv');
      }
    }
  } finally {
    db?.close();
  }
  const last = new Map<string, ScalarRow>();
  for (const r of rows) last.set(`${r.step}\u0000${r.metric}`, r);
  if (last.size < rows.length) {
    notes.push(
      `${rows.length - last.size} (step, metric) value(s) logged more than once: the last one read is used`,
    );
  }
  return { files, formats: [...formats], rows: [...last.values()], notes };
}
