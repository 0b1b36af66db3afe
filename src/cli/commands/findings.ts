/**
 * `labs findings NAME [--out DIR] [--seeds A..B] [--set k=v]... [--jobs N] [--shard K/N|auto]`: the
 * runs of a findings manifest (src/experiments/findings.ts, `docs/findings/NAME.json`), each a
 * `labs run --seeds` job list in `DIR/<run>/` (per-seed records, resumed like `labs run`:
 * seedJobs.ts), then every run's record and the manifest's comparisons between runs, paired by seed
 * (`labs compare`), in `DIR/findings.json`.
 *
 * Every run's options and every record already on disk are checked before anything runs. With
 * `--shard K/N` the jobs of all runs form one list (run after run, in manifest order) of which this
 * process runs its round-robin share and writes no record; once every shard is done, the same
 * command without `--shard` finds every seed on disk and only builds the records and comparisons.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isLabError, LabError } from '../../core/errors.js';
import { type CompareResult, compareRecords } from '../../experiments/compareRecords.js';
import { parseFindings, runSets } from '../../experiments/findings.js';
import { summarizeSeedRuns } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { loadExperiment } from '../../experiments/registry.js';
import { startStopwatch } from '../../experiments/stopwatch.js';
import { assembleSweep, sweepConfigs } from '../../experiments/sweep.js';
import { parseSweep } from '../../experiments/sweepSpec.js';
import type { Experiment, JsonValue, MultiSeedRecord } from '../../experiments/types.js';
import { VERSION } from '../../experiments/version.js';
import { formatCompare } from '../../report/compareOutput.js';
import { toJson, writeFileAtomic, writeRecord } from '../../report/records.js';
import { openSeedDir, SEED_PLAN_FORMAT, type SeedDir, type SeedPlan } from '../../report/seedRecords.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import { type ParsedCli, parseSeeds } from '../parse.js';
import { openSeedPool } from '../runtime/seedPool.js';
import { output } from '../stdout.js';
import { runJobList, shardJobs, shardOf } from './seedJobs.js';

type FindingsCli = Extract<ParsedCli, { command: 'findings' }>;

/** `NAME` is docs/findings/NAME.json; anything with a `/` or ending in `.json` is a file. */
export function manifestPath(name: string): string {
  return name.includes('/') || name.endsWith('.json') ? name : join('docs', 'findings', `${name}.json`);
}

function readManifest(file: string): unknown {
  if (!existsSync(file)) {
    throw new LabError('BAD_CLI', `findings: no manifest ${file}`, { details: { file } });
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new LabError('BAD_CLI', `${file}: not valid JSON (${(e as Error).message})`, {
      cause: e,
      details: { file },
    });
  }
}

/** `e` with the manifest file and run named (an option of run 2 that its experiment refuses). */
function inRun(e: unknown, file: string, index: number, name: string): unknown {
  if (!isLabError(e)) return e;
  return new LabError(e.code, `${file}: runs[${index}] (${name}): ${e.message}`, {
    cause: e,
    details: { ...e.details, file, run: name },
  });
}

interface PreparedRun {
  name: string;
  experiment: Experiment;
  sweepKey: string | null;
  plan: SeedPlan;
  store: SeedDir;
  mine: number[];
}

/**
 * `labs findings MANIFEST`. Why one function: its phases run in order and each hands its state to
 * the next: read the manifest; prepare every run and check its options and records on disk before
 * anything runs; run or skip each; for a shard, stop there; compare; write findings.json; print.
 */
