/**
 * `labs audit`: the course's diagnostics over a real run's rollout dumps. Reads the dump through
 * DuckDB (reader.ts), streams the rows group by group into the core group classification
 * (aggregate.ts), and returns a RunRecord (experiment `audit`) so `--json`, `--out` and
 * `labs report` treat it like any run.
 *
 * Definitions (also in docs/cli.md, "labs audit"):
 *  - group = (step, group label); zero-variance group = >= 2 members, all rewards equal
 *    (all_wrong <= fail value, all_right >= pass value, all_equal_other in between); singletons apart;
 *    zero_variance_group_fraction = zero-variance groups / all groups (singletons included).
 *  - correct sample = reward >= pass value; a task is always solved (every sample correct), never
 *    solved (no sample correct) or sometimes solved; its wasted samples sit in zero-variance groups.
 *  - token denominators: see aggregate.ts (`tokenDenominators`), with the whole dump as one batch in
 *    `metrics.denominators` and per step in `tables.steps`.
 */
import type { LossAggMode } from '../core/aggLoss.js';
import { LabError } from '../core/errors.js';
import type { JsonValue, RunRecord } from '../experiments/types.js';
import { VERSION } from '../experiments/version.js';
import {
  type AuditAggregate,
  type KindCounts,
  type TaskStats,
  tokenDenominators,
  zeroVariance,
} from './aggregate.js';
import { openDuckSession } from './duckdb.js';
import { groupStats } from './groupStats.js';
import { type LengthByCorrectness, lengthByCorrectness, rewardDistribution } from './histogram.js';
import { addLogAudit, LOG_AUDIT_DEFAULTS, type LogAuditOptions } from './metricsLog/auditExtension.js';
import { type AuditPresetName, auditPreset, resolveColumns } from './presets.js';
import { rankerAudit } from './rankerAudit.js';
import { formatBadRows, type LoadedDump, listDumpFiles, loadDump } from './reader.js';
import {
  checkZeroStdTol,
  policiesLine,
  policiesRecord,
  zeroVariancePolicies,
} from './zeroVariancePolicies.js';

export interface AuditOptions {
  preset: AuditPresetName;
  /** `--col-<name> SOURCE` overrides, keyed by canonical column name. */
  columns: Record<string, string>;
  /** `--reward COL`: one column as the reward (TRL: instead of the sum of reward columns). */
  reward: string | null;
  skipBadRows: boolean;
  /** An all-equal group at or below this reward is all_wrong. Default 0. */
  failValue: number;
  /** An all-equal group at or above it is all_right; a sample at or above it is correct. Default 1. */
  passValue: number;
  /**
   * Contiguous-group presets (trl): rows per group (TRL's `num_generations`); null infers it from the
   * runs of equal prompts. Refused for presets that group by label.
   */
  groupSize: number | null;
  /** TRL's `reward_weights`, one per reward column in the order of `config.reward_columns`; null: all 1. */
  rewardWeights: number[] | null;
  /** TRL's `scale_rewards` for the recomputed advantage: 'group' (default), 'batch' or 'none'. */
  scaleRewards: 'group' | 'batch' | 'none';
  /**
   * `--zero-std-tol X` (>= 0): also count the groups that are zero-variance up to X (population std
   * <= X, and max − min <= X, side by side with exact equality). Null: exact equality only.
   */
  zeroStdTol: number | null;
  /**
   * The ranker audit: `quality` (the score a redistribution would rank by) and `independent` (an
   * independent quality measure), columns of the dump; both or neither. See rankerAudit.ts.
   */
  rankColumns: { quality: string; independent: string } | null;
  /** DuckDB memory limit (e.g. '2GB'); default DuckDB's. */
  memoryLimit?: string;
  /** `--metrics PATH` and the run settings the dump lacks (src/audit/metricsLog/auditExtension.ts). */
  lengthAnatomy: LogAuditOptions['lengthAnatomy'];
  metricsLog: LogAuditOptions['metricsLog'];
  maxResponseLength: LogAuditOptions['maxResponseLength'];
  maxCompletionLength: LogAuditOptions['maxCompletionLength'];
  onProgress?: (done: number, total: number) => void;
}

