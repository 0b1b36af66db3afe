/**
 * `labs run --experiment filter`: what to do with zero-variance groups (course: all-wrong and
 * all-right groups carry no signal).
 *
 * Five arms on one learner (`env=agent`: the agent experiment's tool protocol; `env=token`: the
 * token lab's env with PPO), the policy-gradient loss aggregated by token-mean over policy tokens:
 * - `keep`: verl's default: every generated group is trained on; zero-variance groups have advantage
 *   0 but their tokens count in the token-mean denominator;
 * - `exclude_from_denominator`: the same batch, zero-variance groups out of the denominator (a TRL
 *   pull request's `dapo_zv`);
 * - `dynamic_sampling`: DAPO / verl `algorithm.filter_groups`: drop zero-variance groups and sample
 *   further batches until `groups_per_update` informative groups are collected (the first ones are
 *   kept, as verl trims to the train batch size), at most `max_extra_gen_batches` extra batches;
 * - `kl`: `keep` plus verl's KL loss (k3, coefficient `kl_beta`) to the initial policy on every row;
 * - `kl_masked`: the same with zero-variance groups masked out of the KL term (a TRL pull request).
 * Every arm but `keep` and `kl` sets the advantages of the rows its rule flags to 0: a no-op for
 * exactly equal rewards, but with a tolerance on noisy rewards it also removes the noise advantages.
 * Which groups are zero-variance is decided by `zero_variance_rule` / `zero_variance_tol` on the
 * training reward. Measured per arm: success vs updates and vs generated trajectories, the
 * denominator, the fraction of generated rows that reach a gradient, KL to the reference; and, on the
 * `keep` arm's rollouts scored with partial credit plus float noise, what each zero-variance rule
 * (exact / std / range, whole group / leave-one-out) flags and what it does to the advantages.
 */
import { z } from 'zod';
import { grpoScalarAdvantages } from '../../core/grpo.js';
import { type ZeroVarianceRule, zeroVarianceRows } from '../../core/zeroVariance.js';
import { Rng } from '../../random.js';
import {
  agentLearner,
  type FilterLearner,
  type Generated,
  tokenLearner,
} from '../../train/filterLearners.js';
import { fixed, pairedDifferences, round6 } from '../armReport.js';
import { defineOptions, option } from '../options.js';
import { startRecord } from '../record.js';
import { TOKEN_LAB_OPTIONS } from '../tokenLab.js';
import type { Experiment, JsonValue, RunContext, RunRecord } from '../types.js';
import { formatFilter } from './filterSummary.js';
import {
  accumulateRules,
  groupIndex,
  ruleAccumulators,
  ruleRows,
  ZERO_VARIANCE_RULE_METRICS,
} from './zeroVarianceRules.js';

// --- config -------------------------------------------------------------------------------------------
const int = (min: number, max: number) => z.number().int().min(min).max(max);

/** The arms, in report order; `keep` is the baseline of the paired differences. */
export const FILTER_ARMS = [
  'keep',
  'exclude_from_denominator',
  'dynamic_sampling',
  'kl',
  'kl_masked',
] as const;
export type FilterArm = (typeof FILTER_ARMS)[number];

/** lr of each env when `lr` is not set (see the option's help). */
export const FILTER_DEFAULT_LR = { agent: 6, token: 0.05 } as const;

