/**
 * Shared plumbing of the token-level experiments (`mask`, `aggregation`, `truncation`): the option
 * table every one of them has, and `runTokenArm`, which trains one arm (one mask rule, aggregation
 * mode and truncation policy) with the token-level PPO learner and measures it over training and
 * on held-out tasks. The experiments themselves only say which arms to compare and what to report.
 *
 * Common random numbers: every arm of a seed draws its training tasks, its sampling and the tool
 * noise from streams forked from the seed under the same labels, and is evaluated on the same
 * held-out tasks, so arms differ by their setting, not by their luck of the draw.
 */
import { z } from 'zod';
import { aggLossGrad, type LossAggMode } from '../core/aggLoss.js';
import { LabError } from '../core/errors.js';
import {
  contextCount,
  FIRST_OBSERVATION_TOKEN,
  isObservationToken,
  ROLE_MODEL,
  runTokenEpisode,
  sampleTokenTask,
  type TokenEnvOptions,
  type TokenEpisode,
  type TokenTask,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { Rng } from '../random.js';
import { Optimizer } from '../train/adam.js';
import {
  gatherLogProbs,
  groupAdvantages,
  type MaskRule,
  packTranscripts,
  ppoUpdate,
  responseMaskFromRoles,
} from '../train/tokenLearner.js';
import { defineOptions, option } from './options.js';
import type { JsonValue } from './types.js';

/**
 * What happens to a trajectory that hit the token budget before submitting:
 * - `zero-score`: scored 0 like any failure and trained on (the naive default);
 * - `drop`: removed from the batch before advantages (its group is smaller);
 * - `mask`: scored 0 in its group's statistics but its loss mask is all 0 (TRL's
 *   `mask_truncated_completions=True`);
 * - `soft-penalty`: DAPO's overlong reward shaping added to every trajectory's score:
 *   0 for L <= Lmax − Lcache, (Lmax − Lcache − L)/Lcache inside the buffer, −1 beyond
 *   (Lmax = budget, Lcache = overlongBuffer); a truncated trajectory (L = Lmax) gets 0 − 1.
 */
export type TruncationPolicy = 'zero-score' | 'drop' | 'mask' | 'soft-penalty';
export const TRUNCATION_POLICIES: readonly TruncationPolicy[] = [
  'zero-score',
  'drop',
  'mask',
  'soft-penalty',
];

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const num = (min: number, max: number) => z.number().min(min).max(max);

/**
 * Options of the three token-level experiments (`mask`, `aggregation`, `truncation`), declared once.
 * Each experiment takes this object, may `omit` keys it does not read and override a default with
 * {@link withDefault}.
 */
export const TOKEN_LAB_OPTIONS = defineOptions({
  updates: option(int(1, 10000), 150, 'policy updates (one rollout batch each)'),
  tasks_per_update: option(int(1, 1000), 16, 'tasks per batch (groups)'),
  group_size: option(int(1, 256), 8, 'samples per task (GRPO group size G)'),
  ppo_epochs: option(
    int(1, 50),
    2,
    'full-batch PPO epochs per batch with fixed old log-probs (verl ppo_epochs)',
  ),
  lr: option(num(1e-6, 100), 0.05, 'optimizer step size on the logits', 'logit units per step'),
  optimizer: option(
    z.enum(['adam', 'sgd']),
    'adam',
    'adam (per-logit scale-invariant; verl trains with AdamW) | sgd (loss scale = step size)',
  ),
  clip_ratio: option(num(0, 10), 0.2, 'PPO clip_ratio, both sides (verl default 0.2)'),
  std: option(
    z.enum(['unbiased', 'population', 'none']),
    'unbiased',
    "GRPO std: unbiased (verl's torch.std) | population | none (Dr. GRPO, no std scaling)",
  ),
  budget: option(int(4, 1000), 48, 'token budget per transcript, model + env tokens', 'tokens'),
  tool_error_rate: option(
    num(0, 1),
    0.3,
    'probability that add/sub returns a wrong number (verify repairs it)',
    'probability',
  ),
  think_buckets: option(int(1, 10), 3, 'think-count buckets in the policy context'),
  max_operand: option(int(0, 1e6), 99, 'operands uniform in [0, max_operand]'),
  observation_logit_init: option(
    num(-20, 5),
    -3,
    'initial logit of each observation token (action tokens start at 0): the "pretrained" prior',
    'logit',
  ),
  eval_tasks: option(int(1, 100000), 400, 'held-out evaluation tasks, one sample each'),
  overlong_buffer: option(
    int(1, 1000),
    5,
    "DAPO's L_cache (tokens before the budget where the soft overlong penalty ramps from 0 to -1)",
    'tokens',
  ),
  unbounded_budget: option(int(4, 100000), 400, 'budget of the "budget lifted" evaluation', 'tokens'),
});

/**
 * The token-level learner's config (snake_case, as every option). `overlong_buffer` and
 * `unbounded_budget` are read only by `truncation`: without them no soft penalty can be applied and no
 * budget-lifted evaluation is run.
 */
export type TokenLabConfig = Omit<
  z.output<typeof TOKEN_LAB_OPTIONS>,
  'overlong_buffer' | 'unbounded_budget'
> &
  Partial<Pick<z.output<typeof TOKEN_LAB_OPTIONS>, 'overlong_buffer' | 'unbounded_budget'>>;

/**
 * Options only `truncation` reads: its soft-penalty arm's buffer and its budget-lifted evaluation.
 * `mask` and `aggregation` leave them out, so a `--set` of them is rejected instead of doing nothing.
 */
export const TRUNCATION_ONLY = { overlong_buffer: true, unbounded_budget: true } as const;

export interface ArmSpec {
  arm: string;
  maskRule: MaskRule;
  lossAggMode: LossAggMode;
  truncation: TruncationPolicy;
}

/** Measures of a set of episodes (a training batch or an evaluation). NaN where undefined. */
export interface EpisodeMeasures {
  trajectories: number;
  success: number;
  /** Observation tokens emitted by the policy / model tokens (a protocol error per decision). */
  observationTokenActionRate: number;
  /** Fraction of trajectories that ended by emitting an observation token. */
  observationErrorRate: number;
  protocolErrorRate: number;
  truncationRate: number;
  /** Fraction of trajectories that executed `verify`. */
  verifyRate: number;
  /** think tokens / model tokens. */
  thinkRate: number;
  meanLength: number;
  successMeanLength: number;
  failedMeanLength: number;
  modelTokensPerTrajectory: number;
  envTokensPerTrajectory: number;
}

/**
 * {@link EpisodeMeasures} of a non-empty list of token episodes: per-trajectory rates over N episodes,
 * per-token rates over the model's tokens, mean lengths over all / successful / failed transcripts
 * (NaN where that set is empty). Errors: BAD_ARGUMENT for an empty list (every rate would be 0/0).
 */
export function measureEpisodes(episodes: readonly TokenEpisode[]): EpisodeMeasures {
  if (episodes.length === 0) {
    throw new LabError('BAD_ARGUMENT', 'episodes: nothing to measure in an empty list', {
      details: { field: 'episodes' },
    });
  }
  let success = 0;
  let obsTokens = 0;
  let obsErrors = 0;
  let protocol = 0;
  let truncated = 0;
  let verified = 0;
  let think = 0;
  let model = 0;
  let env = 0;
  let len = 0;
  let successLen = 0;
  let failedLen = 0;
  for (const ep of episodes) {
    const n = ep.tokens.length;
    len += n;
    model += ep.modelTokens;
    env += ep.envTokens;
    think += ep.thinkTokens;
    if (ep.verified) verified++;
    if (ep.status === 'success') {
      success++;
      successLen += n;
    } else failedLen += n;
    if (ep.status === 'truncated') truncated++;
    if (ep.status === 'protocol_error') protocol++;
    if (ep.errorKind === 'observation_token') obsErrors++;
    for (let i = 0; i < n; i++) {
      if (ep.roles[i] === ROLE_MODEL && isObservationToken(ep.tokens[i] as number)) obsTokens++;
    }
  }
  const N = episodes.length;
  const failed = N - success;
  return {
    trajectories: N,
    success: success / N,
    observationTokenActionRate: model > 0 ? obsTokens / model : Number.NaN,
    observationErrorRate: obsErrors / N,
    protocolErrorRate: protocol / N,
    truncationRate: truncated / N,
    verifyRate: verified / N,
    thinkRate: model > 0 ? think / model : Number.NaN,
    meanLength: len / N,
    successMeanLength: success > 0 ? successLen / success : Number.NaN,
    failedMeanLength: failed > 0 ? failedLen / failed : Number.NaN,
    modelTokensPerTrajectory: model / N,
    envTokensPerTrajectory: env / N,
  };
}

/**
 * DAPO's soft overlong penalty (verl `DAPORewardManager` with `overlong_buffer.penalty_factor = 1`) for
 * a transcript of `length` tokens under budget `maxLength` with ramp `buffer` (L_cache):
 * 0 for `L ≤ max − buffer`, `(max − buffer − L)/buffer` up to `max` (reaching −1 there), −1 beyond.
 * Errors: BAD_ARGUMENT for `buffer` not > 0 (the ramp would divide by 0).
 */
export function overlongPenalty(length: number, maxLength: number, buffer: number): number {
  if (!(buffer > 0)) {
    throw new LabError('BAD_ARGUMENT', `overlong_buffer: expected a number > 0, got ${buffer}`, {
      details: { field: 'overlong_buffer', value: buffer },
    });
  }
  const start = maxLength - buffer;
  if (length <= start) return 0;
  if (length <= maxLength) return (start - length) / buffer;
  return -1;
}

/** Per update of one arm: training-batch measures plus what the loss saw. */
export interface UpdateRecord extends EpisodeMeasures {
  /** The aggregation denominator of this update's loss (0 when the update was skipped). */
  lossDenominator: number;
  /** Tokens with mask 1 in this update's loss, per trajectory of the full batch. */
  lossTokensPerTrajectory: number;
  /** Trajectories removed (drop) or fully masked (mask) because they were truncated. */
  excludedTrajectories: number;
  loss: number;
  clipfrac: number;
  /**
   * Mean per-token aggregation weight (∂agg/∂loss_tok, normalised to mean 1 over the batch's loss
   * tokens) of failed rows longer than the median failed length, divided by that of the shorter
   * ones. 1 means length does not change a failed token's weight; < 1 means long failures are
   * penalised less per token. NaN when the batch has fewer than two failed lengths.
   */
  failedLongShortWeightRatio: number;
}

/** Accumulated per-token weight by transcript length bucket (all updates of an arm). */
export interface WeightBucket {
  lo: number;
  hi: number;
  trajectories: number;
  failedTrajectories: number;
  tokens: number;
  /** Σ normalised per-token weight over loss tokens in this bucket. */
  weightSum: number;
  /** Σ raw aggregation weight ∂agg/∂loss_tok (the loss scale each mode applies). */
  rawWeightSum: number;
  failedTokens: number;
  failedWeightSum: number;
}

export interface ArmResult {
  spec: ArmSpec;
  updates: UpdateRecord[];
  evaluation: EpisodeMeasures;
  /** Evaluation with the budget lifted to `unbounded_budget` (same tasks, same streams); null without it. */
  evaluationUnbounded: EpisodeMeasures | null;
  weightByLength: WeightBucket[];
  /** Per-trajectory accounting of the last update's first group (the course's "record per trajectory"). */
  lastGroup: Record<string, number | string>[];
  skippedUpdates: number;
}

function initialLogits(cfg: TokenLabConfig): number[] {
  return Array.from({ length: VOCAB_SIZE }, (_, v) =>
    v >= FIRST_OBSERVATION_TOKEN ? cfg.observation_logit_init : 0,
  );
}

function sampleEpisodes(
  policy: ContextPolicy,
  tasks: readonly TokenTask[],
  repeats: number,
  pick: Rng,
  noise: Rng,
  env: TokenEnvOptions,
): TokenEpisode[] {
  const probs = policy.probabilities();
  const choose = (ctx: number) => ContextPolicy.sample(probs, VOCAB_SIZE, ctx, pick);
  const out: TokenEpisode[] = [];
  for (const task of tasks)
    for (let g = 0; g < repeats; g++) out.push(runTokenEpisode(task, choose, noise, env));
  return out;
}

/** Evaluation tasks of a seed: the same for every arm and every experiment option except max_operand. */
export function evaluationTasks(seed: number, cfg: TokenLabConfig): TokenTask[] {
  const rng = new Rng(seed).fork('token-lab/eval-tasks');
  return Array.from({ length: cfg.eval_tasks }, () => sampleTokenTask(rng, cfg.max_operand));
}

function evaluate(policy: ContextPolicy, seed: number, cfg: TokenLabConfig, budget: number): EpisodeMeasures {
  const root = new Rng(seed);
  const env = { budget, toolErrorRate: cfg.tool_error_rate, thinkBuckets: cfg.think_buckets };
  const eps = sampleEpisodes(
    policy,
    evaluationTasks(seed, cfg),
    1,
    root.fork('token-lab/eval-policy'),
    root.fork('token-lab/eval-noise'),
    env,
  );
  return measureEpisodes(eps);
}

const WEIGHT_BUCKET_WIDTH = 8;

/** The soft-penalty arm's L_cache; an arm that needs it without the option is a LabError naming it. */
function softPenaltyBuffer(cfg: TokenLabConfig): number {
  if (cfg.overlong_buffer === undefined) {
    throw new LabError(
      'BAD_OPTION_VALUE',
      "truncation policy 'soft-penalty' needs the overlong_buffer option",
      {
        details: { field: 'overlong_buffer' },
      },
    );
  }
  return cfg.overlong_buffer;
}

/**
 * Trains one arm from the initial policy and measures it. `onUpdate(i)` is called after update i
 * (for progress). Deterministic for (seed, cfg, spec).
 */
export function runTokenArm(
  spec: ArmSpec,
  cfg: TokenLabConfig,
  seed: number,
  onUpdate?: (done: number) => void,
): ArmResult {
  if (!TRUNCATION_POLICIES.includes(spec.truncation)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `truncation policy '${spec.truncation}' is not one of ${TRUNCATION_POLICIES.join(', ')}`,
      {
        details: { field: 'truncation', value: spec.truncation },
      },
    );
  }
  const root = new Rng(seed);
  const taskRng = root.fork('token-lab/train-tasks');
  const pick = root.fork('token-lab/train-policy');
  const noise = root.fork('token-lab/train-noise');
  const env: TokenEnvOptions = {
    budget: cfg.budget,
    toolErrorRate: cfg.tool_error_rate,
    thinkBuckets: cfg.think_buckets,
  };
  const policy = new ContextPolicy(contextCount(cfg.think_buckets), VOCAB_SIZE, {
    tokenLogits: initialLogits(cfg),
  });
  const optimizer = new Optimizer(policy.logits.length, {
    kind: cfg.optimizer,
    learningRate: cfg.lr,
  });
  const buckets: WeightBucket[] = [];
  const updates: UpdateRecord[] = [];
  let lastGroup: ArmResult['lastGroup'] = [];
  let skipped = 0;

  for (let u = 0; u < cfg.updates; u++) {
    // --- rollout: K tasks x G samples with the current policy; old log-probs recorded now
    const tasks = Array.from({ length: cfg.tasks_per_update }, () =>
      sampleTokenTask(taskRng, cfg.max_operand),
    );
    const logTable = policy.logProbabilities();
    const all = sampleEpisodes(policy, tasks, cfg.group_size, pick, noise, env);
    const measures = measureEpisodes(all);

    // --- what the truncation policy does to the batch
    const rows = spec.truncation === 'drop' ? all.filter((e) => e.status !== 'truncated') : all;
    const index = (
      spec.truncation === 'drop'
        ? all.map((e, i) => (e.status === 'truncated' ? -1 : i))
        : all.map((_, i) => i)
    )
      .filter((i) => i >= 0)
      .map((i) => Math.floor(i / cfg.group_size));
    const scores = rows.map((e) =>
      spec.truncation === 'soft-penalty'
        ? e.score + overlongPenalty(e.tokens.length, cfg.budget, softPenaltyBuffer(cfg))
        : e.score,
    );
    let excluded = all.length - rows.length;
    const record: UpdateRecord = {
      ...measures,
      lossDenominator: 0,
      lossTokensPerTrajectory: 0,
      excludedTrajectories: excluded,
      loss: Number.NaN,
      clipfrac: Number.NaN,
      failedLongShortWeightRatio: Number.NaN,
    };
    if (rows.length > 0) {
      const batch = packTranscripts(rows);
      const mask = responseMaskFromRoles(batch, spec.maskRule);
      const { cols } = batch.shape;
      if (spec.truncation === 'mask') {
        rows.forEach((e, b) => {
          if (e.status !== 'truncated') return;
          mask.fill(0, b * cols, (b + 1) * cols);
          excluded++;
        });
        record.excludedTrajectories = excluded;
      }
      let lossTokens = 0;
      for (let i = 0; i < mask.length; i++) lossTokens += mask[i] as number;
      record.lossTokensPerTrajectory = lossTokens / all.length;
      if (lossTokens > 0) {
        const adv = groupAdvantages(scores, index, batch, mask, { std: cfg.std });
        const old = gatherLogProbs(logTable, VOCAB_SIZE, batch);
        const weights = aggLossGrad(mask, batch.shape, spec.lossAggMode);
        record.failedLongShortWeightRatio = accumulateWeights(buckets, rows, weights, mask, cols, lossTokens);
        const stats = ppoUpdate(policy, optimizer, batch, old, adv, mask, {
          epochs: cfg.ppo_epochs,
          loss: { lossAggMode: spec.lossAggMode, clipRatio: cfg.clip_ratio },
        });
        record.lossDenominator = stats.denominator.denominator;
        const lastEpoch = stats.epochs[stats.epochs.length - 1];
        record.loss = stats.epochs[0]?.loss ?? Number.NaN;
        record.clipfrac = lastEpoch?.metrics.pg_clipfrac ?? Number.NaN;
        if (u === cfg.updates - 1) lastGroup = groupAccounting(rows, index, scores, adv, mask, weights, cols);
      } else skipped++;
    } else skipped++;
    updates.push(record);
    onUpdate?.(u + 1);
  }
  return {
    spec,
    updates,
    evaluation: evaluate(policy, seed, cfg, cfg.budget),
    evaluationUnbounded:
      cfg.unbounded_budget === undefined ? null : evaluate(policy, seed, cfg, cfg.unbounded_budget),
    weightByLength: buckets,
    lastGroup,
    skippedUpdates: skipped,
  };
}

