/**
 * `labs run --experiment mismatch`: a real training–inference gap and which correction acts on which
 * layer of it (issue 30; docs/experiments/mismatch.md).
 *
 * The warm-started GRU policy (init=sft) is trained with GRPO + PPO on the prompted env; its rollouts
 * come from an inference engine (src/policy/inferenceEngine.ts) that differs from the trainer for the
 * reasons a real one does, each a knob: `engine_precision` (weights and every matmul output rounded
 * to the format; `fp8` is vLLM's w8a8 e4m3 scheme, see below), `top_p` / `top_k` (the engine samples
 * from the truncated distribution and reports its log-prob; the trainer computes the full softmax),
 * `engine_lag` (weights synced every engine_lag + 1 updates). Behaviour (engine), old (trainer,
 * float64 recomputation) and current policy are three objects, recorded separately
 * (src/train/mismatchLearner.ts). Arms: the corrections of src/train/mismatchCorrections.ts, each the
 * verl / TRL / OpenRLHF kernel it reproduces. Then `tables.dose`: one source at a time, from the exact
 * engine (fp64, no truncation, no lag), `none` vs the best correction of the arms table.
 *
 * Reads top to bottom: options, checks, setup, arms, dose, measurements, conclusions, record.
 */
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import { PROMPTED_VOCAB_SIZE } from '../../envs/promptedArithmetic.js';
import type { InferenceEngineOptions } from '../../policy/inferenceEngine.js';
import { Rng } from '../../random.js';
import { createSequenceModel, type LearnerConfig } from '../../train/armLearners.js';
import {
  type CorrectionThresholds,
  MISMATCH_ARMS,
  type MismatchArm,
} from '../../train/mismatchCorrections.js';
import { type MismatchArmResult, type MismatchStreams, runMismatchArm } from '../../train/mismatchLearner.js';
import { option, withDefault } from '../options.js';
import { startRecord } from '../record.js';
import { TOKEN_LAB_OPTIONS } from '../tokenLab.js';
import type { Experiment, JsonValue, RunContext, RunRecord } from '../types.js';
import { type DoseSetting, ENGINE_PRECISIONS, type EnginePrecision } from './mismatchDose.js';
import {
  armSummaryRow,
  binTable,
  doseRow,
  MISMATCH_PLOTS,
  mismatchCurves,
  sourceConclusions,
} from './mismatchReport.js';
import { formatMismatch } from './mismatchSummary.js';

export { type DoseSetting, ENGINE_PRECISIONS, type EnginePrecision } from './mismatchDose.js';

import { WARM_START_OPTIONS, type WarmStartConfig, warmStart } from '../warmStart.js';

// --- options ----------------------------------------------------------------------------------------
const int = (min: number, max: number) => z.number().int().min(min).max(max);
const positive = z.number().positive().finite();

/** The engine options of a precision: `fp8` = `fp8_e4m3` with `quantization: 'w8a8'` (see the file comment). */
export function engineOptionsOf(
  precision: EnginePrecision,
  topP: number,
  topK: number,
): InferenceEngineOptions {
  const o: InferenceEngineOptions =
    precision === 'fp8' ? { precision: 'fp8_e4m3', quantization: 'w8a8' } : { precision };
  if (topP < 1) o.topP = topP;
  if (topK < PROMPTED_VOCAB_SIZE) o.topK = topK;
  return o;
}

const lab = TOKEN_LAB_OPTIONS.shape;
const csv = (what: string) => z.string().regex(/^[^,\s]+(,[^,\s]+)*$/, `a comma-separated list of ${what}`);

