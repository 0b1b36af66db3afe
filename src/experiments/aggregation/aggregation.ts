/**
 * `labs run --experiment aggregation`: verl's four `loss_agg_mode`s and the length bias each one
 * puts into the objective (course: "Length and mask quietly change the objective"; Dr. GRPO).
 *
 * One arm per mode, same token-level env, learner and streams. Per valid token of row b the
 * aggregation weight `∂L/∂loss_tok` is (agg_loss, docs/verl-semantics.md §4):
 *   token-mean 1/N (N = loss tokens of the batch); seq-mean-token-sum 1/G; seq-mean-token-mean
 *   1/(G·n_b); seq-mean-token-sum-norm 1/T.
 * Only seq-mean-token-mean makes a token's weight depend on its own trajectory's length: a long
 * failed trajectory is penalised less per token — the bias Dr. GRPO says lets wrong answers grow
 * long. The other three differ from each other only by a per-batch scale, which Adam (default)
 * largely normalises away; `--set optimizer=sgd` shows the scale as an effective learning rate.
 * Measured: success, mean length of successful and failed trajectories, think-token rate, the
 * normalised per-token weight by trajectory length, and the failed long/short weight ratio.
 */
import type { z } from 'zod';
import { LOSS_AGG_MODES } from '../../core/aggLoss.js';
import {
  type ArmResult,
  type ArmSpec,
  lateMean,
  overallMean,
  pooledTraining,
} from '../../train/tokenMeasures.js';
import { armCurves, armTable, fixed, levelReport, pairedDifferences, round6 } from '../armReport.js';
import { startRecord } from '../record.js';
import { runArms, TOKEN_LAB_OPTIONS, TRUNCATION_ONLY } from '../tokenLab.js';
import type { Experiment, JsonValue, RunContext, RunRecord } from '../types.js';
import { formatAggregation } from './aggregationSummary.js';

// --- config -----------------------------------------------------------------------------------------
export const AGGREGATION_OPTIONS = TOKEN_LAB_OPTIONS.omit(TRUNCATION_ONLY);

/** The parsed config `run` receives (snake_case, every option present). */
export type AggregationConfig = z.output<typeof AGGREGATION_OPTIONS>;

function runAggregation(cfg: AggregationConfig, ctx: RunContext): RunRecord {
  const record = startRecord('aggregation', cfg, ctx.seed);

  // --- arms: one per verl loss_agg_mode ---------------------------------------------------------------
  const specs: ArmSpec[] = LOSS_AGG_MODES.map((mode) => ({
    arm: mode,
    maskRule: 'model_tokens',
    lossAggMode: mode,
    truncation: 'zero_score',
  }));

  // --- training ---------------------------------------------------------------------------------------
  const results = runArms(specs, cfg, ctx.seed, ctx.onProgress, ctx.onInfo);

  // --- measurements -------------------------------------------------------------------------------------
  const { arms, metrics } = armTable(results, (r) => {
    const e = r.evaluation;
    const t = pooledTraining(r);
    return {
      arm: r.spec.arm,
      eval_success: round6(e.success),
      // lengths pooled over every training batch: failures become rare late in training
      success_mean_length: round6(t.successMeanLength),
      failed_mean_length: round6(t.failedMeanLength),
      late_failed_mean_length: round6(lateMean(r, (u) => u.failedMeanLength)),
      think_rate: round6(t.thinkRate),
      eval_think_rate: round6(e.thinkRate),
      eval_mean_length: round6(e.meanLength),
      eval_verify_rate: round6(e.verifyRate),
      truncation_rate: round6(t.truncationRate),
      failed_long_short_weight_ratio: round6(overallMean(r, (u) => u.failedLongShortWeightRatio)),
    };
  });
  const weightRows = results.flatMap((r) =>
    r.weightByLength
      .filter((b) => b.trajectories > 0)
      .map((b) => ({
        arm: r.spec.arm,
        length: `${b.lo}-${b.hi}`,
        length_mid: (b.lo + b.hi) / 2,
        trajectories: b.trajectories,
        failed_trajectories: b.failedTrajectories,
        weight_per_token: round6(b.tokens > 0 ? b.weightSum / b.tokens : Number.NaN),
        raw_weight_per_token: round6(b.tokens > 0 ? b.rawWeightSum / b.tokens : Number.NaN),
        failed_weight_per_token: round6(b.failedTokens > 0 ? b.failedWeightSum / b.failedTokens : Number.NaN),
      })),
  );
  // Wide form for the plot: one row per length bucket, one column per mode (failed trajectories).
  const pad = (n: number) => String(n).padStart(2, '0');
  const failedWeightRows: Record<string, JsonValue>[] = [];
  for (const r of results) {
    for (const b of r.weightByLength) {
      if (b.failedTokens === 0) continue;
      const length = `${pad(b.lo)}-${pad(b.hi)}`;
      let row = failedWeightRows.find((x) => x.length === length);
      if (!row) {
        row = { length };
        failedWeightRows.push(row);
      }
      row[r.spec.arm] = round6(b.failedWeightSum / b.failedTokens);
    }
  }
  failedWeightRows.sort((a, b) => String(a.length).localeCompare(String(b.length)));
  Object.assign(
    metrics,
    pairedDifferences(arms, 'token-mean', [
      'eval_success',
      'success_mean_length',
      'failed_mean_length',
      'late_failed_mean_length',
      'think_rate',
      'eval_verify_rate',
    ]),
  );
  // per-level held-out success and the warm start (neural policy; nothing for the table)
  const levels = levelReport(results);
  Object.assign(metrics, levels.metrics);
  const curves = armCurves(results, {
    success: (u) => u.success,
    failed_length: (u) => u.failedMeanLength,
    success_length: (u) => u.successMeanLength,
    think_rate: (u) => u.thinkRate,
    mean_length: (u) => u.meanLength,
    failed_weight_ratio: (u) => u.failedLongShortWeightRatio,
  });

  return record.finish({
    metrics,
    curves,
    tables: {
      arms,
      weight_by_length: weightRows,
      failed_weight_by_length: failedWeightRows,
      policy: [results[0]?.policy ?? {}],
      ...levels.tables,
    },
    notes: [aggregationConclusion(results), ...aggregationCaveats(cfg.optimizer), ...levels.notes],
    plots: {
      success: { title: 'Training success by loss_agg_mode', y: 'fraction of trajectories' },
      failed_length: { title: 'Mean length of failed trajectories', y: 'tokens' },
      success_length: { title: 'Mean length of successful trajectories', y: 'tokens' },
      think_rate: { title: 'Think tokens', y: 'think tokens / model tokens' },
      failed_weight_ratio: {
        title: 'Per-token weight of long vs short failed trajectories',
        y: 'ratio (1 = length-neutral)',
      },
      failed_weight_by_length: {
        title: 'Per-token weight of failed trajectories by length, all updates',
        y: 'weight per token (batch mean = 1)',
        x: 'trajectory length (tokens)',
        kind: 'bar',
        table: 'failed_weight_by_length',
        xField: 'length',
        yFields: [...LOSS_AGG_MODES],
      },
    },
  });
}

