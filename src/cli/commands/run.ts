import { join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { summarizeSeedRuns } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { loadExperiment } from '../../experiments/registry.js';
import { startStopwatch } from '../../experiments/stopwatch.js';
import type {
  Experiment,
  JsonValue,
  MultiSeedRecord,
  RunContext,
  RunRecord,
} from '../../experiments/types.js';
import { toJson, writeRecord } from '../../report/records.js';
import { formatMultiSeed, formatRecord } from '../../report/summaries/index.js';
import { noteWritten, runBreakingOnInterrupt } from '../interrupt.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { plotHint } from '../plotHint.js';
import { createProgress } from '../progress.js';
import { openSeedPool, type SeedPool } from '../runtime/seedPool.js';
import { mark } from '../runtime/startupMarks.js';
import { output } from '../stdout.js';
import { runOutputPlaces, takeOutputDir } from './runOutput.js';
import { outputDir, planOf, runCommandJobs, shardDoneLine } from './seedJobs.js';

export async function runCommand(p: Extract<ParsedCli, { command: 'run' }>): Promise<number> {
  mark('run imported');
  if (p.dump !== null && (p.multi || p.sweep)) {
    throw new LabError('BAD_CLI', '--dump writes one run: it cannot be combined with --seeds or --sweep', {
      details: { field: '--dump' },
    });
  }
  // Ctrl-C (handler installed by cli.ts): with --seeds or --sweep the seeds yield to the event loop
  // between them, so the handler runs after the current seed and says what was kept. A single seed
  // never yields until it ends: it runs through runBreakingOnInterrupt, which stops it at once.
  // Workers of a given --jobs start first: they load the experiment while this thread loads and
  // validates. By default they start later, if the seeds' pace shows they pay.
  let tasks = p.seeds.length * (p.sweep?.values.length ?? 1);
  // a shard runs its share only (round robin: src/cli/shard.ts)
  if (p.shard && p.shard !== 'auto') tasks = Math.ceil((tasks - p.shard.index + 1) / p.shard.count);
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
  const dir = outputDir(p, experiment.name);
  const { places, htmlPath } = runOutputPlaces(p, dir);
  if (p.dump !== null) places.push({ flag: '--dump', path: p.dump, kind: 'dir' });
  checkOutputPlaces(places);
  const dump = p.dump === null ? null : await tokenDumpSink(p, experiment);
  const lock = takeOutputDir(p, dir, places[0]?.flag as string);
  // lines about how the run went that are not results (e.g. a reused checkpoint), shown with the summary
  const info: string[] = [];
  try {
    let record: RunRecord | MultiSeedRecord;
    if (p.multi) {
      const elapsedMs = startStopwatch();
      const plan = planOf(p, experiment as Experiment, [config as Record<string, JsonValue>]);
      const result = await runCommandJobs(p, experiment as Experiment, plan, dir, pool, experiment.name);
      if (!result.runs) {
        output.write(`${shardDoneLine(result, dir, p.json)}\n`);
        return 0;
      }
      record = await summarizeSeedRuns(
        experiment as Experiment,
        config as Record<string, JsonValue>,
        result.runs,
        elapsedMs(),
        pool?.runner(experiment as Experiment),
      );
    } else {
      const progress = createProgress(experiment.name, p.progress);
      try {
        const seed = p.seeds[0] as number;
        record = await runBreakingOnInterrupt(() =>
          experiment.run(config, {
            seed,
            onProgress: (d, t) => progress.update(d, t),
            onInfo: (line) => info.push(line),
            ...(dump ? { onUpdateTokens: dump.write } : {}),
          }),
        );
        if (dump) info.push(dump.summary());
      } finally {
        progress.stop();
      }
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
      for (const line of info) process.stderr.write(`${line}\n`); // stdout stays one JSON document
    } else {
      const text = 'runs' in record ? formatMultiSeed(record) : await formatRecord(record);
      mark('formatted');
      output.write(`${text}\n\n${info.map((line) => `${line}\n`).join('')}record: ${path}\n`);
      output.write(htmlPath ? `report: ${htmlPath}\n` : `${plotHint(path, 'run')}\n`);
    }
    return 0;
  } finally {
    // Now, not only at exit: a library caller (a test) may run again in this process.
    lock?.release();
  }
}

/**
 * `--dump DIR`: writes each update's tokens as a complete prime-rl token-export step
 * (`DIR/<arm>/token_exports/step_<update>/rank_0.jsonl` + STABLE, src/report/primeRlTokenExport.ts),
 * so `labs audit DIR/<arm> --preset prime-rl` reads them. Refused (BAD_CLI) with `--seeds`/`--sweep`
 * and for an experiment that records no tokens; the directory is one of the output places checked
 * before anything runs; an existing step file is never overwritten (IO_ERROR from the writer).
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
      // for a Ctrl-C's line: each arm's directory once it holds a finished step (STABLE written)
      if (!arms.has(arm)) noteWritten(join(dir, arm));
      arms.add(arm);
      steps++;
    },
    summary: () =>
      `dump: ${steps} steps of ${arms.size} arms in ${dir}/<arm> (labs audit ${dir}/<arm> --preset prime-rl)`,
  };
}
