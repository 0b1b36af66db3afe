/**
 * Per-seed records of a multi-seed run or sweep, in its output directory, so that a run can be
 * interrupted and resumed, split into shards on several machines and merged (`labs run --seeds ...
 * --out DIR`, `--shard K/N`, `labs merge`):
 *
 *   DIR/plan.json                       what the command runs ({@link SeedPlan})
 *   DIR/seeds/<seed>.json               one RunRecord per seed (`--seeds`)
 *   DIR/seeds/<key>=<value>/<seed>.json one per sweep value x seed (`--sweep`)
 *   DIR/record.json                     the aggregate, written once every seed is in
 *
 * Every file is written atomically (temp file + rename, records.ts), so a seed's file is either
 * whole or absent, whatever interrupts the run. A record on disk is used again only if it is the
 * same experiment, version, seed and config as the task it stands for; anything else is a
 * BAD_SEED_RECORD error naming the file and the field, never a silently mixed or double-counted seed.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LabError } from '../core/errors.js';
import type { SeedTask } from '../experiments/multiSeed.js';
import type { JsonValue, RunRecord } from '../experiments/types.js';
import { fromJson, makeDirs, toJson, writeFileAtomicSync } from './records.js';

export const SEED_PLAN_FORMAT = 'labs-seed-plan/1';

/** `DIR/plan.json`: the job list of one `labs run --seeds/--sweep` command. */
export interface SeedPlan {
  format: typeof SEED_PLAN_FORMAT;
  experiment: string;
  version: string;
  seeds: number[];
  /** The swept option and its values, or null for a plain `--seeds` run. */
  sweep: { key: string; values: JsonValue[] } | null;
  /** Every effective option, one config per sweep value (one without a sweep). */
  configs: Record<string, JsonValue>[];
}

function fail(message: string, file: string, field: string, extra: Record<string, unknown> = {}): never {
  throw new LabError('BAD_SEED_RECORD', message, { details: { file, field, ...extra } });
}

/** A JSON value on one short line, for messages. */
function show(v: unknown): string {
  const text = v === undefined ? 'nothing' : toJson(v).replace(/\s*\n\s*/g, ' ');
  return text.length > 60 ? `${text.slice(0, 60)}...` : text;
}

/**
 * The job list of `plan`: every (value, seed) task, value-major, the order `runSweep` and `runSeeds`
 * run them in. Task `i` is what `--shard` assigns and what a per-seed file stands for.
 */
export function planTasks(plan: SeedPlan): SeedTask[] {
  return plan.configs.flatMap((config) => plan.seeds.map((seed) => ({ config, seed })));
}

/** A sweep value as a directory name: characters outside [A-Za-z0-9._-] percent-encoded. */
function valueLabel(value: JsonValue): string {
  return String(value).replace(
    /[^A-Za-z0-9._-]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
}

/** Where task `index` of `plan` keeps its record under `dir`. */
export function seedRecordPath(dir: string, plan: SeedPlan, index: number): string {
  const seed = plan.seeds[index % plan.seeds.length] as number;
  if (!plan.sweep) return join(dir, 'seeds', `${seed}.json`);
  const value = plan.sweep.values[Math.floor(index / plan.seeds.length)] as JsonValue;
  return join(dir, 'seeds', `${plan.sweep.key}=${valueLabel(value)}`, `${seed}.json`);
}

/** The first key whose value differs between two configs (JSON spelling), or null. */
export function differingOption(a: Record<string, JsonValue>, b: Record<string, JsonValue>): string | null {
  for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
    if (toJson(a[key]) !== toJson(b[key])) return key;
  }
  return null;
}