export const AUDIT_DEFAULTS = Object.freeze({
  preset: 'generic',
  columns: Object.freeze({}),
  reward: null,
  skipBadRows: false,
  failValue: 0,
  passValue: 1,
  groupSize: null,
  rewardWeights: null,
  scaleRewards: 'group',
  zeroStdTol: null,
  rankColumns: null,
  ...LOG_AUDIT_DEFAULTS,
} as const satisfies Partial<AuditOptions>);

function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

/** Runs the audit of `path` and returns its record. Errors are LabErrors naming file and line/row. */
export async function runAudit(path: string, options: Partial<AuditOptions> = {}): Promise<RunRecord> {
  const started = performance.now();
  const opts: AuditOptions = { ...AUDIT_DEFAULTS, ...options };
  const preset = auditPreset(opts.preset);
  const mapping = resolveColumns(preset, opts.columns, opts.reward);
  checkThresholds(opts.passValue, opts.failValue);
  checkTrlOptions(opts, preset.grouping);
  checkZeroStdTol(opts.zeroStdTol);
  const dump = await listDumpFiles(path, preset);
  const db = await openDuckSession(opts.memoryLimit === undefined ? {} : { memoryLimit: opts.memoryLimit });
  try {
    const loaded = await loadDump(db, dump, preset, mapping, {
      skipBadRows: opts.skipBadRows,
      grouping:
        preset.grouping === 'label' ? { kind: 'label' } : { kind: 'contiguous', size: opts.groupSize },
      rewardWeights: opts.rewardWeights,
      passValue: opts.passValue,
      keepAdvantages: preset.recompute !== null,
      rankColumns: opts.rankColumns,
      keepRewardLists: opts.zeroStdTol !== null,
    });
    const recompute = preset.recompute !== null && loaded.columns.advantage !== undefined;
    const agg = await groupStats(db, {
      failValue: opts.failValue,
      passValue: opts.passValue,
      recompute: recompute ? { scaleRewards: opts.scaleRewards, tolerance: 1e-3 } : null,
      onePartPerGroup: loaded.onePartPerGroup,
      rewardLists: loaded.rewardLists,
    });
    const policies = await zeroVariancePolicies(db, opts.zeroStdTol, loaded.lengthUnit === 'tokens');
    opts.onProgress?.(loaded.rowsKept, loaded.rowsKept);
    const taskText = agg.taskText ?? new Map<number, string>();
    const rewardDist = await rewardDistribution(db);
    const lengths = await lengthByCorrectness(db, opts.passValue);
    const record = buildRecord(
      path,
      opts,
      loaded,
      agg,
      taskText,
      rewardDist,
      lengths,
      performance.now() - started,
    );
    const p = policiesRecord(policies);
    Object.assign(record.metrics, p.metrics);
    record.tables.zero_variance_rules = p.table;
    record.notes = [...(record.notes ?? []), policiesLine(policies)];
    if (policies.statement) record.notes.push(policies.statement);
    if (opts.rankColumns) {
      const ranker = await rankerAudit(db, opts.rankColumns);
      Object.assign(record.metrics, ranker.metrics);
      record.tables.ranker_per_step = ranker.perStep;
      record.tables.ranker_per_task = ranker.perTask;
      record.notes = [...(record.notes ?? []), ...ranker.notes];
    }
    await addLogAudit(record, db, loaded, opts);
    return record;
  } finally {
    db.close();
  }
}

/**
 * The thresholds: finite, and pass > fail. With pass < fail every all-right group would be counted
 * all_wrong (the all_wrong test comes first); with pass == fail an all-equal group at that value would
 * be all_wrong while each of its samples counts as correct (reward >= pass). Neither is meaningful.
 */
export function checkThresholds(passValue: number, failValue: number): void {
  for (const [field, v] of [
    ['passValue', passValue],
    ['failValue', failValue],
  ] as const) {
    if (!Number.isFinite(v)) {
      throw new LabError('BAD_ARGUMENT', `${field}: expected a finite number, got ${v}`, {
        details: { field, value: v },
      });
    }
  }
  if (!(passValue > failValue)) {
    throw new LabError(
      'BAD_ARGUMENT',
      `passValue ${passValue} must be greater than failValue ${failValue}: an all-equal group at or above the pass value is all_right, at or below the fail value all_wrong`,
      { details: { field: 'passValue', passValue, failValue } },
    );
  }
}

