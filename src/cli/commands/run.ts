import { accessSync, constants, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { LabError } from '../../core/errors.js';
import { runSeeds } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { loadExperiment } from '../../experiments/registry.js';
import type { Experiment, MultiSeedRecord, RunContext, RunRecord } from '../../experiments/types.js';
import { toJson, writeRecord } from '../../report/records.js';
import { formatMultiSeed, formatRecord } from '../../report/summaries/index.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';
import { openSeedPool, type SeedPool } from '../seedPool.js';
import { mark } from '../startupMarks.js';
import { output } from '../stdout.js';

/**
 * Checks, without creating anything, that `dir` could be created and written: it is a writable
 * directory, or its nearest existing ancestor is. A bad `--out`/`--html` (a file in the way, a
 * read-only place) then fails in a second instead of after the run, and a run that is refused or
 * interrupted (Ctrl-C) leaves no empty directory behind: directories are made when the record and
 * the report are written.
 */
export async function checkWritableDir(dir: string, flag: string): Promise<void> {
  const fail = (why: string, cause?: unknown) =>
    new LabError('IO_ERROR', `${flag} ${dir}: cannot write there (${why}); nothing was run`, {
      cause,
      details: { field: flag, file: dir },
    });
  let path = resolve(dir);
  for (;;) {
    let isDir: boolean;
    try {
      isDir = statSync(path).isDirectory();
    } catch (e) {
      const parent = dirname(path);
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || parent === path)
        throw fail((e as Error).message, e);
      path = parent;
      continue;
    }
    if (!isDir) throw fail(`${path} is not a directory`);
    try {
      accessSync(path, constants.W_OK);
    } catch (e) {
      throw fail((e as Error).message, e);
    }
    return;
  }
}

export async function runCommand(p: Extract<ParsedCli, { command: 'run' }>): Promise<number> {
  mark('run imported');
  if (p.dump !== null && (p.multi || p.sweep)) {
    throw new LabError('BAD_CLI', '--dump writes one run: it cannot be combined with --seeds or --sweep', {
      details: { field: '--dump' },
    });
  }
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
  const dump = p.dump === null ? null : await tokenDumpSink(p, experiment);
  await checkWritableDir(p.out ?? 'runs', p.out ? '--out' : 'output directory (default; change with --out)');
  if (p.html) await checkWritableDir(dirname(p.html), '--html');
  const progress = createProgress(
    p.multi ? `${experiment.name} x${p.seeds.length}` : experiment.name,
    p.progress,
  );
  let record: RunRecord | MultiSeedRecord;
  // lines about how the run went that are not results (e.g. a reused checkpoint), shown with the summary
  const info: string[] = [];
  try {
    if (p.multi) {
      const runner = pool?.runner(experiment as Experiment);
      record = await runSeeds(experiment, config, p.seeds, (d, t) => progress.update(d, t), runner);
    } else {
      const seed = p.seeds[0] as number;
      record = await experiment.run(config, {
        seed,
        onProgress: (d, t) => progress.update(d, t),
        onInfo: (line) => info.push(line),
        ...(dump ? { onUpdateTokens: dump.write } : {}),
      });
      if (dump) info.push(dump.summary());
    }
  } finally {
    progress.stop();
  }
  mark('experiment ran');
  const path = await writeRecord(record, p.out ? { dir: p.out } : {});
  mark('record written');
  const htmlPath = p.html === '' ? join(dirname(path), 'report.html') : p.html;
  if (htmlPath) {
    const { writeHtmlReport } = await import('../../report/html.js');
    await writeHtmlReport([record], { html: htmlPath, png: null, sources: [path] });
  }
  if (p.json) {
    output.write(`${toJson(record)}\n`);
    for (const line of info) process.stderr.write(`${line}\n`); // stdout stays one JSON document
  } else {
    const text = 'runs' in record ? formatMultiSeed(record) : await formatRecord(record);
    mark('formatted');
    output.write(`${text}\n\n${info.map((line) => `${line}\n`).join('')}record: ${path}\n`);
    if (htmlPath) output.write(`report: ${htmlPath}\n`);
  }
  return 0;
}

/**
 * `--dump DIR`: writes each update's tokens as a complete prime-rl token-export step
 * (`DIR/<arm>/token_exports/step_<update>/rank_0.jsonl` + STABLE, src/report/primeRlTokenExport.ts),
 * so `labs audit DIR/<arm> --preset prime-rl` reads them. Refused (BAD_CLI) with `--seeds`/`--sweep`
 * and for an experiment that records no tokens; the directory must be writable (IO_ERROR, before
 * anything runs); an existing step file is never overwritten (IO_ERROR from the writer).
 */
async function tokenDumpSink(
  p: Extract<ParsedCli, { command: 'run' }>,
  experiment: Experiment,
): Promise<{ write: NonNullable<RunContext['onUpdateTokens']>; summary: () => string }> {
  const dir = p.dump as string;
  if (!experiment.recordsTokens) {
    throw new LabError(
      'BAD_CLI',
      `--dump: experiment '${experiment.name}' records no tokens (mismatch does)`,
      {
        details: { field: '--dump', value: experiment.name },
      },
    );
  }
  await checkWritableDir(dir, '--dump');
  const { tokenExportSequences, writePrimeRlTokenExportStep } = await import(
    '../../report/primeRlTokenExport.js'
  );
  const arms = new Set<string>();
  let steps = 0;
  return {
    write: (arm, t) => {
      const sequences = tokenExportSequences(t.batch, {
        trainerLogProbs: t.trainerLogProbs,
        inferenceLogProbs: t.inferenceLogProbs,
        responseMask: t.responseMask,
        advantages: t.advantages,
        entropy: t.entropy,
      });
      writePrimeRlTokenExportStep(join(dir, arm), t.update, [sequences]);
      arms.add(arm);
      steps++;
    },
    summary: () =>
      `dump: ${steps} steps of ${arms.size} arms in ${dir}/<arm> (labs audit ${dir}/<arm> --preset prime-rl)`,
  };
}
