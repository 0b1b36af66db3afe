/**
 * `labs run --experiment NAME --sweep key=v1,v2,... [--seeds A..B]`: runs the sweep (experiments/
 * sweep.ts), writes the sweep record under runs/, prints the dose-response tables (or the record
 * with --json) and with --html draws the dose-response plots. With `--jobs` (`pool`) every
 * (value, seed) run is shared among the threads.
 */

import { join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { loadExperiment } from '../../experiments/registry.js';
import { runSweep } from '../../experiments/sweep.js';
import type { SweepSpec } from '../../experiments/sweepSpec.js';
import { makeDirs, runDirName, seedsDirLabel, toJson, writeFileAtomic } from '../../report/records.js';
import { formatSweep } from '../../report/summaries/sweep.js';
import { noteWritten } from '../interrupt.js';
import { lockOutputDir } from '../outputLock.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { createProgress } from '../progress.js';
import type { SeedPool } from '../seedPool.js';
import { output } from '../stdout.js';
import { runOutputPlaces } from './run.js';

export async function sweepCommand(
  p: Extract<ParsedCli, { command: 'run' }>,
  spec: SweepSpec,
  pool: SeedPool | null = null,
): Promise<number> {
  const experiment = await loadExperiment(p.experiment);
  const dir =
    p.out ??
    join('runs', runDirName(`${experiment.name}-sweep-${spec.key}`, seedsDirLabel(p.seeds), new Date()));
  const { places, htmlPath } = runOutputPlaces(p, dir);
  checkOutputPlaces(places);
  const lock = lockOutputDir(dir, { flag: places[0]?.flag as string, force: p.force });
  try {
    const progress = createProgress(
      `${experiment.name} ${spec.key} x${spec.values.length} x${p.seeds.length}`,
      p.progress,
    );
    let record: Awaited<ReturnType<typeof runSweep>>;
    try {
      record = await runSweep(
        experiment,
        p.sets,
        spec,
        p.seeds,
        (d, t) => progress.update(d, t),
        pool?.runner(experiment),
      );
    } finally {
      progress.stop();
    }
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
      if (htmlPath) output.write(`report: ${htmlPath}\n`);
    }
    return 0;
  } finally {
    // Now, not only at exit: a library caller (a test) may run again in this process.
    lock.release();
  }
}