/**
 * Adds this batch's normalised per-token weights to the length buckets; returns the failed
 * long/short per-token weight ratio of the batch (see {@link UpdateRecord}).
 */
function accumulateWeights(
  buckets: WeightBucket[],
  rows: readonly TokenEpisode[],
  weights: Float64Array,
  mask: Float32Array,
  cols: number,
  lossTokens: number,
): number {
  let total = 0;
  for (let i = 0; i < weights.length; i++) total += weights[i] as number;
  const norm = lossTokens / total; // mean weight over loss tokens -> 1
  const failed: { len: number; w: number }[] = [];
  rows.forEach((e, b) => {
    const len = e.tokens.length;
    let n = 0;
    let raw = 0;
    for (let t = 0; t < cols; t++) {
      n += mask[b * cols + t] as number;
      raw += weights[b * cols + t] as number;
    }
    const w = raw * norm;
    const k = Math.floor((len - 1) / WEIGHT_BUCKET_WIDTH);
    while (buckets.length <= k) {
      const lo = buckets.length * WEIGHT_BUCKET_WIDTH + 1;
      buckets.push({
        lo,
        hi: lo + WEIGHT_BUCKET_WIDTH - 1,
        trajectories: 0,
        failedTrajectories: 0,
        tokens: 0,
        weightSum: 0,
        rawWeightSum: 0,
        failedTokens: 0,
        failedWeightSum: 0,
      });
    }
    const bucket = buckets[k] as WeightBucket;
    bucket.trajectories++;
    bucket.tokens += n;
    bucket.weightSum += w;
    bucket.rawWeightSum += raw;
    if (e.status !== 'success') {
      bucket.failedTrajectories++;
      bucket.failedTokens += n;
      bucket.failedWeightSum += w;
      if (n > 0) failed.push({ len, w: w / n });
    }
  });
  if (failed.length < 2) return Number.NaN;
  const lens = failed.map((f) => f.len).sort((a, b) => a - b);
  const median = lens[Math.floor((lens.length - 1) / 2)] as number;
  const long = failed.filter((f) => f.len > median);
  const short = failed.filter((f) => f.len <= median);
  if (long.length === 0 || short.length === 0) return Number.NaN;
  const mean = (xs: { w: number }[]) => xs.reduce((s, x) => s + x.w, 0) / xs.length;
  return mean(long) / mean(short);
}

