/**
 * `labs run --experiment saturation`: does an all-correct group carry nothing to learn? (course:
 * "New case: does an all-correct group really carry nothing to learn?")
 *
 * The token-level env (a compute tool that slips `tool_error_rate` of the time; `verify` costs
 * ~10 tokens and repairs a wrong number). A tabular policy is trained with binary-reward GRPO for
 * `warmup_updates` updates — to saturation, where most groups are all right and carry no gradient —
 * and then continues in arms that differ only in how all-right groups are treated:
 * - `binary`: plain GRPO, all-right groups get advantage 0;
 * - one arm per ranker (`shorter`, `verified`, `random`, `rubric`; see rankers.ts): the passes of an
 *   all-right group get `lambda (q − mean q)/(std q + eps)` from the ranker's quality score q (core
 *   advantageRedistribution.ts). Only all-right groups are redistributed, so no pass is ever ranked
 *   below a fail of its group; the pass condition is unchanged.
 * Independent quality, outside every ranker: a pass's action sequence re-played on its task with the
 * tool slip rate raised to `robust_tool_error_rate`, `robust_replays` times (its robustness).
 * Measured per arm: the fraction of groups that still carry a gradient after saturation, held-out
 * verify rate, mean length and success at the training slip rate and at the raised one, and the
 * Spearman correlation between the ranker's score and the independent quality within all-right groups.
 * Definitions (tables.arms): `gradient_group_fraction_after_saturation` = groups with a non-zero
 * advantage on some row (mixed + redistributed all-right) / all groups, over the arm's updates;
 * `verify_rate`, `mean_length`, `eval_success` on the held-out tasks after the arm, at the training
 * slip rate; `eval_success_robust` the same tasks at `robust_tool_error_rate`; `ranker_spearman` the
 * mean over the arm's all-right groups of the within-group Spearman rho (average ranks) between ranker
 * score and replay success, over the groups where both vary (NaN for binary, or when none did).
 *
 * A teaching construction after the MiMo-V2.6-Flash RL model card's Groupwise Reward Synthesis and
 * Groupwise Advantage Redistribution; the card publishes no formulas and this is not its system.
 */
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import { contextCount, VOCAB_SIZE } from '../../envs/tokenArithmetic.js';
import { ContextPolicy } from '../../policy/contextPolicy.js';
import { Rng } from '../../random.js';
import { Optimizer } from '../../train/adam.js';
import { RANKER_NAMES, type RankerName, RUBRIC_FEATURES, Rubric } from '../../train/rankers.js';
import { tokenEnvRollout } from '../../train/rollout.js';
import {
  cloneState,
  initialTokenLogits,
  type LearnerState,
  type LearnerStreams,
  type SaturationUpdate,
  saturationUpdate,
  type UpdateSettings,
} from '../../train/saturationLearner.js';
import { measureEpisodes } from '../../train/tokenMeasures.js';
import { fixed, round6 } from '../armReport.js';
import { option } from '../options.js';
import { startRecord } from '../record.js';
import { evaluationTasks, NEURAL_POLICY_ONLY, TOKEN_LAB_OPTIONS } from '../tokenLab.js';
import type { Experiment, JsonValue, PlotHint, RunContext, RunRecord } from '../types.js';
import { formatSaturation } from './saturationSummary.js';

// --- config -----------------------------------------------------------------------------------------
export const SATURATION_OPTIONS = TOKEN_LAB_OPTIONS.omit({
  overlong_buffer: true,
  unbounded_budget: true,
  updates: true,
  ...NEURAL_POLICY_ONLY, // saturation trains the tabular policy only
}).extend({
  // 150: the token lab's default run length; by then the binary policy verifies and most groups are
  // all right (the record's <metric>.warmup_end metrics say how saturated each seed actually is).
  warmup_updates: option(
    z.number().int().min(0).max(10000),
    150,
    'binary-GRPO updates before the arms branch (training to saturation; shared by every arm)',
  ),
  updates: option(z.number().int().min(1).max(10000), 100, 'updates of each arm after saturation'),
  ranker: option(
    z.enum(['all', ...RANKER_NAMES]),
    'all',
    "arms besides binary: 'all' (one per ranker) or one of shorter | verified | random | rubric",
  ),
  // 1: a quality gap within an all-right group then moves the policy as much as a pass/fail gap in
  // a mixed group (both are unit-std advantages); 0 reproduces binary.
  lambda: option(
    z.number().min(0).finite(),
    1,
    'scale of the redistributed advantages in all-right groups (>= 0; 0 = binary)',
  ),
  // 0.6: twice the training slip rate, so an unverified pass wins ~40% of replays, a verified one 100%.
  robust_tool_error_rate: option(
    z.number().min(0).max(1),
    0.6,
    'tool slip rate of the independent quality (replays) and of the robust evaluation',
    'probability',
  ),
  robust_replays: option(
    z.number().int().min(1).max(10000),
    16,
    're-plays of each all-right pass that measure its independent quality (robustness)',
  ),
});

