/**
 * `labs run --experiment truncation`: truncation is not termination (course: "Length and mask
 * quietly change the objective").
 *
 * The token-level env with a tight budget (default 25 tokens, model + environment): the direct
 * protocol read -> tool -> submit needs 12-13 tokens and wins 70% (the tools err 30% of the time);
 * adding `verify` (which repairs errors) needs 23-28 tokens, so under budget 25 it is cut off in
 * about 8% of tasks when taken directly and far more often after a think token — verification
 * sometimes runs into the budget, yet still pays (about 92% vs 70%). Four arms treat trajectories
 * that hit the budget differently:
 * - `zero_score`: a truncated trajectory scores 0 and is trained on like any failure;
 * - `drop`: truncated trajectories are removed from the batch before advantages;
 * - `mask`: they score 0 in their group but their loss mask is all 0 (TRL mask_truncated_completions);
 * - `soft_penalty`: DAPO's overlong penalty (ramp over the last `overlong_buffer` tokens, −1 at the budget).
 * Measured: truncation rate, verify rate, mean length, success under the training budget and with the
 * budget lifted (does the policy learn to skip the verification it needs?).
 */
import { z } from 'zod';
import { LOSS_AGG_MODES, type LossAggMode } from '../../core/aggLoss.js';
import { LabError } from '../../core/errors.js';
import {
  type ArmResult,
  type ArmSpec,
  type EpisodeMeasures,
  pooledTraining,
} from '../../train/tokenMeasures.js';
import { TRUNCATION_POLICIES } from '../../train/truncationPolicy.js';
import {
  armCurves,
  armTable,
  fixed,
  levelReport,
  pairedDifferences,
  round6,
  trajectoryAccounting,
} from '../armReport.js';
import { option, withDefault } from '../options.js';
import { startRecord } from '../record.js';
import { runArms, TOKEN_LAB_OPTIONS } from '../tokenLab.js';
import type { Experiment, RunContext, RunRecord } from '../types.js';
import { formatTruncation } from './truncationSummary.js';

// --- config -----------------------------------------------------------------------------------------
// budget 25: the smallest budget at which verifying still beats not verifying under the budget for a
// policy that verifies directly (0.92 vs 0.70 success, measured by scripting both paths over 20,000
// tasks); at 24 the verify path is cut 39% of the time and skipping it becomes the better choice.
export const TRUNCATION_OPTIONS = TOKEN_LAB_OPTIONS.extend({
  budget: withDefault(TOKEN_LAB_OPTIONS.shape.budget, 25),
  loss_agg_mode: option(
    z.enum(LOSS_AGG_MODES as [LossAggMode, ...LossAggMode[]]),
    'token-mean',
    "verl loss_agg_mode of every arm (default verl's token-mean)",
  ),
});

/** The parsed config `run` receives (snake_case, every option present). */
export type TruncationConfig = z.output<typeof TRUNCATION_OPTIONS>;

/**
 * Budgets that make the arms meaningless are refused, naming the options: a DAPO buffer longer than
 * the budget (verl's DAPO reward manager asserts `max_resp_len >= overlong_buffer.len`), and a
 * "budget lifted" evaluation whose budget is not above the training budget.
 */
export function checkTruncationBudgets(cfg: TruncationConfig): void {
  if (cfg.overlong_buffer > cfg.budget) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      `overlong_buffer=${cfg.overlong_buffer} exceeds budget=${cfg.budget}: the soft penalty's ramp must fit inside the budget (verl asserts max_resp_len >= overlong_buffer.len)`,
      { details: { field: 'overlong_buffer', value: cfg.overlong_buffer } },
    );
  }
  if (cfg.unbounded_budget <= cfg.budget) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      `unbounded_budget=${cfg.unbounded_budget} must exceed budget=${cfg.budget}: it is the budget of the "budget lifted" evaluation (set --set unbounded_budget=N with N > ${cfg.budget})`,
      { details: { field: 'unbounded_budget', value: cfg.unbounded_budget } },
    );
  }
}