// Defaults: a small run (the machine this was built on was shared; docs/experiments/mismatch.md says
// what it shows at seed 7). 16 updates x 8 tasks x 8 samples from the SFT warm start; held-out
// success on 100 tasks every 4 updates.
export const MISMATCH_OPTIONS = z.strictObject({
  updates: withDefault(lab.updates, 16),
  tasks_per_update: withDefault(lab.tasks_per_update, 8),
  group_size: lab.group_size,
  ppo_epochs: lab.ppo_epochs,
  clip_ratio: lab.clip_ratio,
  std: lab.std,
  budget: lab.budget,
  tool_error_rate: lab.tool_error_rate,
  think_buckets: lab.think_buckets,
  max_operand: lab.max_operand,
  observation_logit_init: lab.observation_logit_init,
  eval_tasks: withDefault(lab.eval_tasks, 100),
  d_model: lab.d_model,
  // 0.01 from the warm start too (not the token lab's 0.001 with init=sft): the mismatch findings
  // (docs/findings/mismatch*.json) were measured at it
  neural_lr: withDefault(lab.neural_lr, 0.01),
  grad_clip: lab.grad_clip,
  max_level: lab.max_level,
  think_decay: lab.think_decay,
  think_cap: lab.think_cap,
  ...WARM_START_OPTIONS,
  // from scratch the GRU learns too little for any mismatch effect to show (issue 30)
  init: withDefault(WARM_START_OPTIONS.init, 'sft'),
  // --- the engine: the sources of the mismatch
  engine_precision: option(
    z.enum(ENGINE_PRECISIONS),
    'bf16',
    'engine weights and matmul outputs rounded to this format (RNE); fp8 = vLLM w8a8: scaled e4m3 linear layers, bf16 elsewhere',
  ),
  top_p: option(
    z.number().gt(0).lte(1),
    1,
    'engine nucleus sampling: keep the smallest set with mass >= top_p, in (0, 1]',
  ),
  top_k: option(
    int(1, 1_000_000),
    1000,
    `engine top-k, >= 1 (>= ${PROMPTED_VOCAB_SIZE}, the vocabulary: no truncation)`,
  ),
  engine_lag: option(
    int(0, 1000),
    1,
    'engine weights synced every engine_lag + 1 updates (0: before every rollout)',
    'updates',
  ),
  // --- the arms and their thresholds
  arms: option(csv('arms'), MISMATCH_ARMS.join(','), `arms to train, from ${MISMATCH_ARMS.join(', ')}`),
  tis_threshold: option(positive, 2, 'token_tis / seq_tis: verl rollout_is_threshold (upper truncation)'),
  icepop_lo: option(positive, 0.5, 'icepop: lower bound of the kept token ratio (OpenRLHF default 0.5)'),
  icepop_hi: option(positive, 5, 'icepop: upper bound of the kept token ratio (OpenRLHF default 5.0)'),
  seq_mask_lo: option(
    positive,
    0.5,
    'seq_mask: lower bound of the kept sequence ratio (verl seq_sum_k1 0.5_2.0)',
  ),
  seq_mask_hi: option(positive, 2, 'seq_mask: upper bound of the kept sequence ratio'),
  geo_lo: option(
    positive,
    0.999,
    'geo: lower bound of the geometric-mean ratio (verl decoupled_geo_rs 0.999_1.001)',
  ),
  geo_hi: option(positive, 1.001, 'geo: upper bound of the geometric-mean ratio'),
  trl_clip_max: option(positive, 3, 'trl_seq_mask: TRL vllm_importance_sampling_clip_max (TRL default 3.0)'),
  // --- measurement
  eval_every: option(
    int(1, 10000),
    4,
    'held-out evaluation every this many updates (and after the last)',
    'updates',
  ),
  collapse_ratio: option(
    z.number().gt(0).lt(1),
    0.5,
    'collapse: held-out success below this x its running best',
  ),
  collapse_min_best: option(
    z.number().min(0).max(1),
    0.2,
    'collapse: only once the running best is at least this',
  ),
  // --- the dose table: one source at a time from the exact engine; '' = no rows for that source
  dose_precisions: option(
    z.union([z.literal(''), csv('precisions')]),
    'bf16,fp8',
    'dose rows: engine precisions',
  ),
  dose_top_p: option(z.union([z.literal(''), csv('numbers')]), '0.9', 'dose rows: top_p values'),
  dose_lags: option(z.union([z.literal(''), csv('integers')]), '2', 'dose rows: engine_lag values'),
});

/** The parsed config `run` receives. */
export type MismatchConfig = z.output<typeof MISMATCH_OPTIONS>;

// --- checks that involve several options or parse lists: BAD_OPTION_VALUE naming the option -------
const bad = (key: string, why: string) =>
  new LabError('BAD_OPTION_VALUE', `mismatch: option ${key}: ${why}`, { details: { field: key, key } });

