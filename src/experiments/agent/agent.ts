/**
 * `labs run --experiment agent`: the course's first experiment (`labs/agent.py` on the course page).
 *
 * A [2 kinds][3 stages][4 actions] softmax table (24 logits, zero = uniform) learns the tool protocol
 * read -> add|sub -> submit in the tool-arithmetic env by group-standardised on-policy REINFORCE:
 * per update K tasks x G sampled episodes, GRPO advantages from the core kernel (population std by
 * default, as the course's teaching code), one gradient step. Success on held-out tasks is measured
 * before and after, next to what the course's first section predicts about all-wrong / all-right
 * groups. The tools do the arithmetic: this measures protocol learning, not an LLM reasoning gain.
 *
 * Reads top to bottom: config, setup, evaluation before, training loop with per-update measurements,
 * evaluation after, record.
 */
import { z } from 'zod';
import { LabError } from '../../core/errors.js';
import {
  ACTION_NAMES,
  checkOperandRange,
  KIND_NAMES,
  type OperandRange,
  OUTCOMES,
  type Outcome,
  PROTOCOL_ERROR_KINDS,
  STAGE_NAMES,
  type Stage,
  sampleTasks,
  type Task,
  type TaskKind,
  uniformSuccessProbability,
  zeroOperandProbability,
} from '../../envs/toolArithmetic.js';
import { actionProbs, createLogits, NUM_LOGITS } from '../../policy/tabular.js';
import { Rng } from '../../random.js';
import { evaluatePolicy, protocolSuccessProbability } from '../../train/evaluate.js';
import {
  ascend,
  collectGroups,
  reinforceGradient,
  reinforceGroupAdvantages,
  updateDiagnostics,
} from '../../train/groupReinforce.js';
import { asOptionError, defineOptions, option } from '../options.js';
import { startRecord } from '../record.js';
import type { Experiment, JsonValue, PlotHint, RunContext, RunRecord } from '../types.js';
import { formatAgent } from './agentSummary.js';

// ---------------------------------------------------------------------------------------------------
// Config. Defaults: 16 tasks x 8 samples x 150 updates = 19,200 training trajectories, as the course.
// lr = 2 was chosen by sweeping lr in {0.3, 0.5, 1, 2, 3, 10} at K=16, G=8 over seeds 1..20 and
// reading the exact protocol probability of the final table (not the noisy 400-task eval): 0.73,
// 0.94, 0.983, 0.993, 0.996, 0.999. Learning behaves like gradient flow in lr x updates, so halving K
// while doubling updates at the same lr gives the same result.
// ---------------------------------------------------------------------------------------------------

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);

/**
 * Episodes held in memory per update (K x G). A batch of 10^6 episodes takes a few hundred MB; far
 * beyond it Node aborts with "heap out of memory" (measured: K = 10^7, G = 8 died after 38 s at 4.8 GB)
 * instead of an error that names the options.
 */
export const MAX_AGENT_BATCH = 1_000_000;

export const AGENT_OPTIONS = defineOptions({
  lr: option(
    z.number().positive().finite(),
    2,
    'learning rate of the gradient-ascent step on the 24 logits (try 0.5..10)',
  ),
  groups_per_update: option(int(1, MAX_AGENT_BATCH), 16, 'K: tasks per update (each is one group)'),
  group_size: option(
    int(1, 4096),
    8,
    'G: sampled episodes per task; 1 makes every group a singleton (see singleton)',
  ),
  updates: option(int(1, 100_000), 150, 'number of gradient steps; trajectories = K x G x updates'),
  std: option(
    z.enum(['population', 'unbiased', 'none']),
    'population',
    "group std: 'population' (the course), 'unbiased' (verl's torch.std), 'none' (Dr.GRPO)",
  ),
  epsilon: option(z.number().min(0).finite(), 1e-6, 'added to the group std (verl 1e-6)', 'reward units'),
  singleton: option(
    z.enum(['verl', 'zero', 'error']),
    'verl',
    "advantage of a group of one: 'verl' r/(1+eps), 'zero', 'error'",
  ),
  reduce: option(
    z.enum(['mean', 'sum']),
    'mean',
    "'mean': divide the summed A x sum_t grad log pi by K x G (verl seq-mean-token-sum); 'sum': do not",
  ),
  eval: option(
    z.enum(['sample', 'greedy']),
    'sample',
    "held-out evaluation: 'sample' actions from the policy (the course) or take the 'greedy' argmax",
  ),
  eval_tasks: option(int(1, 1_000_000), 400, 'held-out evaluation tasks (their own seeded stream)'),
  operand_min: option(
    z.number().int(),
    0,
    'smallest operand; with 0 in range, b = 0 lets the wrong tool succeed (counted as coincidental)',
  ),
  operand_max: option(z.number().int(), 99, 'largest operand (inclusive)'),
});

