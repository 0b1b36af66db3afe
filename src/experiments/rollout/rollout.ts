/**
 * `labs run --experiment rollout`: the course's second experiment — rollout workers and a trainer as
 * a discrete-event simulation (simulated seconds), with real learning inside it.
 *
 * W workers play the agent experiment's tool-arithmetic env with the tabular [2,3,4] policy, each group
 * (one task x G samples) with the policy version the worker holds, recording the behaviour log-prob of
 * every action. Generation time follows a long-tailed (log-normal) token count per action. The trainer
 * takes K finished groups per step (fixed step time), updates by group REINFORCE with GRPO advantages,
 * and publishes each new version after a delay. One row per (mode, correction):
 *   sync                      generate K groups, train, publish, repeat (lag 0, ratio exactly 1);
 *   bounded (eta)             AReaL's admission rule (stale work never started) + drop at consumption of
 *                             groups that still finished more than eta versions late;
 *   admission (eta)           AReaL's admission rule alone (no drop): consumed lags may exceed eta;
 *   unbounded                 no bound; `drop` discards groups with lag > eta at consumption.
 * Corrections: none / is (per-action ratio) / tis (ratio truncated at tis_cap) / drop.
 * Every row replays the same task stream, policy-sampling stream and length stream from the seed, so
 * rows differ only by their schedule and correction; the 400 held-out tasks are the agent experiment's.
 *
 * Reads top to bottom: config, setup, one simulated run per row, measurements, record.
 */
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import {
  DEFAULT_LAG_BUCKETS,
  integerHistogram,
  pearson,
  ratioStats,
  ratioStatsByLag,
} from '../../core/lagStats.js';
import {
  checkOperandRange,
  DEFAULT_OPERANDS,
  type OperandRange,
  sampleTasks,
} from '../../envs/toolArithmetic.js';
import { Rng } from '../../random.js';
import {
  ASYNC_LEARNER_DEFAULTS,
  type AsyncLearnerResult,
  CORRECTIONS,
  type Correction,
  runAsyncLearner,
} from '../../train/asyncLearner.js';
import { evaluatePolicy } from '../../train/evaluate.js';
import type { RolloutMode } from '../../train/eventSim.js';
import { LENGTH_DEFAULTS } from '../../train/generationLength.js';
import { TEACHING_ADVANTAGE } from '../../train/groupReinforce.js';
import { asOptionError, defineOptions, option } from '../options.js';
import { startRecord } from '../record.js';
import type { Experiment, JsonValue, PlotHint, RunContext, RunRecord } from '../types.js';
import type { RatioByLagRow } from './rolloutRecord.js';
import { formatRollout } from './rolloutSummary.js';

// ---------------------------------------------------------------------------------------------------
// Config. Defaults: K=16 groups x G=8 x 150 updates = 19,200 consumed trajectories and lr 2, as the
// agent experiment. 48 workers and a 3 s step make generation the bottleneck of `sync` (its batch
// waits for its slowest group) while the async trainer is busy most of the time. The learner's
// defaults live in ASYNC_LEARNER_DEFAULTS (train layer) and are read here, so a library caller of
// runAsyncLearner and `labs run --experiment rollout` get the same values.
// ---------------------------------------------------------------------------------------------------

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
const positive = z.number().positive().finite();

/**
 * Episodes the simulation may hold at once: W workers' groups in flight plus K queued groups, of G
 * episodes each. Far beyond 10^6 Node aborts with "heap out of memory" instead of an error.
 */
export const MAX_ROLLOUT_EPISODES = 1_000_000;

export const DEFAULT_ROWS =
  'sync,bounded:none,bounded:is,bounded:tis,admission:none,unbounded:none,unbounded:is,unbounded:tis,unbounded:drop';

/** Library defaults of the learner: the experiment's defaults are these, so both agree. */
const D = ASYNC_LEARNER_DEFAULTS;

