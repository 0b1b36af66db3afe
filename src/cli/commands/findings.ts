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
import {
  checkPhaseSeeds,
  type FindingsRun,
  type FindingsV2,
  isFindingsV2,
  parseFindings,
  runSets,
} from '../../experiments/findings.js';
import { evaluateClaims, PHASES, type Phase, type PhaseRuns } from '../../experiments/findingsClaims.js';
import { evaluateGoals } from '../../experiments/findingsGoals.js';
import { evaluateTables } from '../../experiments/findingsTables.js';
import { summarizeSeedRuns } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { loadExperiment } from '../../experiments/registry.js';
import { startStopwatch } from '../../experiments/stopwatch.js';
import { assembleSweep, sweepConfigs } from '../../experiments/sweep.js';
import { parseSweep } from '../../experiments/sweepSpec.js';
import type { Experiment, JsonValue, MultiSeedRecord, RunRecord } from '../../experiments/types.js';
import { VERSION } from '../../experiments/version.js';
import { formatCompare } from '../../report/compareOutput.js';
import { findingsResults, formatClaims, renderFindingsGoals } from '../../report/findingsResults.js';
import { toJson, writeFileAtomic, writeRecord } from '../../report/records.js';
import { openSeedDir, SEED_PLAN_FORMAT, type SeedDir, type SeedPlan } from '../../report/seedRecords.js';
import { checkOutputPlaces } from '../outputPlaces.js';
import { type ParsedCli, parseSeeds } from '../parse.js';
import { openSeedPool } from '../runtime/seedPool.js';
import type { Shard } from '../shard.js';
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
 * Every run of `runs` on `seeds` under `dir/<run>/`, its options and every record already on disk
 * checked before anything runs; `offset` is where its jobs start in the list a shard splits, and
 * `all` makes every job this process's (a seed set that is only read, not run).
 */
async function prepareRuns(
  runs: readonly FindingsRun[],
  seeds: number[],
  dir: string,
  sets: readonly string[],
  file: string,
  shard: Shard | null,
  offset: number,
): Promise<{ prepared: PreparedRun[]; offset: number }> {
  const prepared: PreparedRun[] = [];
  let at = offset;
  for (const [i, run] of runs.entries()) {
    try {
      const experiment = await loadExperiment(run.experiment);
      const runSetList = runSets(run, sets);
      const spec = run.sweep ? parseSweep(run.sweep) : null;
      const configs = spec
        ? sweepConfigs(experiment, runSetList, spec)
        : [resolveConfig(experiment, runSetList) as Record<string, JsonValue>];
      const plan: SeedPlan = {
        format: SEED_PLAN_FORMAT,
        experiment: experiment.name,
        version: VERSION,
        seeds,
        sweep: spec ? { key: spec.key, values: configs.map((c) => c[spec.key] as JsonValue) } : null,
        configs,
      };
      const total = configs.length * seeds.length;
      const mine = shardJobs(total, shard, at);
      at += total;
      const store = openSeedDir(join(dir, run.name), plan, mine);
      prepared.push({ name: run.name, experiment, sweepKey: spec?.key ?? null, plan, store, mine });
    } catch (e) {
      throw inRun(e, file, i, run.name);
    }
  }
  return { prepared, offset: at };
}

/** What {@link runPrepared} did: each run's record (and its per-seed records), and the counts. */
interface RanRuns {
  records: Map<string, { record: MultiSeedRecord | null; path: string; seedRuns: RunRecord[] }>;
  ran: number;
  skipped: number;
}

/** Runs what is missing of `runs` and, unless a shard, writes each run's record into its directory. */
async function runPrepared(
  runs: readonly PreparedRun[],
  p: FindingsCli,
  shard: Shard | null,
  label: string,
): Promise<RanRuns> {
  let ran = 0;
  let skipped = 0;
  const records: RanRuns['records'] = new Map();
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
        label: `${label}/${run.name}`,
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
            run.plan.seeds,
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
      records.set(run.name, {
        record: run.sweepKey ? null : (record as MultiSeedRecord),
        path,
        seedRuns: result.runs,
      });
    } finally {
      await pool?.close();
    }
  }
  return { records, ran, skipped };
}

/** The seeds of `field` (`A..B` or a comma list, as `--seeds`), or BAD_CLI naming the file and field. */
function manifestSeeds(text: string, file: string, field: string): number[] {
  try {
    return parseSeeds(text);
  } catch (e) {
    throw new LabError('BAD_CLI', `${file}: ${field}: ${(e as Error).message}`, {
      cause: e,
      details: { file, field },
    });
  }
}

