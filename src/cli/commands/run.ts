import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { runSeeds } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { loadExperiment } from '../../experiments/registry.js';
import type { MultiSeedRecord, RunRecord } from '../../experiments/types.js';
import { toJson, writeRecord } from '../../report/records.js';
import { formatMultiSeed, formatRecord } from '../../report/summaries/index.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';

/**
 * Creates `dir` and checks it is a writable directory before anything runs, so a bad `--out` (a file,
 * a read-only place) fails in a second instead of after the run, losing it.
 */
async function ensureWritableDir(dir: string, flag: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (e) {
    throw new LabError(
      'IO_ERROR',
      `${flag} ${dir}: cannot write there (${(e as Error).message}); nothing was run`,
      {
        cause: e,
        details: { field: flag, file: dir },
      },
    );
  }
}

export async function runCommand(p: Extract<ParsedCli, { command: 'run' }>): Promise<number> {
  const experiment = await loadExperiment(p.experiment);
  const config = resolveConfig(experiment, p.sets);
  await ensureWritableDir(p.out ?? 'runs', p.out ? '--out' : 'output directory (default; change with --out)');
  if (p.html) await ensureWritableDir(dirname(p.html), '--html');
  const progress = createProgress(
    p.multi ? `${experiment.name} x${p.seeds.length}` : experiment.name,
    p.progress,
  );
  let record: RunRecord | MultiSeedRecord;
  try {
    if (p.multi) {
      record = await runSeeds(experiment, config, p.seeds, (d, t) => progress.update(d, t));
    } else {
      const seed = p.seeds[0] as number;
      record = await experiment.run(config, { seed, onProgress: (d, t) => progress.update(d, t) });
    }
  } finally {
    progress.stop();
  }
  const path = await writeRecord(record, p.out ? { dir: p.out } : {});
  const htmlPath = p.html === '' ? join(dirname(path), 'report.html') : p.html;
  if (htmlPath) {
    const { writeHtmlReport } = await import('../../report/html.js');
    await writeHtmlReport([record], { html: htmlPath, png: null, sources: [path] });
  }
  if (p.json) {
    process.stdout.write(`${toJson(record)}\n`);
  } else {
    const text = 'runs' in record ? formatMultiSeed(record) : await formatRecord(record);
    process.stdout.write(`${text}\n\nrecord: ${path}\n`);
    if (htmlPath) process.stdout.write(`report: ${htmlPath}\n`);
  }
  return 0;
}