/** The parsed config `run` receives (snake_case, every option present). */
export type AgentConfig = z.output<typeof AGENT_OPTIONS>;

// ---------------------------------------------------------------------------------------------------

/**
 * The checks across options (BAD_OPTION_VALUE): the operand range, the batch size against memory, and
 * a singleton rule that would refuse every group. Run before any seed (Experiment.check) and by run.
 */
export function checkAgentOptions(cfg: AgentConfig): void {
  const K = cfg.groups_per_update;
  const G = cfg.group_size;
  asOptionError(() => checkOperandRange({ operandMin: cfg.operand_min, operandMax: cfg.operand_max }));
  if (K * G > MAX_AGENT_BATCH) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      `groups_per_update x group_size = ${K} x ${G} = ${K * G} episodes per update exceeds ${MAX_AGENT_BATCH} (memory); use more updates instead`,
      { details: { field: 'groups_per_update', value: K * G } },
    );
  }
  if (G === 1 && cfg.singleton === 'error') {
    throw new LabError(
      'BAD_OPTION_VALUE',
      "group_size=1 makes every group a singleton and singleton='error' refuses them: use singleton=verl|zero or group_size >= 2",
      { details: { field: 'singleton' } },
    );
  }
}

async function runAgent(cfg: AgentConfig, ctx: RunContext): Promise<RunRecord> {
  const record = startRecord('agent', cfg, ctx.seed);
  checkAgentOptions(cfg);
  const K = cfg.groups_per_update;
  const G = cfg.group_size;
  const range: OperandRange = { operandMin: cfg.operand_min, operandMax: cfg.operand_max };

  // Setup: independent labelled streams, so the held-out tasks are the same for every training config.
  const root = new Rng(ctx.seed);
  const trainTaskRng = root.fork('agent/train-tasks');
  const trainPolicyRng = root.fork('agent/train-policy');
  const evalTasks = sampleTasks(root.fork('agent/eval-tasks'), cfg.eval_tasks, range);
  const logits = createLogits();
  const grad = new Float64Array(NUM_LOGITS);

  // Evaluation before training (the uniform policy).
  const before = evaluatePolicy(logits, evalTasks, root.fork('agent/eval-before'), cfg.eval);

  // Training loop.
  const curves = emptyCurves();
  const seenTasks = new Set<string>();
  let zeroAdvantageTotal = 0;
  for (let u = 0; u < cfg.updates; u++) {
    const tasks = sampleTasks(trainTaskRng, K, range);
    for (const t of tasks) seenTasks.add(taskKey(t));
    curves.protocol_prob.push(protocolSuccessProbability(logits)); // the policy that samples this batch

    const batch = collectGroups(logits, tasks, G, trainPolicyRng);
    const advantages = reinforceGroupAdvantages(batch, {
      std: cfg.std,
      epsilon: cfg.epsilon,
      singleton: cfg.singleton,
    });
    reinforceGradient(logits, batch.episodes, advantages, cfg.reduce, grad);
    const gradNorm = ascend(logits, grad, cfg.lr);
    const overflow = logits.findIndex((z) => !Number.isFinite(z));
    if (overflow >= 0) {
      // Say which option did it; the next sampling step would only report a non-finite logit.
      throw new LabError(
        'NON_FINITE',
        `update ${u + 1}: lr=${cfg.lr} (reduce=${cfg.reduce}) pushed logit ${overflow} to ${logits[overflow]}; use a smaller lr (typical 0.5..10)`,
        { details: { field: 'lr', value: cfg.lr, update: u + 1 } },
      );
    }

    const d = measureUpdate(curves, u, batch, advantages, gradNorm);
    zeroAdvantageTotal += d.zeroAdvantage * batch.episodes.length;
    ctx.onProgress?.(u + 1, cfg.updates);
  }

  // Evaluation after training, on the same held-out tasks.
  const after = evaluatePolicy(logits, evalTasks, root.fork('agent/eval-after'), cfg.eval);

  // Measurements.
  const trainTrajectories = K * G * cfg.updates;
  const pZero = zeroOperandProbability(range);
  const allWrongTheory = (1 - pZero) * (63 / 64) ** G + pZero * (62 / 64) ** G;
  const protocolErrors = (r: typeof before) =>
    PROTOCOL_ERROR_KINDS.reduce((acc, k) => acc + r.counts[k], 0) / r.tasks;
  const evalSeenInTraining = evalTasks.filter((t) => seenTasks.has(taskKey(t))).length;

  const metrics: Record<string, JsonValue> = {
    eval_success_before: before.success,
    eval_success_after: after.success,
    uniform_success_theory: uniformSuccessProbability(range),
    train_trajectories: trainTrajectories,
    eval_tasks: cfg.eval_tasks,
    eval_protocol_error_rate_before: protocolErrors(before),
    eval_protocol_error_rate_after: protocolErrors(after),
    eval_wrong_answer_rate_after: after.counts.wrong_answer / after.tasks,
    eval_coincidental_successes_after: after.coincidental,
    protocol_success_probability_after: protocolSuccessProbability(logits),
    all_wrong_fraction_theory_init: allWrongTheory,
    all_wrong_fraction_first_update: curves.all_wrong[0] ?? 0,
    all_right_fraction_last_update: curves.all_right[curves.all_right.length - 1] ?? 0,
    zero_advantage_fraction_overall: zeroAdvantageTotal / trainTrajectories,
    eval_tasks_seen_in_training: evalSeenInTraining,
  };

  const outcomeRows = OUTCOMES.map((o) => ({
    outcome: o,
    before: before.counts[o] / before.tasks,
    after: after.counts[o] / after.tasks,
  }));
  const probabilityRows = learnedProbabilityRows(logits);

  return record.finish({
    metrics,
    curves: curveRecordOf(curves, G),
    tables: { eval_outcomes: outcomeRows, learned_probabilities: probabilityRows },
    notes: [
      'update: group-standardised on-policy REINFORCE, one gradient step per batch; no PPO clip, no ratio (pi_old = pi), no reference KL, no token mask.',
      'the tools do the arithmetic: the gain is a learned 3-step tool protocol in a 24-logit table, not an LLM reasoning gain; no LLM weights are involved.',
      `held-out tasks come from their own seeded stream; ${evalSeenInTraining} of ${cfg.eval_tasks} coincide by value with a training task, which cannot help: the policy never sees operands.`,
      ...(pZero > 0
        ? [
            `operands include 0: for b = 0 the wrong tool gives the right number and is rewarded (P(b=0) = ${pZero.toPrecision(3)}); such successes are counted as coincidental.`,
          ]
        : []),
    ],
    plots: AGENT_PLOTS,
  });
}

