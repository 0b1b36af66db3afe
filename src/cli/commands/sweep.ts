/**
 * `labs run --experiment NAME --sweep key=v1,v2,... [--seeds A..B]`: runs the sweep (experiments/
 * sweep.ts), writes the sweep record under runs/, prints the dose-response tables (or the record
 * with --json) and with --html draws the dose-response plots. With `--jobs` (`pool`) every
 * (value, seed) run is shared among the threads.
 */

import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { loadExperiment } from '../../experiments/registry.js';
import { runSweep } from '../../experiments/sweep.js';
import type { SweepSpec } from '../../experiments/sweepSpec.js';
import { runDirName, seedsDirLabel, toJson, writeFileAtomic } from '../../report/records.js';
import { formatSweep } from '../../report/summaries/sweep.js';
import type { ParsedCli } from '../parse.js';
import { plotHint } from '../plotHint.js';
import { createProgress } from '../progress.js';
import type { SeedPool } from '../seedPool.js';
import { output } from '../stdout.js';
import { checkWritableDir } from './run.js';

export async function sweepCommand(
  p: Extract<ParsedCli, { command: 'run' }>,
  spec: SweepSpec,
  pool: SeedPool | null = null,
): Promise<number> {
  const experiment = await loadExperiment(p.experiment);
  const dir =
    p.out ??
    join('runs', runDirName(`${experiment.name}-sweep-${spec.key}`, seedsDirLabel(p.seeds), new Date()));
  await checkWritableDir(dir, p.out ? '--out' : 'output directory (default; change with --out)');
  if (p.html) await checkWritableDir(dirname(p.html), '--html');
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
    await mkdir(dir, { recursive: true });
    await writeFileAtomic(path, `${toJson(record)}\n`);
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write the sweep record ${path}: ${(e as Error).message}`, {
      cause: e,
      details: { file: path },
    });
  }
  const htmlPath = p.html === '' ? join(dir, 'report.html') : p.html;
  if (htmlPath) await (await import('../../report/sweepHtml.js')).writeSweepHtml(record, htmlPath, path);
  if (p.json) {
    output.write(`${toJson(record)}\n`);
  } else {
    output.write(`${formatSweep(record)}\n\nrecord: ${path}\n`);
    output.write(htmlPath ? `report: ${htmlPath}\n` : `${plotHint(path, 'sweep')}\n`);
  }
  return 0;
}