async function writeJson(path: string, value: unknown): Promise<void> {
  try {
    await writeFileAtomic(path, `${toJson(value)}\n`);
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot write ${path}: ${(e as Error).message}`, {
      cause: e,
      details: { file: path },
    });
  }
}

/**
 * `labs findings MANIFEST` for a format-1 manifest: run what is missing; for a shard, stop there;
 * build each run's record and the manifest's comparisons; write findings.json; print.
 */
export async function findingsCommand(p: FindingsCli): Promise<number> {
  const file = manifestPath(p.manifest);
  const manifest = parseFindings(readManifest(file), file);
  if (isFindingsV2(manifest)) return findingsV2Command(p, file, manifest);
  if (p.phase || p.results) {
    throw new LabError(
      'BAD_CLI',
      `${p.phase ? '--phase' : '--results'}: ${file} is a format-1 manifest (one seed set, no claims); --phase and --results apply to format 2 (labs-findings/2: discovery and confirmation seeds)`,
      { details: { file, field: p.phase ? '--phase' : '--results' } },
    );
  }
  const name = basename(file, '.json');
  const out = p.out ?? join('runs', 'findings', name);
  checkOutputPlaces([
    { flag: p.out ? '--out' : 'output directory (default; change with --out)', path: out, kind: 'dir' },
  ]);
  const seeds = p.seeds ?? manifestSeeds(manifest.seeds, file, 'seeds');
  const shard = shardOf(p);
  const { prepared: runs } = await prepareRuns(manifest.runs, seeds, out, p.sets, file, shard, 0);
  const { records, ran, skipped } = await runPrepared(runs, p, shard, name);
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
  await writeJson(path, result);
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

/** Where `labs findings` writes a format-2 manifest's results: `NAME.results.json` beside it. */
export function resultsPath(manifestFile: string): string {
  return manifestFile.replace(/(\.json)?$/, '.results.json');
}

/**
 * `labs findings MANIFEST` for a format-2 manifest: the runs on the discovery seeds under
 * `DIR/discovery/<run>/` and on the confirmation seeds under `DIR/confirmation/<run>/` (or one
 * set, `--phase`), resumable and shardable as format 1 (one job list over the sets run); then,
 * unless a shard, every claim on every seed set whose records are all on disk, written to the
 * results file (`NAME.results.json` beside the manifest, or `--results FILE`) and printed.
 */
async function findingsV2Command(p: FindingsCli, file: string, m: FindingsV2): Promise<number> {
  if (p.seeds || p.sets.length) {
    throw new LabError(
      'BAD_CLI',
      `${p.seeds ? '--seeds' : '--set'}: ${file} is a format-2 manifest: its seeds (discovery, confirmation) and options (runs[].set) are declared in it, so that its results file says what was run; edit or copy the manifest instead`,
      { details: { file, field: p.seeds ? '--seeds' : '--set' } },
    );
  }
  const name = basename(file, '.json');
  const out = p.out ?? join('runs', 'findings', name);
  const results = p.results ?? resultsPath(file);
  checkOutputPlaces([
    { flag: p.out ? '--out' : 'output directory (default; change with --out)', path: out, kind: 'dir' },
    {
      flag: p.results ? '--results' : 'results file (default; change with --results)',
      path: results,
      kind: 'file',
    },
  ]);
  const seeds = {
    discovery: manifestSeeds(m.discovery, file, 'discovery'),
    confirmation: manifestSeeds(m.confirmation, file, 'confirmation'),
  };
  checkPhaseSeeds(seeds.discovery, seeds.confirmation, file);
  const shard = shardOf(p);
  const running = p.phase ? [p.phase] : [...PHASES];
  // Every seed set is opened (and its records on disk checked) before anything runs; only the
  // sets run form the job list a shard splits.
  const prepared = {} as Record<Phase, PreparedRun[]>;
  let offset = 0;
  for (const phase of PHASES) {
    const runsHere = running.includes(phase);
    const r = await prepareRuns(
      m.runs,
      seeds[phase],
      join(out, phase),
      [],
      file,
      runsHere ? shard : null,
      offset,
    );
    prepared[phase] = r.prepared;
    if (runsHere) offset = r.offset;
  }
  let ran = 0;
  let skipped = 0;
  const phaseRuns: PhaseRuns = { discovery: null, confirmation: null };
  for (const phase of PHASES) {
    if (running.includes(phase)) {
      const r = await runPrepared(prepared[phase], p, shard, `${name}/${phase}`);
      ran += r.ran;
      skipped += r.skipped;
      if (!shard) phaseRuns[phase] = new Map([...r.records].map(([k, v]) => [k, v.seedRuns]));
    } else if (
      // done is sparse (a hole per missing seed): every() would skip the holes
      prepared[phase].every((run) => run.store.done.filter(Boolean).length === run.store.tasks.length)
    ) {
      phaseRuns[phase] = new Map(prepared[phase].map((run) => [run.name, run.store.done as RunRecord[]]));
    }
  }
  if (shard) {
    const line = `findings ${name} shard ${shard.index}/${shard.count}: ran ${ran} seed runs, skipped ${skipped} already in ${out}; once every shard has finished, the same command without --shard builds the records and the claims`;
    output.write(
      p.json ? `${toJson({ shard: `${shard.index}/${shard.count}`, ran, skipped, out })}\n` : `${line}\n`,
    );
    return 0;
  }
  const claims = evaluateClaims(m.claims, phaseRuns);
  const goals = evaluateGoals(m.goals, phaseRuns);
  const result = findingsResults(m, file, name, seeds, claims, evaluateTables(m.tables, phaseRuns), goals);
  await writeJson(results, result);
  if (p.json) output.write(`${toJson(result)}\n`);
  else {
    output.write(
      `${m.title} (discovery ${m.discovery}, confirmation ${m.confirmation}; ran ${ran} seed runs, ${skipped} already on disk)\n\n${formatClaims(claims)}\n${goals.length ? `\n${renderFindingsGoals(result)}\n` : ''}\nresults: ${results}\n`,
    );
  }
  return 0;
}