/** The checked arms, thresholds and dose settings of a config. */
export function checkMismatchOptions(cfg: MismatchConfig): {
  arms: MismatchArm[];
  thresholds: CorrectionThresholds;
  dose: DoseSetting[];
} {
  for (const [lo, hi] of [
    ['icepop_lo', 'icepop_hi'],
    ['seq_mask_lo', 'seq_mask_hi'],
    ['geo_lo', 'geo_hi'],
  ] as const) {
    if (!(cfg[lo] < cfg[hi])) throw bad(lo, `${cfg[lo]} must be below ${hi}=${cfg[hi]}`);
  }
  const arms = cfg.arms.split(',').map((a) => {
    if (!(MISMATCH_ARMS as readonly string[]).includes(a))
      throw bad('arms', `unknown arm '${a}'; known: ${MISMATCH_ARMS.join(', ')}`);
    return a as MismatchArm;
  });
  if (new Set(arms).size !== arms.length) throw bad('arms', `an arm is listed twice (${cfg.arms})`);
  const list = (s: string) => (s === '' ? [] : s.split(','));
  const exact: DoseSetting = {
    source: 'exact',
    dose: 'fp64, top_p 1, lag 0',
    precision: 'fp64',
    topP: 1,
    lag: 0,
  };
  const dose: DoseSetting[] = [exact];
  for (const p of list(cfg.dose_precisions)) {
    if (!(ENGINE_PRECISIONS as readonly string[]).includes(p))
      throw bad('dose_precisions', `unknown precision '${p}'; known: ${ENGINE_PRECISIONS.join(', ')}`);
    dose.push({ ...exact, source: 'precision', dose: p, precision: p as EnginePrecision });
  }
  for (const p of list(cfg.dose_top_p)) {
    const v = Number(p);
    if (!(v > 0 && v <= 1)) throw bad('dose_top_p', `top_p '${p}' is not in (0, 1]`);
    dose.push({ ...exact, source: 'top_p', dose: p, topP: v });
  }
  for (const p of list(cfg.dose_lags)) {
    const v = Number(p);
    if (!(Number.isInteger(v) && v >= 0)) throw bad('dose_lags', `engine_lag '${p}' is not an integer >= 0`);
    dose.push({ ...exact, source: 'lag', dose: p, lag: v });
  }
  const thresholds: CorrectionThresholds = {
    tisThreshold: cfg.tis_threshold,
    icepopLo: cfg.icepop_lo,
    icepopHi: cfg.icepop_hi,
    seqMaskLo: cfg.seq_mask_lo,
    seqMaskHi: cfg.seq_mask_hi,
    geoLo: cfg.geo_lo,
    geoHi: cfg.geo_hi,
    trlClipMax: cfg.trl_clip_max,
  };
  return { arms, thresholds, dose };
}

/** The learner/warm-start view of the config (the policy is always the neural one). */
function learnerConfig(cfg: MismatchConfig): WarmStartConfig {
  const base: LearnerConfig = { ...cfg, policy: 'neural', lr: cfg.neural_lr, optimizer: 'adam' };
  return { ...cfg, ...base };
}

