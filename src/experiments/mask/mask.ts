/**
 * `labs run --experiment mask`: what the response mask decides (course: "Length and mask quietly
 * change the objective").
 *
 * Two arms train the same token-level PPO learner in the token-level tool-arithmetic env
 * (transcripts interleave model tokens and the environment's operands, results and checks):
 * - `correct`: verl's response_mask — 1 on model tokens, 0 on environment tokens and padding;
 * - `flipped`: environment tokens masked 1 as well (the bug of deriving the mask from the
 *   attention mask), so the loss treats text the policy never produced as its actions.
 * An environment token is written in the context where the policy makes its next decision, so with
 * the flipped mask a rewarded transcript raises the probability of *emitting* digits and separators
 * there. Measured: the rate at which the policy emits observation tokens as actions (a protocol
 * error), success, the loss denominators, and per trajectory the action / environment / loss tokens.
 *
 * Reads top to bottom: config, arms, training (runArms), measurements, conclusion, record.
 */
import { z } from 'zod';
import { LOSS_AGG_MODES, type LossAggMode } from '../../core/aggLoss.js';
import { type ArmResult, type ArmSpec, pooledTraining } from '../../train/tokenMeasures.js';
import {
  armCurves,
  armTable,
  fixed,
  levelReport,
  pairedDifferences,
  percent,
  round6,
  trajectoryAccounting,
} from '../armReport.js';
import { option } from '../options.js';
import { startRecord } from '../record.js';
import { runArms, TOKEN_LAB_OPTIONS, TRUNCATION_ONLY } from '../tokenLab.js';
import type { Experiment, RunContext, RunRecord } from '../types.js';
import { formatMask } from './maskSummary.js';

// --- config -----------------------------------------------------------------------------------------
export const MASK_OPTIONS = TOKEN_LAB_OPTIONS.omit(TRUNCATION_ONLY).extend({
  loss_agg_mode: option(
    z.enum(LOSS_AGG_MODES as [LossAggMode, ...LossAggMode[]]),
    'token-mean',
    "verl loss_agg_mode of both arms (default verl's token-mean)",
  ),
});

/** The parsed config `run` receives (snake_case, every option present). */
export type MaskConfig = z.output<typeof MASK_OPTIONS>;

function runMask(cfg: MaskConfig, ctx: RunContext): RunRecord {
  const record = startRecord('mask', cfg, ctx.seed);
  const mode = cfg.loss_agg_mode;

  // --- arms -----------------------------------------------------------------------------------------
  const specs: ArmSpec[] = [
    { arm: 'correct', maskRule: 'model_tokens', lossAggMode: mode, truncation: 'zero_score' },
    { arm: 'flipped', maskRule: 'all_tokens', lossAggMode: mode, truncation: 'zero_score' },
  ];

  // --- training ---------------------------------------------------------------------------------------
  const results = runArms(specs, cfg, ctx.seed, ctx.onProgress, ctx.onInfo);

  // --- measurements -------------------------------------------------------------------------------------
  const { arms, metrics } = armTable(results, (r) => {
    const e = r.evaluation;
    const t = pooledTraining(r);
    return {
      arm: r.spec.arm,
      mask: r.spec.maskRule,
      eval_success: round6(e.success),
      observation_token_action_rate: round6(e.observationTokenActionRate),
      observation_error_rate: round6(e.observationErrorRate),
      protocol_error_rate: round6(e.protocolErrorRate),
      eval_mean_length: round6(e.meanLength),
      train_success: round6(t.success),
      train_observation_token_action_rate: round6(t.observationTokenActionRate),
      action_tokens_per_trajectory: round6(t.modelTokensPerTrajectory),
      env_tokens_per_trajectory: round6(t.envTokensPerTrajectory),
      loss_tokens_per_trajectory: round6(t.lossTokensPerTrajectory),
      mean_loss_denominator: round6(t.meanLossDenominator),
    };
  });
  const [correct, flipped] = results as [ArmResult, ArmResult];
  Object.assign(
    metrics,
    pairedDifferences(arms, 'correct', [
      'eval_success',
      'observation_token_action_rate',
      'protocol_error_rate',
      'eval_mean_length',
    ]),
  );

  // per-level held-out success and the warm start (neural policy; nothing for the table)
  const levels = levelReport(results);
  Object.assign(metrics, levels.metrics);
  const curves = armCurves(results, {
    success: (u) => u.success,
    observation_token_action_rate: (u) => u.observationTokenActionRate,
    loss_denominator: (u) => u.lossDenominator,
    action_tokens: (u) => u.modelTokensPerTrajectory,
    env_tokens: (u) => u.envTokensPerTrajectory,
    loss_tokens: (u) => u.lossTokensPerTrajectory,
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
      maskConclusion(correct, flipped, mode),
      ...maskCaveats(cfg.eval_tasks, cfg.policy),
      ...levels.notes,
    ],
    plots: {
      success: { title: 'Training success by mask', y: 'fraction of trajectories' },
      observation_token_action_rate: {
        title: 'Observation tokens emitted as actions',
        y: 'observation tokens / model tokens',
      },
      loss_denominator: { title: `Loss denominator (${mode})`, y: 'denominator' },
      loss_tokens: { title: 'Tokens the loss counts per trajectory', y: 'tokens with mask 1' },
      env_tokens: { title: 'Environment tokens per trajectory', y: 'tokens' },
    },
  });
}