/** The parsed config `run` receives (snake_case, every option present). */
export type SaturationConfig = z.output<typeof SATURATION_OPTIONS>;

/** The arms of a run: binary first, then the chosen rankers. */
export function saturationArms(
  ranker: SaturationConfig['ranker'],
): { arm: string; ranker: RankerName | null }[] {
  const rankers = ranker === 'all' ? RANKER_NAMES : [ranker];
  return [{ arm: 'binary', ranker: null }, ...rankers.map((r) => ({ arm: r, ranker: r }))];
}

function checkSaturationOptions(cfg: SaturationConfig): void {
  if (cfg.robust_tool_error_rate <= cfg.tool_error_rate) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      `robust_tool_error_rate=${cfg.robust_tool_error_rate} must exceed tool_error_rate=${cfg.tool_error_rate}: it is the raised slip rate of the independent quality`,
      { details: { field: 'robust_tool_error_rate', value: cfg.robust_tool_error_rate } },
    );
  }
}

function runSaturation(cfg: SaturationConfig, ctx: RunContext): RunRecord {
  const record = startRecord('saturation', cfg, ctx.seed);
  checkSaturationOptions(cfg);
  const root = new Rng(ctx.seed);
  const env = { budget: cfg.budget, toolErrorRate: cfg.tool_error_rate, thinkBuckets: cfg.think_buckets };
  const settings = (ranker: RankerName | null): UpdateSettings => ({
    groupsPerUpdate: cfg.tasks_per_update,
    groupSize: cfg.group_size,
    maxOperand: cfg.max_operand,
    env,
    std: cfg.std,
    ppoEpochs: cfg.ppo_epochs,
    clipRatio: cfg.clip_ratio,
    ranker,
    lambda: cfg.lambda,
    robustToolErrorRate: cfg.robust_tool_error_rate,
    robustReplays: cfg.robust_replays,
  });
  const streams = (phase: string): LearnerStreams => ({
    tasks: root.fork(`saturation/${phase}/tasks`),
    pick: root.fork(`saturation/${phase}/policy`),
    noise: root.fork(`saturation/${phase}/noise`),
    ranker: root.fork(`saturation/${phase}/ranker`),
    replay: root.fork(`saturation/${phase}/replay`),
  });
  const arms = saturationArms(cfg.ranker);
  const total = cfg.warmup_updates + arms.length * cfg.updates;

  // --- phase 1: binary GRPO to saturation (shared by every arm) ------------------------------------
  const warm: LearnerState = {
    policy: new ContextPolicy(contextCount(cfg.think_buckets), VOCAB_SIZE, {
      tokenLogits: initialTokenLogits(cfg.observation_logit_init),
    }),
    optimizer: new Optimizer(contextCount(cfg.think_buckets) * VOCAB_SIZE, {
      kind: cfg.optimizer,
      learningRate: cfg.lr,
    }),
    rubric: new Rubric(),
  };
  const warmStreams = streams('warmup');
  const warmup: SaturationUpdate[] = [];
  for (let u = 0; u < cfg.warmup_updates; u++) {
    warmup.push(saturationUpdate(warm, warmStreams, settings(null)));
    ctx.onProgress?.(u + 1, total);
  }

  // the rubric at the branch point: which features separated passes from fails in the warm-up
  const rubricWeights = rubricWeightRows(warm.rubric);

  // --- phase 2: the arms branch from the same state, with the same streams --------------------------
  const results = arms.map((a, k) => {
    const state = cloneState(warm);
    const s = streams('arms');
    const updates: SaturationUpdate[] = [];
    for (let u = 0; u < cfg.updates; u++) {
      updates.push(saturationUpdate(state, s, settings(a.ranker)));
      ctx.onProgress?.(cfg.warmup_updates + k * cfg.updates + u + 1, total);
    }
    return { ...a, updates, state };
  });

  // --- measurements ------------------------------------------------------------------------------------
  const evalTasks = evaluationTasks(ctx.seed, cfg);
  const evaluate = (policy: ContextPolicy, toolErrorRate: number) =>
    measureEpisodes(
      tokenEnvRollout(
        policy.probabilities(),
        evalTasks,
        1,
        root.fork('saturation/eval-policy'),
        root.fork('saturation/eval-noise'),
        {
          ...env,
          toolErrorRate,
        },
      ),
    );
  const rows = results.map((r) => {
    const e = evaluate(r.state.policy, cfg.tool_error_rate);
    const robust = evaluate(r.state.policy, cfg.robust_tool_error_rate);
    const spearmans = r.updates.flatMap((u) => u.spearmans);
    const sum = (pick: (u: SaturationUpdate) => number) => r.updates.reduce((s, u) => s + pick(u), 0);
    return {
      row: {
        arm: r.arm,
        ranker: r.ranker ?? 'none',
        lambda: r.ranker === null ? 0 : cfg.lambda,
        gradient_group_fraction_after_saturation: round6(sum((u) => u.gradientGroups) / sum((u) => u.groups)),
        verify_rate: round6(e.verifyRate),
        mean_length: round6(e.meanLength),
        eval_success: round6(e.success),
        eval_success_robust: round6(robust.success),
        ranker_spearman: round6(
          spearmans.length ? spearmans.reduce((a, b) => a + b, 0) / spearmans.length : Number.NaN,
        ),
      },
      audit: {
        arm: r.arm,
        all_right_groups: sum((u) => u.allRightGroups),
        tied_groups: sum((u) => u.tiedGroups),
        groups_with_spearman: spearmans.length,
        negative_spearman_groups: spearmans.filter((x) => x < 0).length,
        groups: sum((u) => u.groups),
      },
    };
  });
  const armRows: Record<string, JsonValue>[] = rows.map((r) => r.row);
  const metrics = saturationMetrics(armRows, warmup);

  const curves = saturationCurves(cfg, warmup, results);

  return record.finish({
    metrics,
    curves,
    tables: { arms: armRows, ranker_audit: rows.map((r) => r.audit), rubric_weights: rubricWeights },
    notes: [saturationConclusion(armRows, metrics, cfg), ...saturationCaveats(cfg)],
    plots: SATURATION_PLOTS,
  });
}