export const FILTER_OPTIONS = defineOptions({
  env: option(
    z.enum(['agent', 'token']),
    'agent',
    "'agent': the agent experiment's tool protocol, REINFORCE, one step per update (fast); 'token': the token lab's env, PPO with Adam",
  ),
  policy: option(
    z.enum(['tabular']),
    'tabular',
    "'tabular' (the only policy this experiment supports; the token lab's neural policy is not wired in yet)",
  ),
  updates: option(int(1, 100_000), 150, 'policy updates (each on groups_per_update groups)'),
  groups_per_update: option(int(1, 10_000), 16, 'K: groups (tasks) per update, the train batch size'),
  group_size: option(int(2, 256), 8, 'G: samples per task'),
  // lr: agent 6 = 3 x the agent experiment's 2, because this loss divides by policy tokens (3 per
  // complete episode) instead of trajectories, so 6 gives the same first steps; not swept further.
  // token 0.05 is the token lab's swept default.
  lr: option(
    z.number().positive().finite().nullable(),
    null,
    `step size; null = the env's default (agent ${FILTER_DEFAULT_LR.agent}, token ${FILTER_DEFAULT_LR.token})`,
  ),
  std: option(
    z.enum(['unbiased', 'population', 'none']),
    'unbiased',
    "GRPO std: unbiased (verl's torch.std) | population | none (Dr. GRPO)",
  ),
  zero_variance_rule: option(
    z.enum(['exact', 'std', 'range']),
    'exact',
    "which groups count as zero-variance for the arms: 'exact' equality (verl's np.std > 0 test), population 'std' <= tol, or max - min ('range') <= tol",
  ),
  // 1e-3: far above the reward noise (reward_noise 1e-4, so a noise-only group's range is <= 2e-4) and far
  // below the smallest real difference of the rewards (0.5 of partial credit, 1 of success).
  zero_variance_tol: option(
    z.number().min(0).finite(),
    1e-3,
    'tolerance of the std and range rules (also used by the zero_variance_rules table)',
    'reward units',
  ),
  // 4: bounds dynamic sampling's generation at 5 x the other arms'. verl's max_num_gen_batches is this + 1
  // (verl's 0, unlimited, has no counterpart here).
  max_extra_gen_batches: option(
    int(0, 1000),
    4,
    'dynamic_sampling: extra generation batches allowed per update before training on what was collected',
  ),
  // 0.05: large enough to move the policy within 150 updates; verl's default kl_loss_coef is 0.001.
  kl_beta: option(
    z.number().min(0).finite(),
    0.05,
    'coefficient of the k3 KL loss of the kl arms (verl kl_loss_coef)',
  ),
  reward: option(
    z.enum(['binary', 'partial_noisy']),
    'binary',
    "training reward: 'binary' success, or 'partial_noisy' partial credit (1 / 0.5 wrong answer / 0) plus float noise, rounded through float32",
  ),
  // 1e-4: far above float32 rounding (6e-8 near 1) and verl's eps 1e-6, as a reward model's jitter;
  // with pure float32 rounding (1e-7) eps damps the standardised noise instead.
  reward_noise: option(
    z.number().min(0).max(0.1),
    1e-4,
    'half-width of the uniform noise added to partial credit (partial_noisy and the zero_variance_rules table)',
    'reward units',
  ),
  eval_tasks: option(int(1, 100_000), 400, 'held-out evaluation tasks after training'),
});

/** The parsed config `run` receives. */
export type FilterConfig = z.output<typeof FILTER_OPTIONS>;

/** Per-update measurements of one arm. */
interface ArmTrace {
  arm: FilterArm;
  success: number[];
  generated: number[];
  denominator: number[];
  gradientRows: number[];
  klRef: number[];
  genBatches: number[];
  capHit: number;
  skipped: number;
  finalKl: number;
  evalSuccess: number;
}

/** Noisy partial credit: fround(partial + noise x U(-1, 1)), drawn from `rng`. */
function noisyPartial(partial: Float64Array, noise: number, rng: Rng): Float64Array {
  return Float64Array.from(partial, (p) => Math.fround(p + noise * (2 * rng.next() - 1)));
}