export const ROLLOUT_OPTIONS = defineOptions({
  rows: option(
    z.string().min(1),
    DEFAULT_ROWS,
    "comma list of mode:correction, mode in sync|bounded|admission|unbounded, correction in none|is|tis|seq_is|seq_tis|drop ('sync' = sync:none)",
  ),
  eta: option(
    int(0),
    D.eta,
    'staleness bound: admission + drop in bounded mode (AReaL max_head_offpolicyness); drop threshold of unbounded:drop',
    'versions',
  ),
  tis_cap: option(
    positive,
    D.tisCap,
    'truncation cap of tis: w = min(ratio, cap) (verl rollout_is_threshold, default 2.0)',
  ),
  workers: option(int(1, 100_000), D.workers, 'W rollout workers, each generating one group at a time'),
  groups_per_update: option(int(1, 100_000), D.groupsPerBatch, 'K groups (tasks) per trainer step'),
  group_size: option(int(1, 4096), D.groupSize, 'G samples per task'),
  updates: option(
    int(1, 100_000),
    D.updates,
    'trainer steps per row; consumed trajectories = K x G x updates',
  ),
  train_step_s: option(positive, D.trainStepTime, 'simulated time per trainer step', 's'),
  publish_delay_s: option(
    z.number().min(0).finite(),
    D.publishDelay,
    'simulated time from the end of a step until workers can load the new weights',
    's',
  ),
  seconds_per_token: option(
    positive,
    D.secondsPerToken,
    'simulated decode time per token; a group takes its longest sample x this',
    's/token',
  ),
  length_median: option(
    positive,
    LENGTH_DEFAULTS.median,
    'median tokens generated per action (log-normal)',
    'tokens',
  ),
  length_sigma: option(
    z.number().min(0).finite(),
    LENGTH_DEFAULTS.sigma,
    'std of log tokens per action; 1 gives a p95/p5 spread of ~27x',
    'log tokens',
  ),
  length_max: option(
    int(LENGTH_DEFAULTS.min),
    LENGTH_DEFAULTS.max,
    `cap on tokens per action (at least the floor of ${LENGTH_DEFAULTS.min} tokens per action)`,
    'tokens',
  ),
  // Bounded so log-probs cannot overflow into Infinity ratios (lr 10 already saturates the table).
  lr: option(
    z.number().positive().max(1000),
    D.lr,
    'gradient-ascent learning rate on the 24 logits (agent default)',
  ),
  std: option(
    z.enum(['population', 'unbiased', 'none']),
    TEACHING_ADVANTAGE.std,
    "group std of the GRPO advantage: 'population' (the course), 'unbiased' (verl), 'none'",
  ),
  eval: option(
    z.enum(['sample', 'greedy']),
    'sample',
    "held-out evaluation of each row's final policy: 'sample' actions (the course) or the 'greedy' argmax",
  ),
  eval_tasks: option(int(1, 1_000_000), 400, 'held-out evaluation tasks (the agent experiment stream)'),
  operand_min: option(z.number().int(), DEFAULT_OPERANDS.operandMin, 'smallest operand'),
  operand_max: option(z.number().int(), DEFAULT_OPERANDS.operandMax, 'largest operand (inclusive)'),
});

/** The parsed config `run` receives (snake_case, every option present). */
export type RolloutConfig = z.output<typeof ROLLOUT_OPTIONS>;

export interface RowSpec {
  key: string;
  mode: RolloutMode;
  correction: Correction;
}

/** Parses `rows` ("sync,bounded:is,...") into specs; names the bad entry and its position. */
export function parseRows(text: string): RowSpec[] {
  const specs: RowSpec[] = [];
  const entries = text.split(',').map((s) => s.trim());
  entries.forEach((entry, i) => {
    const [mode, correction = 'none', extra] = entry.split(':');
    const bad = (why: string) =>
      new LabError('BAD_OPTION_VALUE', `rollout: rows entry ${i + 1} '${entry}': ${why}`, {
        details: { field: 'rows', row: i, value: entry },
      });
    if (extra !== undefined) throw bad('expected mode or mode:correction');
    if (mode !== 'sync' && mode !== 'bounded' && mode !== 'admission' && mode !== 'unbounded') {
      throw bad('mode must be sync, bounded, admission or unbounded');
    }
    if (!CORRECTIONS.includes(correction as Correction))
      throw bad(`correction must be one of ${CORRECTIONS.join(', ')}`);
    const key = mode === 'sync' && correction === 'none' ? 'sync' : `${mode}_${correction}`;
    if (specs.some((s) => s.key === key)) throw bad('listed twice');
    specs.push({ key, mode, correction: correction as Correction });
  });
  return specs;
}

// ---------------------------------------------------------------------------------------------------

/**
 * The checks across options (BAD_OPTION_VALUE): the rows list, the operand range and the episodes in
 * flight against memory. Run before any seed (Experiment.check) and by run.
 */
export function checkRolloutOptions(cfg: RolloutConfig): void {
  parseRows(cfg.rows);
  asOptionError(() => checkOperandRange({ operandMin: cfg.operand_min, operandMax: cfg.operand_max }));
  const held = (cfg.workers + cfg.groups_per_update) * cfg.group_size;
  if (held > MAX_ROLLOUT_EPISODES) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      `(workers + groups_per_update) x group_size = (${cfg.workers} + ${cfg.groups_per_update}) x ${cfg.group_size} = ${held} episodes in flight exceeds ${MAX_ROLLOUT_EPISODES} (memory)`,
      { details: { field: 'workers', value: held } },
    );
  }
}