/** What the arms showed, from the measured numbers. */
export function saturationConclusion(
  arms: readonly Record<string, JsonValue>[],
  metrics: Record<string, JsonValue>,
  cfg: Pick<SaturationConfig, 'warmup_updates' | 'robust_tool_error_rate' | 'tool_error_rate'>,
): string {
  const n = (v: JsonValue | undefined) => (typeof v === 'number' ? v : Number.NaN);
  const base = arms[0];
  const head = `After ${cfg.warmup_updates} binary updates the policy passed ${fixed(n(metrics['train_success.warmup_end']), 3)} of training trajectories with ${fixed(n(metrics['all_right_fraction.warmup_end']), 3)} of groups all right.`;
  const binary = base
    ? ` binary: ${fixed(n(base.gradient_group_fraction_after_saturation), 3)} of groups carried a gradient, verify ${fixed(n(base.verify_rate), 3)}, success ${fixed(n(base.eval_success), 3)} at slip rate ${cfg.tool_error_rate} / ${fixed(n(base.eval_success_robust), 3)} at ${cfg.robust_tool_error_rate}.`
    : '';
  const others = arms.slice(1).map((a) => {
    const dRobust = n(a.eval_success_robust) - n(base?.eval_success_robust);
    return ` ${a.arm}: gradient groups ${fixed(n(a.gradient_group_fraction_after_saturation), 3)}, verify ${fixed(n(a.verify_rate), 3)}, length ${fixed(n(a.mean_length), 1)}, robust success ${fixed(n(a.eval_success_robust), 3)} (${dRobust >= 0 ? '+' : ''}${fixed(dRobust, 3)} vs binary), ranker-vs-robustness Spearman ${fixed(n(a.ranker_spearman), 2)}.`;
  });
  return head + binary + others.join('');
}