// --- one arm: sample, choose groups, advantages, update, measure --------------------------------------
function trainArm<R>(
  arm: FilterArm,
  learner: FilterLearner<R>,
  cfg: FilterConfig,
  seed: number,
  onScores?: (g: Generated<R>, noisy: Float64Array) => void,
): ArmTrace {
  const K = cfg.groups_per_update;
  const G = cfg.group_size;
  const noiseRng = new Rng(seed).fork('filter/reward-noise');
  const zv = { rule: cfg.zero_variance_rule as ZeroVarianceRule, tol: cfg.zero_variance_tol };
  const t: ArmTrace = {
    arm,
    success: [],
    generated: [],
    denominator: [],
    gradientRows: [],
    klRef: [],
    genBatches: [],
    capHit: 0,
    skipped: 0,
    finalKl: 0,
    evalSuccess: 0,
  };
  let generated = 0;
  let lastSampled: R[] = [];
  for (let u = 0; u < cfg.updates; u++) {
    // --- generation: one batch, or (dynamic_sampling) batches until K informative groups or the cap
    let rows: R[] = [];
    let rewards: number[] = [];
    let tokens: number[] = [];
    let batches = 0;
    for (;;) {
      const g = learner.sample(K);
      const noisy = noisyPartial(g.partial, cfg.reward_noise, noiseRng);
      const reward = cfg.reward === 'binary' ? g.success : noisy;
      batches++;
      generated += g.rows.length;
      if (batches === 1) {
        t.success.push(mean(g.success)); // the on-policy success of the policy before this update
        t.klRef.push(learner.klToRef(g.rows));
        lastSampled = g.rows;
        onScores?.(g, noisy);
      }
      if (arm !== 'dynamic_sampling') {
        rows = g.rows;
        rewards = Array.from(reward);
        tokens = Array.from(g.tokens);
        break;
      }
      const flat = zeroVarianceRows(reward, groupIndex(g.rows.length, G), { ...zv, scope: 'group' });
      for (let k = 0; k < K && rows.length < K * G; k++) {
        if (flat.groups[k]) continue; // dropped: verl keeps groups with std > 0
        for (let i = k * G; i < (k + 1) * G; i++) {
          rows.push(g.rows[i] as R);
          rewards.push(reward[i] as number);
          tokens.push(g.tokens[i] as number);
        }
      }
      if (rows.length >= K * G) break;
      if (batches > cfg.max_extra_gen_batches) {
        t.capHit++; // at the cap: train on the informative groups collected so far (verl raises instead)
        break;
      }
    }
    t.generated.push(generated);
    t.genBatches.push(batches);
    if (rows.length === 0) {
      t.denominator.push(0);
      t.gradientRows.push(0);
      t.skipped++;
      continue;
    }

    // --- advantages (GRPO), zero-variance rows by the rule, the denominator, the KL rows
    const index = groupIndex(rows.length, G);
    const adv = grpoScalarAdvantages(rewards, index, { std: cfg.std, epsilon: 1e-6 });
    const flags = zeroVarianceRows(rewards, index, { ...zv, scope: 'group' }).rows;
    if (arm !== 'keep' && arm !== 'kl') for (let i = 0; i < adv.length; i++) if (flags[i]) adv[i] = 0;
    let denominator = 0;
    for (let i = 0; i < rows.length; i++) {
      if (arm === 'exclude_from_denominator' && flags[i]) continue;
      denominator += tokens[i] as number;
    }
    const klRows = new Uint8Array(rows.length);
    const beta = arm === 'kl' || arm === 'kl_masked' ? cfg.kl_beta : 0;
    for (let i = 0; i < rows.length; i++) klRows[i] = arm === 'kl_masked' && flags[i] ? 0 : 1;
    let gradientRows = 0;
    for (let i = 0; i < adv.length; i++) if (adv[i] !== 0) gradientRows++;
    t.denominator.push(denominator);
    t.gradientRows.push(gradientRows);
    if (denominator === 0 && beta === 0) {
      t.skipped++;
      continue;
    }
    learner.update(rows, adv, denominator, klRows, beta);
  }
  t.finalKl = learner.klToRef(lastSampled); // the trained policy, at the contexts of the last first batch
  t.evalSuccess = learner.evaluate();
  return t;
}

function mean(xs: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < xs.length; i++) s += xs[i] as number;
  return xs.length ? s / xs.length : Number.NaN;
}

/**
 * Area under success vs generated trajectories over [0, budget], divided by budget: success at
 * update u holds over that update's generation interval (the policy is the same while it samples).
 */
export function successPerGeneratedAuc(
  success: readonly number[],
  generated: readonly number[],
  budget: number,
): number {
  let area = 0;
  let prev = 0;
  for (let u = 0; u < success.length && prev < budget; u++) {
    const end = Math.min(generated[u] as number, budget);
    area += (success[u] as number) * (end - prev);
    prev = end;
  }
  return area / budget;
}

/** Success of an arm at `g` generated trajectories (the update whose generation covers g). */
function successAt(t: ArmTrace, g: number): number {
  const u = t.generated.findIndex((x) => x >= g);
  return u < 0 ? Number.NaN : (t.success[u] as number);
}