/** The TRL options: a group size >= 2 only where groups are contiguous, finite weights, a known scaling. */
function checkTrlOptions(opts: AuditOptions, grouping: 'label' | 'contiguous'): void {
  if (opts.groupSize !== null) {
    if (grouping !== 'contiguous') {
      throw new LabError(
        'BAD_ARGUMENT',
        `--group-size: preset '${opts.preset}' groups rows by (step, group label); the group size applies to contiguous groups (--preset trl)`,
        { details: { field: '--group-size' } },
      );
    }
    if (!Number.isInteger(opts.groupSize) || opts.groupSize < 2) {
      throw new LabError('BAD_ARGUMENT', `--group-size: expected an integer >= 2, got ${opts.groupSize}`, {
        details: { field: '--group-size' },
      });
    }
  }
  if (opts.rewardWeights !== null && !opts.rewardWeights.every((w) => Number.isFinite(w))) {
    throw new LabError(
      'BAD_ARGUMENT',
      `--reward-weights: expected finite numbers, got ${opts.rewardWeights.join(',')}`,
      {
        details: { field: '--reward-weights' },
      },
    );
  }
  if (!['group', 'batch', 'none'].includes(opts.scaleRewards)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `--scale-rewards: unknown '${opts.scaleRewards}' (expected group, batch or none)`,
      {
        details: { field: '--scale-rewards' },
      },
    );
  }
}

function solveStatus(t: TaskStats): 'always solved' | 'never solved' | 'sometimes solved' {
  if (t.correct === t.samples) return 'always solved';
  if (t.correct === 0) return 'never solved';
  return 'sometimes solved';
}

function kindMetrics(k: KindCounts): Record<string, number> {
  const zv = zeroVariance(k);
  return {
    groups: k.groups,
    all_wrong_groups: k.all_wrong,
    all_right_groups: k.all_right,
    all_equal_other_groups: k.all_equal_other,
    mixed_groups: k.mixed,
    singleton_groups: k.singleton,
    zero_variance_groups: zv,
    zero_variance_group_fraction: ratio(zv, k.groups),
    zero_variance_fraction_of_multi_member_groups: ratio(zv, k.groups - k.singleton),
  };
}

function halves(agg: AuditAggregate): Record<string, number> {
  const steps = agg.steps;
  if (steps.length < 2) return {};
  const mid = Math.floor(steps.length / 2);
  const sum = (part: typeof steps) => {
    const k = { groups: 0, zv: 0, right: 0, wrong: 0 };
    for (const s of part) {
      k.groups += s.groups;
      k.zv += zeroVariance(s);
      k.right += s.all_right;
      k.wrong += s.all_wrong;
    }
    return k;
  };
  const a = sum(steps.slice(0, mid));
  const b = sum(steps.slice(mid));
  return {
    zero_variance_fraction_first_half: ratio(a.zv, a.groups),
    zero_variance_fraction_second_half: ratio(b.zv, b.groups),
    all_right_fraction_first_half: ratio(a.right, a.groups),
    all_right_fraction_second_half: ratio(b.right, b.groups),
    all_wrong_fraction_first_half: ratio(a.wrong, a.groups),
    all_wrong_fraction_second_half: ratio(b.wrong, b.groups),
  };
}

/**
 * The record of an audit: the pieces below, each built by its own function, assembled in the order
 * `--json` prints them.
 */
function buildRecord(
  path: string,
  opts: AuditOptions,
  loaded: LoadedDump,
  agg: AuditAggregate,
  taskText: Map<number, string>,
  rewardDist: Record<string, JsonValue>[],
  lengths: LengthByCorrectness[],
  wallMs: number,
): RunRecord {
  const steps = stepRows(agg);
  return {
    experiment: 'audit',
    seed: 0,
    version: VERSION,
    config: auditConfig(path, opts, loaded, agg),
    metrics: auditMetrics(opts, loaded, agg),
    curves: auditCurves(agg, steps),
    tables: {
      per_task: perTaskRows(agg, taskText),
      steps,
      group_sizes: [...agg.groupSizes.entries()].map(([size, groups]) => ({ size, groups })),
      reward_distribution: rewardDist,
      length_by_correctness: lengthRows(lengths, loaded.lengthUnit),
      bad_rows: loaded.badExamples.map((b) => ({
        file: b.file,
        line: b.line ?? null,
        row: b.row ?? null,
        problem: b.problem,
      })),
    },
    notes: auditNotes(loaded, agg),
    plots: {
      zero_variance: { title: 'Zero-variance groups per step', y: 'fraction of groups', x: 'step' },
      reward: { title: 'Reward per step', y: 'reward / fraction correct', x: 'step' },
      ...(agg.tokens
        ? { tokens: { title: 'token-mean denominator per step', y: 'action tokens', x: 'step' } }
        : {}),
    },
    timing: { wall_ms: wallMs },
  };
}