/** The per-trajectory accounting of the first group of a batch: action/env/loss tokens, advantage, weight. */
function groupAccounting(
  rows: readonly TokenEpisode[],
  index: readonly number[],
  scores: readonly number[],
  adv: Float32Array,
  mask: Float32Array,
  weights: Float64Array,
  cols: number,
): Record<string, number | string>[] {
  const first = index[0];
  const out: Record<string, number | string>[] = [];
  rows.forEach((e, b) => {
    if (index[b] !== first) return;
    let lossTokens = 0;
    let weight = 0;
    let a = 0;
    for (let t = 0; t < cols; t++) {
      const m = mask[b * cols + t] as number;
      lossTokens += m;
      weight += weights[b * cols + t] as number;
      if (m !== 0) a = adv[b * cols + t] as number;
    }
    out.push({
      status: e.status,
      length: e.tokens.length,
      action_tokens: e.modelTokens,
      env_tokens: e.envTokens,
      loss_tokens: lossTokens,
      score: scores[b] as number,
      advantage: a,
      weight_per_token: lossTokens > 0 ? weight / lossTokens : 0,
      total_weight: weight,
    });
  });
  return out;
}

/** Per-update series of one measure for every arm, as `curves['<family>.<arm>']`. */
export function armCurves(
  results: readonly ArmResult[],
  families: Record<string, (u: UpdateRecord) => number>,
): Record<string, number[]> {
  const curves: Record<string, number[]> = {};
  const first = results[0];
  if (first) curves.update = first.updates.map((_, i) => i + 1);
  for (const [family, pick] of Object.entries(families)) {
    for (const r of results) curves[`${family}.${r.spec.arm}`] = r.updates.map(pick);
  }
  return curves;
}