// --- the experiment --------------------------------------------------------------------------------------
function makeLearner(cfg: FilterConfig, seed: number): FilterLearner<unknown> {
  const lr = cfg.lr ?? FILTER_DEFAULT_LR[cfg.env];
  if (cfg.env === 'agent') {
    return agentLearner(seed, {
      groupSize: cfg.group_size,
      lr,
      evalTasks: cfg.eval_tasks,
    }) as FilterLearner<unknown>;
  }
  // The token lab's env, PPO and optimizer settings at their defaults; batch shape and lr from here.
  const token = TOKEN_LAB_OPTIONS.parse({
    updates: cfg.updates,
    tasks_per_update: cfg.groups_per_update,
    group_size: cfg.group_size,
    lr,
    std: cfg.std,
    eval_tasks: cfg.eval_tasks,
  });
  return tokenLearner(seed, token) as FilterLearner<unknown>;
}

function runFilter(cfg: FilterConfig, ctx: RunContext): RunRecord {
  const record = startRecord('filter', cfg, ctx.seed);
  const K = cfg.groups_per_update;
  const G = cfg.group_size;

  // --- training: every arm from the same initial policy and the same seeded streams
  const rules = ruleAccumulators();
  const traces = FILTER_ARMS.map((arm, i) => {
    const t = trainArm(arm, makeLearner(cfg, ctx.seed), cfg, ctx.seed, (g, noisy) => {
      if (arm === 'keep') accumulateRules(rules, g.partial, noisy, G, cfg);
    });
    ctx.onProgress?.(i + 1, FILTER_ARMS.length);
    return t;
  });

  // --- measurements
  const budget = cfg.updates * K * G; // what keep generates: the common generation budget
  const arms = traces.map((t) => {
    const total = t.generated[t.generated.length - 1] ?? 0;
    return {
      arm: t.arm,
      success_per_update_auc: round6(mean(t.success)),
      success_per_generated_auc: round6(successPerGeneratedAuc(t.success, t.generated, budget)),
      generated_per_update: round6(total / cfg.updates),
      gradient_sample_fraction: round6(t.gradientRows.reduce((a, b) => a + b, 0) / total),
      denominator_mean: round6(mean(t.denominator)),
      kl_ref: round6(t.finalKl),
    };
  });
  const metrics: Record<string, JsonValue> = {};
  for (const [i, row] of arms.entries()) {
    const t = traces[i] as ArmTrace;
    for (const [k, v] of Object.entries(row)) if (typeof v === 'number') metrics[`${k}.${row.arm}`] = v;
    metrics[`eval_success.${row.arm}`] = round6(t.evalSuccess);
    metrics[`skipped_updates.${row.arm}`] = t.skipped;
  }
  const ds = traces.find((t) => t.arm === 'dynamic_sampling') as ArmTrace;
  metrics['cap_hit_updates.dynamic_sampling'] = ds.capHit;
  const armsWithEval = arms.map((r, i) => ({ ...r, eval_success: (traces[i] as ArmTrace).evalSuccess }));
  Object.assign(
    metrics,
    pairedDifferences(armsWithEval, 'keep', [
      'success_per_update_auc',
      'success_per_generated_auc',
      'eval_success',
      'kl_ref',
    ]),
  );

  const curves: Record<string, number[]> = { update: traces[0]?.success.map((_, i) => i + 1) ?? [] };
  for (const t of traces) {
    curves[`success.${t.arm}`] = t.success;
    curves[`generated.${t.arm}`] = t.generated;
    curves[`denominator.${t.arm}`] = t.denominator;
    curves[`kl_ref.${t.arm}`] = t.klRef;
  }
  const vsGenerated: Record<string, JsonValue>[] = [];
  for (let u = 1; u <= cfg.updates; u++) {
    const g = u * K * G;
    const row: Record<string, JsonValue> = { generated: g };
    for (const t of traces) row[t.arm] = successAt(t, g);
    vsGenerated.push(row);
  }

  // the zero-variance rules on the rescored keep rollouts, per seed as metrics too, so the findings
  // manifest can table them on both seed sets (`<measure>.<rule>_<scope>`)
  const zeroVarianceRules = ruleRows(rules, cfg.zero_variance_tol);
  for (const row of zeroVarianceRules)
    for (const m of ZERO_VARIANCE_RULE_METRICS)
      metrics[`${m}.${row.rule}_${row.scope}`] = row[m] as JsonValue;

  return record.finish({
    metrics,
    curves,
    tables: {
      arms,
      zero_variance_rules: zeroVarianceRules,
      success_vs_generated: vsGenerated,
    },
    notes: [filterConclusion(arms, traces, cfg), ...filterCaveats(cfg)],
    plots: {
      success: { title: 'On-policy success vs updates', y: 'success rate of the batch' },
      success_vs_generated: {
        title: 'On-policy success vs generated trajectories',
        y: 'success rate of the batch',
        x: 'generated trajectories',
        kind: 'line',
        table: 'success_vs_generated',
        xField: 'generated',
        yFields: [...FILTER_ARMS],
      },
      denominator: { title: 'Token-mean denominator per update', y: 'policy tokens' },
      kl_ref: { title: 'KL to the initial policy', y: 'nats per policy token' },
    },
  });
}