/** The closing sentence, drawn from the measured numbers. */
export function aggregationConclusion(results: readonly ArmResult[]): string {
  const by = (mode: string) => results.find((r) => r.spec.arm === mode);
  const tm = by('token-mean');
  const stm = by('seq-mean-token-mean');
  if (!tm || !stm) return 'token-mean or seq-mean-token-mean arm missing: no comparison.';
  const ratio = overallMean(stm, (u) => u.failedLongShortWeightRatio);
  const a = pooledTraining(stm);
  const b = pooledTraining(tm);
  const lessOrNot = Number.isFinite(ratio) && ratio < 1 ? 'less' : 'not less';
  const d = a.failedMeanLength - b.failedMeanLength;
  const grew =
    Math.abs(d) < 0.5
      ? `failed trajectories were about as long (${fixed(a.failedMeanLength, 2)} vs ${fixed(b.failedMeanLength, 2)} tokens)`
      : `failed trajectories were ${d > 0 ? 'longer' : 'shorter'} (${fixed(a.failedMeanLength, 2)} vs ${fixed(b.failedMeanLength, 2)} tokens)`;
  const tmRatio = overallMean(tm, (u) => u.failedLongShortWeightRatio);
  return [
    `Per token, seq-mean-token-mean weighted failed trajectories longer than the batch's median failed length ${fixed(ratio, 2)}x as much as shorter ones (token-mean ${fixed(tmRatio, 2)}x): long failures were penalised ${lessOrNot} per token, the bias Dr. GRPO describes.`,
    `Against token-mean in this run, ${grew}, successful ones ${fixed(a.successMeanLength, 2)} vs ${fixed(b.successMeanLength, 2)} tokens, held-out verify rate ${fixed(stm.evaluation.verifyRate, 3)} vs ${fixed(tm.evaluation.verifyRate, 3)}, think-token rate ${fixed(a.thinkRate, 3)} vs ${fixed(b.thinkRate, 3)}.`,
    `Held-out success: ${results.map((r) => `${r.spec.arm} ${fixed(r.evaluation.success, 3)}`).join(', ')}.`,
  ].join(' ');
}

function aggregationCaveats(optimizer: string): string[] {
  return [
    optimizer === 'adam'
      ? 'Adam normalises each parameter (a logit of the table, a weight of the neural model) by its own gradient RMS, so token-mean, seq-mean-token-sum and seq-mean-token-sum-norm differ only through per-batch scale changes; --set optimizer=sgd turns their scale difference into a learning-rate difference (a change of loss scale, not a stronger algorithm).'
      : 'With SGD the modes also differ by their loss scale (token-mean divides by all loss tokens, seq-mean-token-sum by the number of rows, -norm by T): part of any difference is an effective learning rate.',
    'In this env failures are mostly short (protocol errors, unverified wrong answers); long failures come from think loops and truncation. failed_mean_length pools all training batches because late batches have few failures. One seed is an anecdote: use --seeds.',
  ];
}

export const aggregation: Experiment<typeof AGGREGATION_OPTIONS> = {
  name: 'aggregation',
  summary: "token-level env: verl's four loss_agg_modes and their length bias, measured over training",
  options: AGGREGATION_OPTIONS,
  // Headline comparisons with --seeds: every mode vs verl's default token-mean.
  comparisons: () => ({
    baseline: 'token-mean',
    arms: [...LOSS_AGG_MODES],
    metrics: ['eval_success', 'eval_verify_rate', 'success_mean_length'],
  }),
  run: runAggregation,
  format: formatAggregation,
};