export async function findingsCommand(p: FindingsCli): Promise<number> {
  const file = manifestPath(p.manifest);
  const manifest = parseFindings(readManifest(file), file);
  const name = basename(file, '.json');
  const out = p.out ?? join('runs', 'findings', name);
  checkOutputPlaces([
    { flag: p.out ? '--out' : 'output directory (default; change with --out)', path: out, kind: 'dir' },
  ]);
  let seeds: number[];
  try {
    seeds = p.seeds ?? parseSeeds(manifest.seeds);
  } catch (e) {
    throw new LabError('BAD_CLI', `${file}: seeds: ${(e as Error).message}`, {
      cause: e,
      details: { file, field: 'seeds' },
    });
  }
  const shard = shardOf(p);

  // Every run's options and every record on disk, checked before anything runs.
  const runs: PreparedRun[] = [];
  let offset = 0;
  for (const [i, run] of manifest.runs.entries()) {
    try {
      const experiment = await loadExperiment(run.experiment);
      const sets = runSets(run, p.sets);
      const spec = run.sweep ? parseSweep(run.sweep) : null;
      const configs = spec
        ? sweepConfigs(experiment, sets, spec)
        : [resolveConfig(experiment, sets) as Record<string, JsonValue>];
      const plan: SeedPlan = {
        format: SEED_PLAN_FORMAT,
        experiment: experiment.name,
        version: VERSION,
        seeds,
        sweep: spec ? { key: spec.key, values: configs.map((c) => c[spec.key] as JsonValue) } : null,
        configs,
      };
      const total = configs.length * seeds.length;
      const mine = shardJobs(total, shard, offset);
      offset += total;
      const store = openSeedDir(join(out, run.name), plan, mine);
      runs.push({ name: run.name, experiment, sweepKey: spec?.key ?? null, plan, store, mine });
    } catch (e) {
      throw inRun(e, file, i, run.name);
    }
  }

  let ran = 0;
  let skipped = 0;
  const records = new Map<string, { record: MultiSeedRecord | null; path: string }>();
  for (const run of runs) {
    const elapsedMs = startStopwatch();
    const todo = run.mine.filter((i) => !run.store.done[i]).length;
    const pool = openSeedPool(run.experiment.name, p.jobs, todo, p.jobsGiven);
    try {
      const result = await runJobList({
        experiment: run.experiment,
        store: run.store,
        mine: run.mine,
        shard,
        pool,
        label: `${name}/${run.name}`,
        progress: p.progress,
      });
      ran += result.ran;
      skipped += result.skipped;
      if (!result.runs) continue;
      const runner = pool?.runner(run.experiment);
      const record = run.sweepKey
        ? await assembleSweep(
            run.experiment,
            { key: run.sweepKey },
            seeds,
            run.plan.configs,
            result.runs,
            elapsedMs(),
            runner,
          )
        : await summarizeSeedRuns(
            run.experiment,
            run.plan.configs[0] as Record<string, JsonValue>,
            result.runs,
            elapsedMs(),
            runner,
          );
      // writeRecord writes any record into `dir` as record.json (a sweep record too)
      const path = await writeRecord(record as MultiSeedRecord, { dir: run.store.dir });
      records.set(run.name, { record: run.sweepKey ? null : (record as MultiSeedRecord), path });
    } finally {
      await pool?.close();
    }
  }
  if (shard) {
    const line = `findings ${name} shard ${shard.index}/${shard.count}: ran ${ran} seed runs, skipped ${skipped} already in ${out}; once every shard has finished, the same command without --shard builds the records and comparisons`;
    output.write(
      p.json ? `${toJson({ shard: `${shard.index}/${shard.count}`, ran, skipped, out })}\n` : `${line}\n`,
    );
    return 0;
  }

  const comparisons: CompareResult[] = manifest.comparisons.map((c) => {
    const side = (runName: string) => {
      const r = records.get(runName) as { record: MultiSeedRecord; path: string };
      return { record: r.record, source: r.path, label: runName };
    };
    const a = side(c.a);
    const b = side(c.b);
    const experiment = runs.find((r) => r.name === c.a)?.experiment;
    const plan =
      a.record.experiment === b.record.experiment
        ? (experiment?.comparisons?.(a.record.config) ?? null)
        : null;
    return compareRecords(a, b, c.metrics, plan);
  });
  const result = {
    format: 'labs-findings-result/1',
    manifest: file,
    title: manifest.title,
    ...(manifest.doc ? { doc: manifest.doc } : {}),
    seeds,
    version: VERSION,
    runs: runs.map((r) => ({
      name: r.name,
      experiment: r.experiment.name,
      record: records.get(r.name)?.path,
    })),
    comparisons,
  };
  const path = join(out, 'findings.json');
  try {
    await writeFileAtomic(path, `${toJson(result)}\n`);
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write ${path}: ${(e as Error).message}`, {
      cause: e,
      details: { file: path },
    });
  }
  if (p.json) output.write(`${toJson(result)}\n`);
  else {
    const parts = [
      `${manifest.title} (${seeds.length} seeds; ran ${ran} seed runs, ${skipped} already on disk)`,
      ...runs.map((r) => `  ${r.name}: ${records.get(r.name)?.path}`),
      ...comparisons.map((c) => `\n${formatCompare(c)}`),
      `\nfindings: ${path}`,
    ];
    output.write(`${parts.join('\n')}\n`);
  }
  return 0;
}