function runMismatch(cfg: MismatchConfig, ctx: RunContext): RunRecord {
  const record = startRecord('mismatch', cfg, ctx.seed);
  const { arms, thresholds, dose } = checkMismatchOptions(cfg);

  // --- setup: the warm start (shared by every arm), seeded streams shared by every arm
  const lcfg = learnerConfig(cfg);
  const start = warmStart(lcfg, ctx.seed, ctx.onInfo);
  const root = new Rng(ctx.seed);
  const freshModel = () => {
    const model = createSequenceModel(lcfg, root.fork('token-lab/policy-init'));
    if (start) model.params.set(start.params);
    return model;
  };
  const streams = (): MismatchStreams => ({
    tasks: root.fork('mismatch/train-tasks'),
    pick: root.fork('mismatch/train-policy'),
    noise: root.fork('mismatch/train-noise'),
    evalRoot: root.fork('mismatch/eval'),
  });
  const env = {
    budget: cfg.budget,
    toolErrorRate: cfg.tool_error_rate,
    thinkBuckets: cfg.think_buckets,
    thinkDecay: cfg.think_decay,
    thinkCap: cfg.think_cap,
  };
  const total = (arms.length + 2 * dose.length) * cfg.updates;
  let done = 0;
  const train = (
    arm: MismatchArm,
    engine: InferenceEngineOptions,
    lag: number,
    dump: boolean,
  ): MismatchArmResult => {
    const before = done;
    const r = runMismatchArm(
      freshModel(),
      {
        arm,
        thresholds,
        engine,
        lag,
        updates: cfg.updates,
        tasksPerUpdate: cfg.tasks_per_update,
        groupSize: cfg.group_size,
        ppoEpochs: cfg.ppo_epochs,
        lr: cfg.neural_lr,
        gradClip: cfg.grad_clip,
        clipRatio: cfg.clip_ratio,
        std: cfg.std,
        env,
        maxOperand: cfg.max_operand,
        maxLevel: cfg.max_level,
        evalTasks: cfg.eval_tasks,
        evalEvery: cfg.eval_every,
        collapseRatio: cfg.collapse_ratio,
        collapseMinBest: cfg.collapse_min_best,
      },
      streams(),
      (d) => ctx.onProgress?.(before + d, total),
      dump && ctx.onUpdateTokens ? (t) => ctx.onUpdateTokens?.(arm, t) : undefined,
    );
    done = before + cfg.updates;
    return r;
  };

  // --- arms: every correction at the configured engine
  const mainEngine = engineOptionsOf(cfg.engine_precision, cfg.top_p, cfg.top_k);
  const results = arms.map((arm) => train(arm, mainEngine, cfg.engine_lag, true));

  // --- dose: one source at a time from the exact engine, none vs the best correction of the arms
  const corrections = results.filter((r) => r.arm !== 'none');
  const best = corrections.reduce<MismatchArmResult | null>(
    (b, r) => (b === null || r.finalEval > b.finalEval ? r : b),
    null,
  );
  const doseArms: MismatchArm[] = best ? ['none', best.arm] : ['none'];
  const doseRows: Record<string, JsonValue>[] = [];
  const doseResults: { setting: DoseSetting; arm: MismatchArm; r: MismatchArmResult }[] = [];
  for (const setting of dose) {
    for (const arm of doseArms) {
      const r = train(arm, engineOptionsOf(setting.precision, setting.topP, 1000), setting.lag, false);
      doseResults.push({ setting, arm, r });
      doseRows.push(doseRow(setting, r));
    }
  }
  ctx.onProgress?.(total, total);

  // --- measurements
  const armRows = results.map(armSummaryRow);
  const metrics: Record<string, JsonValue> = {};
  for (const row of armRows) {
    for (const [k, v] of Object.entries(row)) if (typeof v === 'number') metrics[`${k}.${row.arm}`] = v;
  }
  metrics.best_correction = best?.arm ?? null;

  return record.finish({
    metrics,
    curves: mismatchCurves(results),
    tables: {
      arms: armRows,
      dose: doseRows,
      delta_by_bin: binTable(results),
    },
    notes: [
      ...sourceConclusions(doseResults, best?.arm ?? null),
      `Arms at engine_precision=${cfg.engine_precision}, top_p=${cfg.top_p}, top_k=${cfg.top_k}, engine_lag=${cfg.engine_lag}; held-out success is the trainer's float64 policy on ${cfg.eval_tasks} tasks every ${cfg.eval_every} updates. Collapse: held-out success below ${cfg.collapse_ratio} x its running best once that best is >= ${cfg.collapse_min_best}, or a non-finite loss/gradient (training stops).`,
      'One seed: differences between arms here are not findings; compare arms with --seeds (paired) before reading anything into them.',
    ],
    plots: MISMATCH_PLOTS,
  });
}

export const mismatch: Experiment<typeof MISMATCH_OPTIONS> = {
  name: 'mismatch',
  summary:
    'training-inference mismatch: engine precision, top-p/top-k and weight lag vs the corrections (TIS, IcePop, MIS, geo, TRL)',
  options: MISMATCH_OPTIONS,
  recordsTokens: true,
  comparisons: (cfg) => {
    const arms = cfg.arms.split(',').filter((a) => a !== 'none');
    return cfg.arms.split(',').includes('none') && arms.length > 0
      ? { baseline: 'none', arms, metrics: ['final_eval_success'] }
      : null;
  },
  run: runMismatch,
  format: formatMismatch,
};