/** The closing sentence, drawn from the measured numbers. */
export function maskConclusion(correct: ArmResult, flipped: ArmResult, mode: LossAggMode): string {
  const c = correct.evaluation;
  const f = flipped.evaluation;
  const tc = pooledTraining(correct);
  const tf = pooledTraining(flipped);
  const ratio =
    c.observationTokenActionRate > 0 ? f.observationTokenActionRate / c.observationTokenActionRate : Infinity;
  const clear = f.observationTokenActionRate - c.observationTokenActionRate > 0.01 && ratio > 2;
  const effect = clear
    ? `With environment tokens masked 1 the policy emits observation tokens as actions at ${percent(f.observationTokenActionRate)} of its decisions vs ${percent(c.observationTokenActionRate)} with the correct mask (${Number.isFinite(ratio) ? `${ratio.toFixed(1)}x` : 'from 0'}), and held-out success is ${fixed(f.success, 3)} vs ${fixed(c.success, 3)}.`
    : `The predicted effect did not clearly appear in this run: observation tokens emitted as actions ${percent(f.observationTokenActionRate)} (flipped) vs ${percent(c.observationTokenActionRate)} (correct); held-out success ${fixed(f.success, 3)} vs ${fixed(c.success, 3)}.`;
  return `${effect} The ${mode} loss counted ${tf.lossTokensPerTrajectory.toFixed(1)} tokens per trajectory with the flipped mask (${tf.envTokensPerTrajectory.toFixed(1)} of them environment tokens) vs ${tc.lossTokensPerTrajectory.toFixed(1)} with the correct one; mean denominator ${tf.meanLossDenominator.toFixed(1)} vs ${tc.meanLossDenominator.toFixed(1)}.`;
}

function maskCaveats(evalTasks: number, policy: 'table' | 'neural'): string[] {
  return [
    policy === 'neural'
      ? 'The policy is a small GRU sequence model reading the whole transcript (the prompted env: the task is written in the prompt, 1-3 tool calls): environment tokens trained as actions move shared parameters, so they can change decisions in contexts the mask never touched.'
      : 'The policy is a 36-context softmax table, not an LLM: it cannot tell a digit that will be correct from one that will not, so any probability moved onto observation tokens becomes a protocol error.',
    `observation_token_action_rate is measured on ${evalTasks} held-out tasks (one sample each) after training; train_* columns pool every training batch.`,
  ];
}

export const mask: Experiment<typeof MASK_OPTIONS> = {
  name: 'mask',
  summary:
    'token-level env: correct response mask vs environment tokens masked 1 (observation tokens emitted as actions)',
  options: MASK_OPTIONS,
  // Headline comparisons with --seeds: the wrong mask vs the correct one.
  comparisons: () => ({
    baseline: 'correct',
    arms: ['flipped'],
    metrics: ['eval_success', 'observation_token_action_rate', 'protocol_error_rate'],
  }),
  run: runMask,
  format: formatMask,
};