function runTruncation(cfg: TruncationConfig, ctx: RunContext): RunRecord {
  const record = startRecord('truncation', cfg, ctx.seed);
  checkTruncationBudgets(cfg);
  const mode = cfg.loss_agg_mode;

  // --- arms: one per truncation policy ------------------------------------------------------------------
  const specs: ArmSpec[] = TRUNCATION_POLICIES.map((policy) => ({
    arm: policy,
    maskRule: 'model_tokens',
    lossAggMode: mode,
    truncation: policy,
  }));

  // --- training ---------------------------------------------------------------------------------------
  const results = runArms(specs, cfg, ctx.seed, ctx.onProgress, ctx.onInfo);

  // --- measurements -------------------------------------------------------------------------------------
  const { arms, metrics } = armTable(results, (r) => {
    const e = r.evaluation;
    const eu = lifted(r);
    const t = pooledTraining(r);
    return {
      arm: r.spec.arm,
      eval_success: round6(e.success),
      eval_success_unbounded: round6(eu.success),
      truncation_rate: round6(e.truncationRate),
      verify_rate: round6(e.verifyRate),
      mean_length: round6(e.meanLength),
      verify_rate_unbounded: round6(eu.verifyRate),
      train_truncation_rate: round6(t.truncationRate),
      train_verify_rate: round6(t.verifyRate),
      train_success: round6(t.success),
    };
  });
  Object.assign(
    metrics,
    pairedDifferences(arms, 'zero_score', [
      'eval_success',
      'eval_success_unbounded',
      'truncation_rate',
      'verify_rate',
      'mean_length',
    ]),
  );
  // per-level held-out success and the warm start (neural policy; nothing for the table)
  const levels = levelReport(results);
  Object.assign(metrics, levels.metrics);
  const curves = armCurves(results, {
    success: (u) => u.success,
    truncation_rate: (u) => u.truncationRate,
    verify_rate: (u) => u.verifyRate,
    mean_length: (u) => u.meanLength,
    excluded: (u) => u.excludedTrajectories,
  });

  return record.finish({
    metrics,
    curves,
    tables: {
      arms,
      trajectory_accounting: trajectoryAccounting(results),
      policy: [results[0]?.policy ?? {}],
      ...levels.tables,
    },
    notes: [
      truncationConclusion(results, cfg.budget, cfg.unbounded_budget),
      ...truncationCaveats(),
      ...levels.notes,
    ],
    plots: {
      success: { title: 'Training success (under the budget)', y: 'fraction of trajectories' },
      truncation_rate: { title: 'Truncated trajectories', y: 'fraction of trajectories' },
      verify_rate: { title: 'Trajectories that verify', y: 'fraction of trajectories' },
      mean_length: { title: 'Mean transcript length', y: 'tokens' },
      excluded: {
        title: 'Truncated trajectories dropped or masked from the loss',
        y: 'trajectories per batch',
      },
    },
  });
}

/** The budget-lifted evaluation of an arm (every truncation run has one: unbounded_budget is its option). */
function lifted(r: ArmResult): EpisodeMeasures {
  if (!r.evaluationUnbounded) {
    throw new LabError(
      'BAD_ARGUMENT',
      `arm ${r.spec.arm}: no budget-lifted evaluation (unbounded_budget unset)`,
      {
        details: { field: 'unbounded_budget' },
      },
    );
  }
  return r.evaluationUnbounded;
}

/** The closing sentence, drawn from the measured numbers. */
export function truncationConclusion(
  results: readonly ArmResult[],
  budget: number,
  unbounded: number,
): string {
  const parts = results.map(
    (r) =>
      `${r.spec.arm}: verify ${fixed(r.evaluation.verifyRate, 3)}, truncated ${fixed(r.evaluation.truncationRate, 3)}, success ${fixed(r.evaluation.success, 3)} at budget ${budget} / ${fixed(lifted(r).success, 3)} at ${unbounded}`,
  );
  const sorted = [...results].sort((a, b) => b.evaluation.verifyRate - a.evaluation.verifyRate);
  const most = sorted[0];
  const least = sorted[sorted.length - 1];
  const gap =
    most && least
      ? ` The policy verified most under ${most.spec.arm} (${fixed(most.evaluation.verifyRate, 3)}) and least under ${least.spec.arm} (${fixed(least.evaluation.verifyRate, 3)}); with the budget lifted that is a success gap of ${fixed(lifted(most).success - lifted(least).success, 3)}.`
      : '';
  return `${parts.join('; ')}.${gap}`;
}

function truncationCaveats(): string[] {
  return [
    'How much the policy verifies varies strongly between seeds (all, none, or a part of the tasks): compare the arms with --seeds and the paired <measure>.<arm>_minus_zero_score differences (arms of a seed share tasks and random streams), not in one run.',
    'soft_penalty also penalises trajectories that finish inside the last overlong_buffer tokens, which is where the verify path lands; its effect depends on that buffer as much as on truncation.',
  ];
}

export const truncation: Experiment<typeof TRUNCATION_OPTIONS> = {
  name: 'truncation',
  summary:
    'token-level env with a tight budget: zero_score vs drop vs mask vs soft overlong penalty for truncated trajectories',
  options: TRUNCATION_OPTIONS,
  // Headline comparisons with --seeds: every truncation policy vs zero_score.
  comparisons: () => ({
    baseline: 'zero_score',
    arms: [...TRUNCATION_POLICIES],
    metrics: ['eval_success', 'eval_success_unbounded', 'verify_rate', 'truncation_rate'],
  }),
  check: checkTruncationBudgets,
  run: runTruncation,
  format: formatTruncation,
};