/** Mean of a measure over the last `fraction` of updates (finite values only; NaN if none). */
export function lateMean(r: ArmResult, pick: (u: UpdateRecord) => number, fraction = 0.25): number {
  const n = r.updates.length;
  const from = Math.max(0, n - Math.max(1, Math.round(n * fraction)));
  const xs = r.updates.slice(from).map(pick).filter(Number.isFinite);
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : Number.NaN;
}

/** Mean of a measure over all updates (finite values only; NaN if none): {@link lateMean} of fraction 1. */
export function overallMean(r: ArmResult, pick: (u: UpdateRecord) => number): number {
  return lateMean(r, pick, 1);
}

/**
 * The `arms` table (one row per arm, from `rowOf`) and its flat metrics: every numeric cell also
 * becomes `metrics['<arm>.<column>']`, which is what `--seeds` summarises.
 */
export function armTable(
  results: readonly ArmResult[],
  rowOf: (r: ArmResult) => Record<string, JsonValue>,
): { arms: Record<string, JsonValue>[]; metrics: Record<string, JsonValue> } {
  const metrics: Record<string, JsonValue> = {};
  const arms = results.map((r) => {
    const row = rowOf(r);
    for (const [k, v] of Object.entries(row)) if (typeof v === 'number') metrics[`${r.spec.arm}.${k}`] = v;
    return row;
  });
  return { arms, metrics };
}