/** The notes: skipped bad rows (with the first ones located) and groups that mix tasks. */
function auditNotes(loaded: LoadedDump, agg: AuditAggregate): string[] {
  const notes: string[] = [];
  if (loaded.badRows > 0) {
    notes.push(`skipped ${loaded.badRows} bad row(s) of ${loaded.rowsRead} (--skip-bad-rows); first ones:`);
    notes.push(...formatBadRows(loaded.badExamples).map((l) => `  ${l}`));
  }
  if (agg.mixedTaskGroups > 0) {
    notes.push(
      `${agg.mixedTaskGroups} group(s) hold more than one task: their group label is shared by different tasks, so their advantages compare tasks of different difficulty`,
    );
  }
  return notes;
}

/**
 * The whole-dump metrics: counts, group kinds, tasks by solve status, first/second-half fractions,
 * then truncation, token denominators and the advantage check when the dump has their columns.
 */
function auditMetrics(
  opts: AuditOptions,
  loaded: LoadedDump,
  agg: AuditAggregate,
): Record<string, JsonValue> {
  const metrics: Record<string, JsonValue> = {
    rows: agg.rows,
    rows_read: loaded.rowsRead,
    bad_rows_skipped: loaded.badRows,
    files: loaded.files.length,
    steps: agg.steps.length,
    ...kindMetrics(agg.kinds),
    wasted_samples: agg.tasks.reduce((s, t) => s + t.wastedSamples, 0),
    mean_reward: agg.rewardMean,
    correct_fraction: ratio(agg.correct, agg.rows),
    tasks: agg.tasks.length,
    tasks_always_solved: agg.tasks.filter((t) => solveStatus(t) === 'always solved').length,
    tasks_never_solved: agg.tasks.filter((t) => solveStatus(t) === 'never solved').length,
    tasks_sometimes_solved: agg.tasks.filter((t) => solveStatus(t) === 'sometimes solved').length,
    mixed_task_groups: agg.mixedTaskGroups,
    pass_value: opts.passValue,
    fail_value: opts.failValue,
    length_unit: loaded.lengthUnit,
    ...halves(agg),
  };
  metrics.wasted_sample_fraction = ratio(metrics.wasted_samples as number, agg.rows);
  if (agg.truncation) {
    metrics.truncated_samples = agg.truncation.truncated;
    metrics.truncated_fraction = ratio(agg.truncation.truncated, agg.truncation.rows);
    metrics.truncated_correct_samples = agg.truncation.truncatedCorrect;
    metrics.truncated_mean_reward = agg.truncation.truncatedMeanReward;
  }
  if (agg.tokens) {
    const t = agg.tokens;
    metrics.action_tokens = t.action;
    metrics.env_tokens = t.env;
    metrics.zero_advantage_action_tokens = t.zeroAdvantageAction;
    metrics.zero_advantage_token_fraction = ratio(t.zeroAdvantageAction, t.action);
    metrics.denominators = tokenDenominators(t);
  }
  if (agg.advantageCheck) {
    const c = agg.advantageCheck;
    metrics.advantage_convention = c.convention;
    metrics.logged_advantages_compared = c.compared;
    metrics.logged_advantages_differing = c.differing;
    metrics.logged_advantage_max_abs_diff = c.maxAbsDiff;
    metrics.logged_advantages_in_singleton_groups = c.skippedSingletonRows;
  }
  return metrics;
}