/** The measured headline, from the numbers of this run. */
function filterConclusion(
  arms: readonly Record<string, JsonValue>[],
  traces: readonly ArmTrace[],
  cfg: FilterConfig,
): string {
  const get = (arm: FilterArm, k: string) => arms.find((r) => r.arm === arm)?.[k] as number;
  const ds = traces.find((t) => t.arm === 'dynamic_sampling') as ArmTrace;
  return [
    `per update: success AUC keep ${fixed(get('keep', 'success_per_update_auc'), 3)}, exclude_from_denominator ${fixed(get('exclude_from_denominator', 'success_per_update_auc'), 3)}, dynamic_sampling ${fixed(get('dynamic_sampling', 'success_per_update_auc'), 3)}, kl ${fixed(get('kl', 'success_per_update_auc'), 3)}, kl_masked ${fixed(get('kl_masked', 'success_per_update_auc'), 3)}.`,
    `per generated trajectory (budget ${cfg.updates * cfg.groups_per_update * cfg.group_size}): keep ${fixed(get('keep', 'success_per_generated_auc'), 3)}, dynamic_sampling ${fixed(get('dynamic_sampling', 'success_per_generated_auc'), 3)}; dynamic sampling generated ${fixed(get('dynamic_sampling', 'generated_per_update'), 1)} trajectories per update (keep ${fixed(get('keep', 'generated_per_update'), 1)}) and hit its cap of ${cfg.max_extra_gen_batches} extra batches in ${ds.capHit} of ${cfg.updates} updates.`,
    `gradient sample fraction keep ${fixed(get('keep', 'gradient_sample_fraction'), 3)}, dynamic_sampling ${fixed(get('dynamic_sampling', 'gradient_sample_fraction'), 3)}; KL to the reference kl ${fixed(get('kl', 'kl_ref'), 4)}, kl_masked ${fixed(get('kl_masked', 'kl_ref'), 4)}, keep ${fixed(get('keep', 'kl_ref'), 4)}.`,
  ].join(' ');
}

function filterCaveats(cfg: FilterConfig): string[] {
  return [
    'success per update answers "which rule makes each gradient step better"; success per generated trajectory answers "which is better per unit of generation compute" (dynamic sampling pays for its filled batches with extra generation; the AUC is taken over the generation budget of keep).',
    `dynamic_sampling at the cap: this lab trains on the informative groups collected so far (a smaller batch; no update if there are none); verl instead raises "Generated too many" once num_gen_batches reaches max_num_gen_batches (= ${cfg.max_extra_gen_batches + 1} here).`,
    "success is the on-policy success of the first generated batch of each update (the same policy for every batch of an update); gradient_sample_fraction counts rows with a nonzero advantage, so the kl arm's KL-only gradient on zero-variance rows is not counted.",
    `zero_variance_rules: the keep arm's rollouts rescored with partial credit + U(-${cfg.reward_noise}, ${cfg.reward_noise}) rounded through float32; noise_only groups have equal clean scores, so any advantage they get is noise. Compare one run with --seeds, paired by seed.`,
  ];
}

export const filter: Experiment<typeof FILTER_OPTIONS> = {
  name: 'filter',
  summary:
    'zero-variance groups: keep vs out of the denominator vs dynamic sampling vs KL masking, per update and per generated trajectory; exact vs tolerance rules',
  options: FILTER_OPTIONS,
  // Headline comparisons with --seeds: every arm vs keep, on the measures of the per-seed
  // `<measure>.<arm>_minus_keep` pairs (the claims of docs/findings/filter.json).
  comparisons: () => ({
    baseline: 'keep',
    arms: [...FILTER_ARMS],
    metrics: ['success_per_update_auc', 'success_per_generated_auc', 'eval_success', 'kl_ref'],
  }),
  run: runFilter,
  format: formatFilter,
};
