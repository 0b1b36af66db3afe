import { join } from 'node:path';
import { runSeeds } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { loadExperiment } from '../../experiments/registry.js';
import type { Experiment, MultiSeedRecord, RunRecord } from '../../experiments/types.js';
import { runDirName, seedsDirLabel, toJson, writeRecord } from '../../report/records.js';
import { formatMultiSeed, formatRecord } from '../../report/summaries/index.js';
import { exitOnInterrupt, noteWritten } from '../interrupt.js';
import { lockOutputDir } from '../outputLock.js';
import { checkOutputPlaces, type OutputPlace } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';
import { openSeedPool, type SeedPool } from '../seedPool.js';
import { mark } from '../startupMarks.js';
import { output } from '../stdout.js';

/** How messages name the output directory when `--out` was not given. */
export const DEFAULT_OUT_FLAG = 'output directory (default; change with --out)';

/**
 * The places `labs run` (and `--sweep`) writes: the record's directory `dir` and the HTML page, as
 * {@link checkOutputPlaces} takes them. Returns the HTML path ('' resolved to `dir/report.html`).
 */
export function runOutputPlaces(
  p: Extract<ParsedCli, { command: 'run' }>,
  dir: string,
): { places: OutputPlace[]; htmlPath: string | null } {
  const htmlPath = p.html === '' ? join(dir, 'report.html') : p.html;
  const places: OutputPlace[] = [
    {
      flag: p.out ? '--out' : DEFAULT_OUT_FLAG,
      path: dir,
      kind: 'dir',
      files: p.html === '' ? ['record.json', 'report.html'] : ['record.json'],
    },
  ];
  if (p.html) places.push({ flag: '--html', path: p.html, kind: 'file' });
  return { places, htmlPath };
}

export async function runCommand(p: Extract<ParsedCli, { command: 'run' }>): Promise<number> {
  mark('run imported');
  // Ctrl-C with --seeds or --sweep: the seeds yield to the event loop between them, so the handler
  // runs after the current seed, says nothing was written and exits 130. A single seed never yields
  // until it ends, and a handler would hold Ctrl-C back until then: there Node's default (exit at
  // once, silently; nothing was written, as a record is written only at the end) is kept.
  if (p.multi || p.sweep) exitOnInterrupt();
  // Workers of a given --jobs start first: they load the experiment while this thread loads and
  // validates. By default they start later, if the seeds' pace shows they pay.
  const tasks = p.seeds.length * (p.sweep?.values.length ?? 1);
  const pool = p.multi ? openSeedPool(p.experiment, p.jobs, tasks, p.jobsGiven) : null;
  try {
    if (p.sweep) return await (await import('./sweep.js')).sweepCommand(p, p.sweep, pool);
    return await runExperiment(p, pool);
  } finally {
    await pool?.close();
  }
}

async function runExperiment(
  p: Extract<ParsedCli, { command: 'run' }>,
  pool: SeedPool | null,
): Promise<number> {
  const experiment = await loadExperiment(p.experiment);
  mark('experiment imported');
  const config = resolveConfig(experiment, p.sets);
  mark('config resolved');
  // The directory is named at the start (its time is the run's start), so it can be checked now.
  const seedLabel = p.multi ? seedsDirLabel(p.seeds) : String(p.seeds[0]);
  const dir = p.out ?? join('runs', runDirName(experiment.name, seedLabel, new Date()));
  const { places, htmlPath } = runOutputPlaces(p, dir);
  checkOutputPlaces(places);
  const lock = lockOutputDir(dir, { flag: places[0]?.flag as string, force: p.force });
  try {
    const progress = createProgress(
      p.multi ? `${experiment.name} x${p.seeds.length}` : experiment.name,
      p.progress,
    );
    let record: RunRecord | MultiSeedRecord;
    try {
      if (p.multi) {
        const runner = pool?.runner(experiment as Experiment);
        record = await runSeeds(experiment, config, p.seeds, (d, t) => progress.update(d, t), runner);
      } else {
        const seed = p.seeds[0] as number;
        record = await experiment.run(config, { seed, onProgress: (d, t) => progress.update(d, t) });
      }
    } finally {
      progress.stop();
    }
    mark('experiment ran');
    const path = await writeRecord(record, { dir });
    noteWritten(path);
    mark('record written');
    if (htmlPath) {
      const { writeHtmlReport } = await import('../../report/html.js');
      await writeHtmlReport([record], { html: htmlPath, png: null, sources: [path] });
      noteWritten(htmlPath);
    }
    if (p.json) {
      output.write(`${toJson(record)}\n`);
    } else {
      const text = 'runs' in record ? formatMultiSeed(record) : await formatRecord(record);
      mark('formatted');
      output.write(`${text}\n\nrecord: ${path}\n`);
      if (htmlPath) output.write(`report: ${htmlPath}\n`);
    }
    return 0;
  } finally {
    // Now, not only at exit: a library caller (a test) may run again in this process.
    lock.release();
  }
}