function saturationCaveats(cfg: SaturationConfig): string[] {
  return [
    `One seed shows one draw: compare arms with --seeds (arms of a seed branch from the same saturated policy and share tasks and streams, so the <metric>.<arm>_minus_binary differences are the comparison); held-out numbers are on ${cfg.eval_tasks} tasks.`,
    'No LLM and not MiMo-V2.6-Flash: a tabular policy on a toy tool protocol, with rankers built for this environment; it shows the mechanism (what a ranker rewards inside all-right groups is what the policy learns), not the size of any effect in a real system.',
  ];
}

/** `tables.rubric_weights`: the rubric at the branch point, which features separated passes from fails in the warm-up. */
function rubricWeightRows(rubric: Rubric): Record<string, JsonValue>[] {
  return (['add', 'sub'] as const).map((kind) => {
    const { weight } = rubric.weights(kind);
    const row: Record<string, JsonValue> = { task_kind: kind, mixed_groups: rubric.groupsSeen(kind) };
    RUBRIC_FEATURES.forEach((f, i) => {
      row[f] = round6(weight[i] as number);
    });
    return row;
  });
}

/** The warm-up's end (last 10 updates), each arm's measures and their differences from `binary`. */
function saturationMetrics(
  armRows: Record<string, JsonValue>[],
  warmup: SaturationUpdate[],
): Record<string, JsonValue> {
  const metrics: Record<string, JsonValue> = {};
  const lastWarm = warmup.slice(-10);
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
  metrics['train_success.warmup_end'] = round6(mean(lastWarm.map((u) => u.success)));
  metrics['all_right_fraction.warmup_end'] = round6(mean(lastWarm.map((u) => u.allRightGroups / u.groups)));
  metrics['verify_rate.warmup_end'] = round6(mean(lastWarm.map((u) => u.verifyRate)));
  const measures = [
    'gradient_group_fraction_after_saturation',
    'verify_rate',
    'mean_length',
    'eval_success',
    'eval_success_robust',
    'ranker_spearman',
  ] as const;
  for (const row of armRows) for (const m of measures) metrics[`${m}.${row.arm}`] = row[m] as number;
  const base = armRows[0] as Record<string, JsonValue>;
  for (const row of armRows.slice(1)) {
    for (const m of measures.slice(0, 5)) {
      metrics[`${m}.${row.arm}_minus_binary`] = round6((row[m] as number) - (base[m] as number));
    }
  }
  return metrics;
}

/** The curves: the shared warm-up, then each arm's own updates (x = update 1..warmup+updates). */
function saturationCurves(
  cfg: SaturationConfig,
  warmup: SaturationUpdate[],
  results: readonly { arm: string; updates: SaturationUpdate[] }[],
): Record<string, number[]> {
  const curves: Record<string, number[]> = {
    update: Array.from({ length: cfg.warmup_updates + cfg.updates }, (_, i) => i + 1),
  };
  const families: Record<string, (u: SaturationUpdate) => number> = {
    success: (u) => u.success,
    verify_rate: (u) => u.verifyRate,
    mean_length: (u) => u.meanLength,
    gradient_group_fraction: (u) => u.gradientGroups / u.groups,
    all_right_fraction: (u) => u.allRightGroups / u.groups,
  };
  for (const [family, pick] of Object.entries(families)) {
    for (const r of results)
      curves[`${family}.${r.arm}`] = [...warmup, ...r.updates].map((u) => round6(pick(u)));
  }
  return curves;
}

const SATURATION_PLOTS: Record<string, PlotHint> = {
  success: { title: 'Training success (the pass condition)', y: 'fraction of trajectories' },
  gradient_group_fraction: { title: 'Groups that carry a gradient', y: 'fraction of groups' },
  all_right_fraction: { title: 'All-right groups', y: 'fraction of groups' },
  verify_rate: { title: 'Trajectories that verify', y: 'fraction of trajectories' },
  mean_length: { title: 'Mean transcript length', y: 'tokens' },
};

export const saturation: Experiment<typeof SATURATION_OPTIONS> = {
  name: 'saturation',
  summary:
    'all-correct groups after saturation: binary GRPO vs advantage redistribution by a ranker (shorter, verified, random, rubric), audited against independent robustness',
  options: SATURATION_OPTIONS,
  check: checkSaturationOptions,
  run: runSaturation,
  format: formatSaturation,
};
