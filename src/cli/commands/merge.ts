/**
 * `labs merge DIR... --out D [--json]`: the multi-seed record (or sweep record) of one `labs run
 * --seeds/--sweep` command from the per-seed records its shards wrote (src/report/seedRecords.ts),
 * with the same summaries, bands, paired comparisons and Holm adjustment as a one-process run of
 * the same seeds: the same record apart from `timing`, where `wall_ms` is the sum of the runs' own.
 * Missing seeds, plans that disagree and two different copies of a seed are BAD_SEED_RECORD errors
 * naming the file and the field; a seed present in several directories is taken once.
 */
import { summarizeSeedRuns } from '../../experiments/multiSeed.js';
import { loadExperiment } from '../../experiments/registry.js';
import { assembleSweep, type SweepRecord } from '../../experiments/sweep.js';
import type { MultiSeedRecord } from '../../experiments/types.js';
import { toJson, writeRecord } from '../../report/records.js';
import { collectSeedDirs } from '../../report/seedRecords.js';
import { formatMultiSeed } from '../../report/summaries/index.js';
import { formatSweep } from '../../report/summaries/sweep.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';

export async function mergeCommand(p: Extract<ParsedCli, { command: 'merge' }>): Promise<number> {
  checkOutputPlaces([{ flag: '--out', path: p.out, kind: 'dir', files: ['record.json'] }], [], {
    consequence: 'nothing was merged',
  });
  const { plan, runs } = collectSeedDirs(p.dirs);
  const experiment = await loadExperiment(plan.experiment);
  const wallMs = runs.reduce((sum, r) => sum + r.timing.wall_ms, 0);
  let text: string;
  let record: MultiSeedRecord | SweepRecord;
  if (plan.sweep) {
    const sweep = await assembleSweep(experiment, plan.sweep, plan.seeds, plan.configs, runs, wallMs);
    [record, text] = [sweep, formatSweep(sweep)];
  } else {
    const multi = await summarizeSeedRuns(experiment, plan.configs[0] ?? {}, runs, wallMs);
    [record, text] = [multi, formatMultiSeed(multi)];
  }
  // writeRecord writes any record into `dir` as record.json (a sweep record too)
  const path = await writeRecord(record as MultiSeedRecord, { dir: p.out });
  if (p.json) output.write(`${toJson(record)}\n`);
  else
    output.write(`${text}\n\nmerged ${runs.length} seed runs from ${p.dirs.join(', ')}\nrecord: ${path}\n`);
  return 0;
}
