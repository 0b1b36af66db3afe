/**
 * `labs run --experiment NAME --sweep key=v1,v2,... [--seeds A..B]`: runs the sweep (experiments/
 * sweep.ts), writes the sweep record under runs/, prints the dose-response tables (or the record
 * with --json) and with --html draws the dose-response plots. With `--jobs` (`pool`) every
 * (value, seed) run is shared among the threads.
 */

import { join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { loadExperiment } from '../../experiments/registry.js';
import { startStopwatch } from '../../experiments/stopwatch.js';
import { assembleSweep, sweepConfigs } from '../../experiments/sweep.js';
import type { SweepSpec } from '../../experiments/sweepSpec.js';
import { makeDirs, toJson, writeFileAtomic } from '../../report/records.js';
import { formatSweep } from '../../report/summaries/sweep.js';
import { noteWritten } from '../interrupt.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { plotHint } from '../plotHint.js';
import type { SeedPool } from '../runtime/seedPool.js';
import { output } from '../stdout.js';
import { runOutputPlaces, takeOutputDir } from './runOutput.js';
import { outputDir, planOf, runCommandJobs, shardDoneLine } from './seedJobs.js';

export async function sweepCommand(
  p: Extract<ParsedCli, { command: 'run' }>,
  spec: SweepSpec,
  pool: SeedPool | null = null,
): Promise<number> {
  const experiment = await loadExperiment(p.experiment);
  const configs = sweepConfigs(experiment, p.sets, spec);
  const dir = outputDir(p, `${experiment.name}-sweep-${spec.key}`);
  const { places, htmlPath } = runOutputPlaces(p, dir);
  checkOutputPlaces(places);
  const lock = takeOutputDir(p, dir, places[0]?.flag as string);
  try {
    const elapsedMs = startStopwatch();
    const plan = planOf(p, experiment, configs);
    const label = `${experiment.name} --sweep ${spec.key}`;
    const result = await runCommandJobs(p, experiment, plan, dir, pool, label);
    if (!result.runs) {
      output.write(`${shardDoneLine(result, dir, p.json)}\n`);
      return 0;
    }
    const record = await assembleSweep(
      experiment,
      spec,
      p.seeds,
      configs,
      result.runs,
      elapsedMs(),
      pool?.runner(experiment),
    );
    const path = join(dir, 'record.json');
    try {
      makeDirs(dir);
      await writeFileAtomic(path, `${toJson(record)}\n`);
      noteWritten(path);
    } catch (e) {
      throw new LabError('IO_ERROR', `cannot write the sweep record ${path}: ${(e as Error).message}`, {
        cause: e,
        details: { file: path },
      });
    }
    if (htmlPath) {
      await (await import('../../report/sweepHtml.js')).writeSweepHtml(record, htmlPath, path);
      noteWritten(htmlPath);
    }
    if (p.json) {
      output.write(`${toJson(record)}\n`);
    } else {
      output.write(`${formatSweep(record)}\n\nrecord: ${path}\n`);
      output.write(htmlPath ? `report: ${htmlPath}\n` : `${plotHint(path, 'sweep')}\n`);
    }
    return 0;
  } finally {
    // Now, not only at exit: a library caller (a test) may run again in this process.
    lock?.release();
  }
}