/** The path of the first place where two JSON values differ (`metrics.x`, `curves.y[3]`), or null. */
export function firstDifference(a: unknown, b: unknown, path = ''): string | null {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return Object.is(a, b) || toJson(a) === toJson(b) ? null : path || '(the whole record)';
  }
  if (Array.isArray(a) !== Array.isArray(b)) return path || '(the whole record)';
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const key of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
    const d = firstDifference(ra[key], rb[key], path ? `${path}.${key}` : key);
    if (d) return d;
  }
  return null;
}

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot read ${what} ${file}: ${(e as Error).message}`, {
      cause: e,
      details: { file },
    });
  }
  try {
    return fromJson(text);
  } catch (e) {
    return fail(
      `${file}: truncated or not JSON (${(e as Error).message}); delete it to run that ${what} again`,
      file,
      'json',
    );
  }
}

/**
 * Checks that `found` (read from `file`) is a plan for the same experiment, version, sweep and
 * configs as `plan` (and, with `sameSeeds`, the same seeds); else BAD_SEED_RECORD naming the field
 * (for a config, the option that differs).
 */
export function checkPlan(
  file: string,
  found: unknown,
  plan: SeedPlan,
  sameSeeds: boolean,
  against = "this command's",
): void {
  const f = found as Partial<SeedPlan> | null;
  if (typeof f !== 'object' || f === null || f.format !== SEED_PLAN_FORMAT || !Array.isArray(f.configs)) {
    fail(`${file}: not a plan of labs run --seeds (format ${show(f?.format)})`, file, 'format');
  }
  for (const field of ['experiment', 'version'] as const) {
    if (f[field] !== plan[field]) {
      fail(
        `${file}: ${field} is ${show(f[field])}, ${against} is ${show(plan[field])}; use another --out`,
        file,
        field,
      );
    }
  }
  if (toJson(f.sweep ?? null) !== toJson(plan.sweep)) {
    fail(
      `${file}: sweep is ${show(f.sweep ?? null)}, ${against} is ${show(plan.sweep)}; use another --out`,
      file,
      'sweep',
    );
  }
  for (const [i, config] of plan.configs.entries()) {
    const other = f.configs[i];
    const key = other === undefined ? '(config)' : differingOption(other, config);
    if (key) {
      fail(
        `${file}: option ${key} differs: run there with ${key}=${show(other?.[key])}, ${against} is ${key}=${show(config[key])}; use another --out or the same options`,
        file,
        key,
        { option: key },
      );
    }
  }
  if (sameSeeds && toJson(f.seeds) !== toJson(plan.seeds)) {
    fail(`${file}: seeds are ${show(f.seeds)}, ${against} are ${show(plan.seeds)}`, file, 'seeds');
  }
}

/**
 * The record of `task` read from `file`: whole JSON, a RunRecord of the plan's experiment and
 * version, the task's seed and config. Else BAD_SEED_RECORD naming the file and the field.
 */
export function readSeedRecord(file: string, plan: SeedPlan, task: SeedTask): RunRecord {
  const r = readJson(file, 'seed') as Partial<RunRecord> | null;
  if (typeof r !== 'object' || r === null || Array.isArray(r))
    fail(`${file}: not a RunRecord`, file, 'record');
  if (typeof r.metrics !== 'object' || r.metrics === null) {
    fail(`${file}: not a RunRecord (no "metrics" object)`, file, 'metrics');
  }
  for (const field of ['experiment', 'version', 'seed'] as const) {
    const want = field === 'seed' ? task.seed : plan[field];
    if (r[field] !== want) {
      fail(`${file}: ${field} is ${show(r[field])}, expected ${show(want)}`, file, field);
    }
  }
  const config = (typeof r.config === 'object' && r.config !== null ? r.config : {}) as Record<
    string,
    JsonValue
  >;
  const key = differingOption(config, task.config);
  if (key) {
    fail(
      `${file}: option ${key} differs: run with ${key}=${show(config[key])} where ${key}=${show(task.config[key])} is expected; use another --out or the same options`,
      file,
      key,
      { option: key },
    );
  }
  return r as RunRecord;
}

/** The per-seed records of one output directory, for a run that writes and resumes there. */
export interface SeedDir {
  dir: string;
  plan: SeedPlan;
  /** The job list ({@link planTasks}). */
  tasks: SeedTask[];
  /** Records already in the directory, by task index (checked against the task). */
  done: (RunRecord | undefined)[];
  /** Writes task `index`'s record (then the plan, after the first record), atomically, at once. */
  write(index: number, record: RunRecord): void;
  /** Writes the plan if no record has (a shard that had nothing to run still leaves its plan). */
  writePlan(): void;
}

/**
 * Opens `dir` for `plan`: a plan already there must be the same experiment, version, sweep and
 * configs (its seeds may differ: a run may be extended with more seeds), and every per-seed record
 * already there for a task of `indices` (default: every task) is read and checked. Creates nothing:
 * the directory appears with the first finished seed, so an interrupted run that finished none
 * leaves no empty directory behind.
 */
export function openSeedDir(dir: string, plan: SeedPlan, indices?: readonly number[]): SeedDir {
  const planFile = join(dir, 'plan.json');
  if (existsSync(planFile)) checkPlan(planFile, readJson(planFile, 'plan'), plan, false);
  const tasks = planTasks(plan);
  const done: (RunRecord | undefined)[] = new Array(tasks.length);
  for (const i of indices ?? tasks.keys()) {
    const file = seedRecordPath(dir, plan, i);
    if (existsSync(file)) done[i] = readSeedRecord(file, plan, tasks[i] as SeedTask);
  }
  let planWritten = false;
  const writePlan = () => {
    if (planWritten) return;
    makeDirs(dir); // one level at a time: a recursive mkdir loops on procfs
    writeFileAtomicSync(planFile, `${toJson(plan)}\n`);
    planWritten = true;
  };
  return {
    dir,
    plan,
    tasks,
    done,
    write(index, record) {
      const file = seedRecordPath(dir, plan, index);
      try {
        makeDirs(dirname(file));
        writeFileAtomicSync(file, `${toJson(record)}\n`);
        writePlan();
      } catch (e) {
        throw new LabError('IO_ERROR', `cannot write the seed record ${file}: ${(e as Error).message}`, {
          cause: e,
          details: { file },
        });
      }
    },
    writePlan() {
      try {
        writePlan();
      } catch (e) {
        throw new LabError('IO_ERROR', `cannot write ${planFile}: ${(e as Error).message}`, {
          cause: e,
          details: { file: planFile },
        });
      }
    },
  };
}

/** A record without its `timing` (the one field two runs of the same seed and config differ in). */
function withoutTiming(r: RunRecord): Omit<RunRecord, 'timing'> {
  const { timing: _timing, ...rest } = r;
  return rest;
}

/** What {@link collectSeedDirs} found: the plan and every task's record, in job-list order. */
export interface CollectedSeeds {
  plan: SeedPlan;
  runs: RunRecord[];
}

/**
 * Reads the per-seed records of one command from `dirs` (its shards' output directories, or one
 * shared directory): every directory's plan must be the same (the first differing field named),
 * every task needs a record in at least one directory (else BAD_SEED_RECORD listing the missing
 * seeds), and two copies of a seed must agree apart from `timing` (else both files and the first
 * differing field are named). Each seed is taken once.
 */
export function collectSeedDirs(dirs: readonly string[]): CollectedSeeds {
  let plan: SeedPlan | undefined;
  let first = '';
  for (const dir of dirs) {
    const file = join(dir, 'plan.json');
    if (!existsSync(file)) {
      fail(
        `${file}: missing; ${dir} is not the --out directory of a labs run --seeds/--sweep (or no seed of it has finished)`,
        file,
        'plan',
      );
    }
    const found = readJson(file, 'plan') as SeedPlan;
    if (plan) checkPlan(file, found, plan, true, `${first}'s`);
    else {
      checkPlan(file, found, found, true);
      [plan, first] = [found, file];
    }
  }
  if (!plan) throw new LabError('BAD_CLI', 'labs merge: no directory given', { details: { field: 'DIR' } });
  const tasks = planTasks(plan);
  const runs: RunRecord[] = [];
  const missing: string[] = [];
  for (const [i, task] of tasks.entries()) {
    let kept: { file: string; record: RunRecord } | undefined;
    for (const dir of dirs) {
      const file = seedRecordPath(dir, plan, i);
      if (!existsSync(file)) continue;
      const record = readSeedRecord(file, plan, task);
      if (!kept) kept = { file, record };
      else if (file !== kept.file) {
        const d = firstDifference(withoutTiming(kept.record), withoutTiming(record));
        if (d) {
          fail(
            `seed ${task.seed} has two different records: ${kept.file} and ${file} differ at ${d}`,
            file,
            d,
            { other: kept.file, seed: task.seed },
          );
        }
      }
    }
    if (kept) runs.push(kept.record);
    else {
      const value = plan.sweep ? ` at ${plan.sweep.key}=${show(task.config[plan.sweep.key])}` : '';
      missing.push(`seed ${task.seed}${value}`);
    }
  }
  if (missing.length > 0) {
    const where = dirs.map((d) => join(d, 'seeds')).join(', ');
    fail(
      `${missing.length} of ${tasks.length} seed runs have no record in ${where}: ${missing.join(', ')}; run the missing shards (or the same labs run command) first`,
      where,
      'seeds',
      { missing },
    );
  }
  return { plan, runs };
}