async function runRollout(cfg: RolloutConfig, ctx: RunContext): Promise<RunRecord> {
  const record = startRecord('rollout', cfg, ctx.seed);
  checkRolloutOptions(cfg);
  const rows = parseRows(cfg.rows);
  const operands: OperandRange = { operandMin: cfg.operand_min, operandMax: cfg.operand_max };
  const U = cfg.updates;

  // Setup: every row replays the same seeded streams; held-out tasks are the agent experiment's.
  const root = new Rng(ctx.seed);
  const evalTasks = sampleTasks(root.fork('agent/eval-tasks'), cfg.eval_tasks, operands);
  const streams = () => ({
    tasks: root.fork('rollout/train-tasks'),
    policy: root.fork('rollout/policy'),
    lengths: root.fork('rollout/lengths'),
  });

  // One simulated run per (mode, correction).
  const results: { spec: RowSpec; run: AsyncLearnerResult; evalSuccess: number }[] = [];
  for (const [r, spec] of rows.entries()) {
    const run = runAsyncLearner(
      {
        mode: spec.mode,
        eta: cfg.eta,
        correction: spec.correction,
        tisCap: cfg.tis_cap,
        workers: cfg.workers,
        groupsPerBatch: cfg.groups_per_update,
        groupSize: cfg.group_size,
        updates: U,
        trainStepTime: cfg.train_step_s,
        publishDelay: cfg.publish_delay_s,
        secondsPerToken: cfg.seconds_per_token,
        lr: cfg.lr,
        advantage: { std: cfg.std },
        length: { median: cfg.length_median, sigma: cfg.length_sigma, max: cfg.length_max },
        operands,
      },
      streams(),
      (done) => ctx.onProgress?.(r * U + done, rows.length * U),
    );
    const evaluation = evaluatePolicy(run.logits, evalTasks, root.fork('rollout/eval'), cfg.eval);
    results.push({ spec, run, evalSuccess: evaluation.success });
  }

  // Measurements.
  const modeRows: Record<string, JsonValue>[] = [];
  const metrics: Record<string, JsonValue> = {};
  const curves: Record<string, number[]> = { update: Array.from({ length: U }, (_, i) => i + 1) };
  const ratioRows: RatioByLagRow[] = [];
  const p99Rows: Record<string, JsonValue>[] = DEFAULT_LAG_BUCKETS.map((b) => ({ lag_bucket: b.label }));
  const histograms: { key: string; counts: number[]; total: number }[] = [];

  for (const { spec, run, evalSuccess } of results) {
    const row = modeRow(spec, run, evalSuccess, cfg);
    const { series } = run;
    const groupLags = run.sim.groups.filter((g) => g.status === 'consumed').map((g) => g.lag);
    modeRows.push(row);
    for (const k of ROLLOUT_ROW_METRICS) {
      const v = row[k];
      if (typeof v === 'number') metrics[`${k}.${spec.key}`] = v;
    }

    curves[`lag_mean.${spec.key}`] = Array.from(series.lagMean);
    curves[`ess_fraction.${spec.key}`] = Array.from(series.essRatio);
    curves[`abs_log_ratio.${spec.key}`] = Array.from(series.meanAbsLogRatio);
    curves[`protocol_prob.${spec.key}`] = Array.from(series.protocolProb);
    curves[`train_success.${spec.key}`] = Array.from(series.trainSuccess);
    curves[`consumed_length.${spec.key}`] = Array.from(series.consumedLength);
    curves[`sim_time.${spec.key}`] = Array.from(series.simTime);

    ratioStatsByLag(run.actionLag, run.actionLogRatio).forEach(({ bucket, stats }, b) => {
      if (stats) {
        ratioRows.push({
          run: spec.key,
          lag_bucket: bucket.label,
          actions: stats.n,
          ratio_mean: stats.mean,
          ratio_p50: stats.p50,
          ratio_p90: stats.p90,
          ratio_p99: stats.p99,
          ratio_max: stats.max,
          mean_abs_log_ratio: stats.meanAbsLog,
        });
      }
      (p99Rows[b] as Record<string, JsonValue>)[spec.key] = stats ? stats.p99 : null;
    });
    histograms.push({ key: spec.key, counts: integerHistogram(groupLags), total: groupLags.length });
  }

  const maxLag = Math.max(0, ...histograms.map((h) => h.counts.length - 1));
  const lagHistogram = Array.from({ length: maxLag + 1 }, (_, lag) => {
    const row: Record<string, JsonValue> = { lag };
    for (const h of histograms) row[h.key] = (h.counts[lag] ?? 0) / h.total;
    return row;
  });
  const keys = results.map((r) => r.spec.key);

  return record.finish({
    metrics: {
      ...metrics,
      consumed_trajectories_per_row: cfg.groups_per_update * cfg.group_size * U,
      eval_tasks: cfg.eval_tasks,
    },
    curves,
    tables: {
      modes: modeRows,
      lag_histogram: lagHistogram,
      ratio_by_lag: ratioRows,
      ratio_p99_by_lag: p99Rows,
    },
    notes: rolloutNotes(cfg),
    plots: rolloutPlots(keys),
  });
}