/** The per-update series of a run, filled by {@link measureUpdate}. */
function emptyCurves() {
  return {
    update: [] as number[],
    all_wrong: [] as number[],
    mixed: [] as number[],
    all_right: [] as number[],
    singleton: [] as number[],
    zero_adv: [] as number[],
    train_success: [] as number[],
    protocol_prob: [] as number[],
    grad_norm: [] as number[],
    outcomes: Object.fromEntries(OUTCOMES.map((o) => [o, [] as number[]])),
  };
}

type AgentCurves = ReturnType<typeof emptyCurves>;

/** Appends update `u`'s measures (group kinds, zero advantages, success, gradient norm, outcomes) to `curves`. */
function measureUpdate(
  curves: AgentCurves,
  u: number,
  batch: ReturnType<typeof collectGroups>,
  advantages: ReturnType<typeof reinforceGroupAdvantages>,
  gradNorm: number,
): ReturnType<typeof updateDiagnostics> {
  const d = updateDiagnostics(batch, advantages);
  curves.update.push(u + 1);
  curves.all_wrong.push(d.allWrong);
  curves.mixed.push(d.mixed);
  curves.all_right.push(d.allRight);
  curves.singleton.push(d.singleton);
  curves.zero_adv.push(d.zeroAdvantage);
  curves.train_success.push(d.success);
  curves.grad_norm.push(gradNorm);
  const outcomeCounts = Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
  for (const e of batch.episodes) outcomeCounts[e.outcome] += 1;
  for (const o of OUTCOMES) curves.outcomes[o]?.push(outcomeCounts[o] / batch.episodes.length);
  return d;
}