/** One row per task, most wasted samples first (then by task text). */
function perTaskRows(agg: AuditAggregate, taskText: Map<number, string>): Record<string, JsonValue>[] {
  return agg.tasks
    .map((t) => {
      const zv = zeroVariance(t);
      return {
        task: taskText.get(t.tid) ?? String(t.tid),
        groups: t.groups,
        samples: t.samples,
        zero_variance_groups: zv,
        zero_variance_fraction: ratio(zv, t.groups),
        all_wrong_groups: t.all_wrong,
        all_right_groups: t.all_right,
        singleton_groups: t.singleton,
        mixed_groups: t.mixed,
        mean_reward: t.rewardMean,
        solve_rate: ratio(t.correct, t.samples),
        status: solveStatus(t),
        wasted_samples: t.wastedSamples,
        first_step: t.firstStep,
        last_step: t.lastStep,
      };
    })
    .sort((a, b) => b.wasted_samples - a.wasted_samples || (a.task < b.task ? -1 : a.task > b.task ? 1 : 0));
}

/** One row per step: group kinds and their fractions, reward, truncation and token denominators. */
function stepRows(agg: AuditAggregate): Record<string, JsonValue>[] {
  return agg.steps.map((s) => {
    const zv = zeroVariance(s);
    const row: Record<string, JsonValue> = {
      step: s.step,
      rows: s.rows,
      groups: s.groups,
      all_wrong_groups: s.all_wrong,
      all_right_groups: s.all_right,
      all_equal_other_groups: s.all_equal_other,
      mixed_groups: s.mixed,
      singleton_groups: s.singleton,
      zero_variance_fraction: ratio(zv, s.groups),
      all_wrong_fraction: ratio(s.all_wrong, s.groups),
      all_right_fraction: ratio(s.all_right, s.groups),
      mean_reward: s.rewardMean,
      correct_fraction: ratio(s.correct, s.rows),
    };
    if (agg.truncation) row.truncated_fraction = ratio(s.truncated, s.rows);
    if (agg.tokens) {
      row.action_tokens = s.tokens.action;
      row.env_tokens = s.tokens.env;
      row.zero_advantage_action_tokens = s.tokens.zeroAdvantageAction;
      for (const [mode, d] of Object.entries(tokenDenominators(s.tokens)) as [LossAggMode, number][]) {
        row[`denominator ${mode}`] = d;
      }
    }
    return row;
  });
}

/** The per-step curves, read from the step rows (x: the step). */
function auditCurves(agg: AuditAggregate, steps: Record<string, JsonValue>[]): Record<string, number[]> {
  const curves: Record<string, number[]> = {
    update: agg.steps.map((s) => s.step),
    'zero_variance.all_wrong': steps.map((s) => s.all_wrong_fraction as number),
    'zero_variance.all_right': steps.map((s) => s.all_right_fraction as number),
    'zero_variance.total': steps.map((s) => s.zero_variance_fraction as number),
    'reward.mean': steps.map((s) => s.mean_reward as number),
    'reward.correct_fraction': steps.map((s) => s.correct_fraction as number),
  };
  if (agg.tokens) curves['tokens.token-mean denominator'] = agg.steps.map((s) => s.tokens.action);
  return curves;
}

/** The response length summary of correct and incorrect samples, in `unit`. */
function lengthRows(
  lengths: LengthByCorrectness[],
  unit: LoadedDump['lengthUnit'],
): Record<string, JsonValue>[] {
  return lengths.map((r) => ({
    correct: r.correct,
    samples: r.samples,
    mean_length: r.mean,
    median_length: r.median,
    p90_length: r.p90,
    unit,
  }));
}

/** The config: what was read (path, preset, columns, format) and with which settings. */
function auditConfig(
  path: string,
  opts: AuditOptions,
  loaded: LoadedDump,
  agg: AuditAggregate,
): Record<string, JsonValue> {
  return {
    path,
    preset: opts.preset,
    columns: loaded.columns as Record<string, JsonValue>,
    reward_columns: loaded.rewardColumns,
    skip_bad_rows: opts.skipBadRows,
    grouping:
      loaded.grouping.kind === 'label'
        ? 'by (step, group label)'
        : `contiguous blocks of ${loaded.grouping.size} rows per file (${loaded.grouping.inferred ? 'inferred from the runs of equal prompts' : 'given with --group-size'})`,
    group_size: loaded.grouping.kind === 'contiguous' ? loaded.grouping.size : null,
    reward_weights: opts.rewardWeights,
    scale_rewards: agg.advantageCheck ? opts.scaleRewards : null,
    zero_std_tol: opts.zeroStdTol,
    rank_columns: opts.rankColumns,
    pass_value: opts.passValue,
    fail_value: opts.failValue,
    format: loaded.format,
  };
}