/**
 * The `trajectory_accounting` table: every arm's {@link ArmResult.lastGroup} rows in arm order, each
 * with an `arm` column first (a row's own columns follow and win on a clash, as before).
 */
export function trajectoryAccounting(results: readonly ArmResult[]): Record<string, JsonValue>[] {
  return results.flatMap((r) => r.lastGroup.map((row) => ({ arm: r.spec.arm, ...row })));
}

/** Runs every arm in order with one progress callback over all of them. */
export function runArms(
  specs: readonly ArmSpec[],
  cfg: TokenLabConfig,
  seed: number,
  onProgress?: (done: number, total: number) => void,
): ArmResult[] {
  const total = specs.length * cfg.updates;
  return specs.map((spec, i) =>
    runTokenArm(spec, cfg, seed, (d) => onProgress?.(i * cfg.updates + d, total)),
  );
}

/** `x` with `digits` decimals for the conclusions' prose; 'n/a' where nothing was measured (NaN). */
export function fixed(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

/** A fraction as a percentage with one decimal (`0.1234` → `12.3%`); 'n/a' for NaN. */
export function percent(x: number): string {
  return Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : 'n/a';
}

/** Rounds for records: 6 significant digits, NaN kept. */
export function round6(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}

/** Training measures pooled over every update of an arm (trajectory-weighted; NaN where undefined). */
export interface PooledTraining {
  trajectories: number;
  success: number;
  successMeanLength: number;
  failedMeanLength: number;
  thinkRate: number;
  truncationRate: number;
  verifyRate: number;
  observationTokenActionRate: number;
  modelTokensPerTrajectory: number;
  envTokensPerTrajectory: number;
  lossTokensPerTrajectory: number;
  meanLossDenominator: number;
}

/**
 * {@link PooledTraining} of one arm: rates pooled over all updates with each update weighted by its
 * trajectories (length means by its successful / failed trajectories, per-token rates by its model
 * tokens), so late updates with few failures do not dominate; the loss denominator is a plain mean over
 * updates that had one. NaN where nothing was counted (e.g. no failed trajectory at all).
 */
export function pooledTraining(r: ArmResult): PooledTraining {
  let n = 0;
  let succ = 0;
  let succLen = 0;
  let fail = 0;
  let failLen = 0;
  let model = 0;
  let think = 0;
  let obs = 0;
  let trunc = 0;
  let verify = 0;
  let env = 0;
  let loss = 0;
  let denom = 0;
  let denomCount = 0;
  for (const u of r.updates) {
    const N = u.trajectories;
    const s = u.success * N;
    n += N;
    succ += s;
    if (s > 0) succLen += u.successMeanLength * s;
    if (N - s > 0) {
      fail += N - s;
      failLen += u.failedMeanLength * (N - s);
    }
    const m = u.modelTokensPerTrajectory * N;
    model += m;
    if (m > 0) {
      think += u.thinkRate * m;
      obs += u.observationTokenActionRate * m;
    }
    trunc += u.truncationRate * N;
    verify += u.verifyRate * N;
    env += u.envTokensPerTrajectory * N;
    loss += u.lossTokensPerTrajectory * N;
    if (u.lossDenominator > 0) {
      denom += u.lossDenominator;
      denomCount++;
    }
  }
  return {
    trajectories: n,
    success: succ / n,
    successMeanLength: succ > 0 ? succLen / succ : Number.NaN,
    failedMeanLength: fail > 0 ? failLen / fail : Number.NaN,
    thinkRate: model > 0 ? think / model : Number.NaN,
    truncationRate: trunc / n,
    verifyRate: verify / n,
    observationTokenActionRate: model > 0 ? obs / model : Number.NaN,
    modelTokensPerTrajectory: model / n,
    envTokensPerTrajectory: env / n,
    lossTokensPerTrajectory: loss / n,
    meanLossDenominator: denomCount > 0 ? denom / denomCount : Number.NaN,
  };
}

/**
 * Paired differences against a baseline arm, `paired.<arm>_minus_<baseline>.<measure>`, for every
 * other arm. Arms of a seed share tasks and random streams, so across seeds these differences have
 * much narrower confidence intervals than the arms' own means. Non-finite differences are left out.
 */
export function pairedDifferences(
  rows: readonly Record<string, unknown>[],
  baseline: string,
  measures: readonly string[],
): Record<string, number> {
  const base = rows.find((r) => r.arm === baseline);
  const out: Record<string, number> = {};
  if (!base) return out;
  for (const row of rows) {
    if (row.arm === baseline) continue;
    for (const m of measures) {
      const d = (row[m] as number) - (base[m] as number);
      if (Number.isFinite(d)) out[`paired.${String(row.arm)}_minus_${baseline}.${m}`] = round6(d);
    }
  }
  return out;
}