/** Idle fractions are 1 - busy/total: float rounding can leave +-1e-16 where the true value is 0. */
function roundOff(v: number): number {
  return Math.abs(v) < 1e-12 ? 0 : v;
}

function mean(values: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i] as number;
  return values.length ? s / values.length : 0;
}

/** Mean ratio over consumed actions whose trajectory's advantage satisfies `keep`; null if none. */
function meanRatioWhere(run: AsyncLearnerResult, keep: (advantage: number) => boolean): number | null {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < run.actionLogRatio.length; i++) {
    if (!keep(run.actionAdvantage[i] as number)) continue;
    sum += Math.exp(run.actionLogRatio[i] as number);
    n++;
  }
  return n ? sum / n : null;
}

function fractionAbove(logRatios: ArrayLike<number>, logCap: number): number {
  let n = 0;
  for (let i = 0; i < logRatios.length; i++) if ((logRatios[i] as number) > logCap) n++;
  return logRatios.length ? n / logRatios.length : 0;
}

/** The `tables.modes` columns that also become metrics (`<column>.<row key>`), what `--seeds` summarises. */
const ROLLOUT_ROW_METRICS = [
  'throughput',
  'trainer_idle',
  'worker_idle',
  'lag_mean',
  'ratio_p99',
  'ess_fraction',
  'eval_success',
  'protocol_prob',
  'updates_to_0_9',
  'seconds_to_0_9',
  'worker_wasted',
] as const;

/** One `tables.modes` row: throughput, idle and wasted time, lag, ratio, ESS and learning of one simulated run. */
function modeRow(
  spec: RowSpec,
  run: AsyncLearnerResult,
  evalSuccess: number,
  cfg: RolloutConfig,
): Record<string, JsonValue> {
  const U = cfg.updates;
  const { sim, series } = run;
  const G = cfg.group_size;
  const consumedGroups = sim.groups.filter((g) => g.status === 'consumed');
  const groupLags = consumedGroups.map((g) => g.lag);
  const all = ratioStats(run.actionLogRatio);
  const absLog = Float64Array.from(run.actionLogRatio, Math.abs);
  const reach = series.protocolProb.findIndex((p) => p >= 0.9);
  const row: Record<string, JsonValue> = {
    run: spec.key,
    mode: spec.mode,
    eta: spec.mode === 'unbounded' ? null : spec.mode === 'sync' ? 0 : cfg.eta,
    correction: spec.correction,
    drop_beyond: spec.mode === 'bounded' || spec.correction === 'drop' ? cfg.eta : null,
    throughput: (consumedGroups.length * G) / sim.endTime,
    generated_per_s: (sim.groups.length * G) / sim.endTime,
    sim_seconds: sim.endTime,
    trainer_idle: roundOff(sim.trainerIdle),
    worker_idle: roundOff(sim.workerIdle),
    worker_wasted: sim.workerBusy > 0 ? sim.workerWasted / sim.workerBusy : 0,
    dropped_groups: sim.dropped,
    max_queue: sim.maxQueue,
    lag_mean: mean(groupLags),
    lag_max: groupLags.reduce((m, l) => Math.max(m, l), Number.NEGATIVE_INFINITY), // no spread: U x K can pass the ~120k argument limit
    ratio_mean: all?.mean ?? null,
    ratio_p50: all?.p50 ?? null,
    ratio_p90: all?.p90 ?? null,
    ratio_p99: all?.p99 ?? null,
    ratio_max: all?.max ?? null,
    over_cap_fraction: fractionAbove(run.actionLogRatio, Math.log(cfg.tis_cap)),
    ratio_mean_pos_adv: meanRatioWhere(run, (a) => a > 0),
    ratio_mean_neg_adv: meanRatioWhere(run, (a) => a < 0),
    ess_fraction: mean(series.essRatio),
    ess_fraction_min: series.essRatio.reduce((m, e) => Math.min(m, e), Number.POSITIVE_INFINITY),
    ess_seq_fraction: mean(series.essSequence),
    ess_applied_fraction: mean(series.essApplied),
    lag_logratio_corr: pearson(run.actionLag, absLog),
    consumed_mean_length: mean(run.consumedLengths),
    generated_mean_length: mean(run.generatedLengths),
    eval_success: evalSuccess,
    protocol_prob: series.protocolProb[U - 1] as number,
    updates_to_0_9: reach >= 0 ? reach + 1 : null,
    seconds_to_0_9: reach >= 0 ? (series.simTime[reach] as number) : null,
  };
  return row;
}