/** The record's curves: `<family>.<series>` keys (docs/architecture.md §4); singletons only when G = 1. */
function curveRecordOf(curves: AgentCurves, G: number): Record<string, number[]> {
  const curveRecord: Record<string, number[]> = {
    update: curves.update,
    'group_kind.all_wrong': curves.all_wrong,
    'group_kind.mixed': curves.mixed,
    'group_kind.all_right': curves.all_right,
    ...(G === 1 ? { 'group_kind.singleton': curves.singleton } : {}),
    'zero_advantage.fraction': curves.zero_adv,
    'success.train': curves.train_success,
    'success.protocol_probability': curves.protocol_prob,
    'grad_norm.l2': curves.grad_norm,
  };
  for (const o of OUTCOMES) curveRecord[`train_outcome.${o}`] = curves.outcomes[o] ?? [];
  return curveRecord;
}

/** `tables.learned_probabilities`: the policy's action probabilities per (task kind, stage). */
function learnedProbabilityRows(logits: Float64Array): Record<string, JsonValue>[] {
  const rows: Record<string, JsonValue>[] = [];
  for (let k = 0; k < KIND_NAMES.length; k++) {
    for (let s = 0; s < STAGE_NAMES.length; s++) {
      const p = actionProbs(logits, k as TaskKind, s as Stage);
      const row: Record<string, JsonValue> = {
        kind: KIND_NAMES[k] as string,
        stage: STAGE_NAMES[s] as string,
      };
      ACTION_NAMES.forEach((a, j) => {
        row[a] = p[j] as number;
      });
      rows.push(row);
    }
  }
  return rows;
}

const AGENT_PLOTS: Record<string, PlotHint> = {
  group_kind: { title: 'Groups per update by kind', y: 'fraction of groups', kind: 'stacked-area' },
  zero_advantage: {
    title: 'Trajectories with zero advantage',
    y: 'fraction of trajectories',
    kind: 'line',
  },
  success: { title: 'Training success', y: 'success rate', kind: 'line' },
  train_outcome: { title: 'Training outcomes', y: 'fraction of trajectories', kind: 'stacked-area' },
  grad_norm: { title: 'Gradient norm', y: 'L2 norm of dJ/dz', kind: 'line' },
};

function taskKey(t: Task): string {
  return `${t.kind}:${t.a}:${t.b}`;
}

export const agent: Experiment<typeof AGENT_OPTIONS> = {
  name: 'agent',
  summary:
    "the course's first experiment: a [2,3,4] tabular policy learns read -> add/sub -> submit by group-standardised REINFORCE; held-out success before/after",
  options: AGENT_OPTIONS,
  check: checkAgentOptions,
  run: runAgent,
  format: formatAgent,
};