/** What a rollout record does not include and how each number is counted. */
function rolloutNotes(cfg: RolloutConfig): string[] {
  return [
    `simulated time only: a group's generation time is its longest sample's tokens x ${cfg.seconds_per_token} s; a trainer step takes ${cfg.train_step_s} s; new weights reach workers ${cfg.publish_delay_s} s after a step ends.`,
    'a worker keeps the version it started a group with (no partial rollout / in-flight weight update); finished groups are consumed first-finished first (FIFO).',
    `bounded: AReaL's admission rule (a group may start only while started - rejected < (eta + published version + 1) x K) plus a drop at consumption of groups that still arrive more than eta=${cfg.eta} versions late (long groups finish out of order); dropped groups count as rejected. admission: the same rule without the drop (consumed lags can exceed eta).`,
    'ratio = pi_current(a|s) / pi_behaviour(a|s) per action, from the behaviour log-prob recorded at sampling; is/tis reweight each action (they correct the action distribution at visited states, not the state distribution); sequence-level ESS is reported beside.',
    'ratio_mean_pos_adv / ratio_mean_neg_adv: mean ratio over actions of trajectories with positive / negative advantage (what is and tis reweight, by sign of the push).',
    'lag histogram and lag_mean/lag_max count consumed groups; ratio statistics count consumed actions; ess_fraction is the mean over steps of the Kish ESS fraction of the raw ratios.',
    `eval_success ${cfg.eval === 'sample' ? 'samples the final policy once' : 'takes the greedy action of the final policy'} on each of the ${cfg.eval_tasks} held-out tasks (sampling sd ${Math.sqrt((0.97 * 0.03) / cfg.eval_tasks).toPrecision(2)} at a success of 0.97); protocol_prob is the exact probability of the read -> tool -> submit protocol.`,
  ];
}

/** The plot hints of a rollout record; `keys`: its rows' keys, one bar per row. */
function rolloutPlots(keys: string[]): Record<string, PlotHint> {
  return {
    lag_mean: { title: 'Version lag of consumed groups', y: 'versions (mean per step)' },
    ess_fraction: { title: 'Kish ESS of the per-action ratios', y: 'fraction of the batch' },
    abs_log_ratio: {
      title: 'Distribution shift per step: mean |log ratio|',
      y: 'mean |log pi_current - log pi_behaviour|',
    },
    protocol_prob: { title: 'Learning: protocol probability after each step', y: 'probability' },
    train_success: { title: 'Training success of consumed batches', y: 'success rate' },
    consumed_length: { title: 'Tokens per consumed trajectory', y: 'tokens (mean per step)' },
    sim_time: { title: 'Simulated time at the end of each step', y: 'seconds' },
    lag_histogram: {
      title: 'Version lag of consumed groups',
      x: 'version lag',
      y: 'fraction of consumed groups',
      kind: 'bar',
      table: 'lag_histogram',
      xField: 'lag',
      yFields: keys,
    },
    ratio_p99_by_lag: {
      title: 'p99 of the probability ratio by lag',
      x: 'version lag',
      y: 'ratio p99',
      kind: 'bar',
      table: 'ratio_p99_by_lag',
      xField: 'lag_bucket',
      yFields: keys,
    },
  };
}

export const rollout: Experiment<typeof ROLLOUT_OPTIONS> = {
  name: 'rollout',
  summary:
    "the course's second experiment: rollout workers and a trainer as a discrete-event simulation; throughput, version lag, the real probability ratio, ESS and learning per mode and correction",
  options: ROLLOUT_OPTIONS,
  // Headline comparisons with --seeds: every configured row vs the synchronous one (none without 'sync').
  comparisons: (config) => {
    const keys = parseRows(String(config.rows)).map((r) => r.key);
    if (!keys.includes('sync')) return null;
    return {
      baseline: 'sync',
      arms: keys,
      metrics: ['eval_success', 'throughput', 'ratio_p99'],
    };
  },
  check: checkRolloutOptions,
  run: runRollout,
  format: formatRollout,
};
