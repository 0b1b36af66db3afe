/**
 * What a token-level arm measures: per set of episodes ({@link measureEpisodes}), per update
 * ({@link UpdateRecord}), per arm ({@link ArmResult}), and pooled over training
 * ({@link pooledTraining}, {@link lateMean}). Pure functions of the recorded episodes and updates.
 */
import type { LossAggMode } from '../core/aggLoss.js';
import { LabError } from '../core/errors.js';
import type { JsonValue } from '../core/json.js';
import { isObservationToken, ROLE_MODEL } from '../envs/tokenArithmetic.js';
import type { ArmEpisode } from './armEpisode.js';
import type { WeightBucket } from './lossWeights.js';
import type { MaskRule } from './tokenLearner.js';
import type { TruncationPolicy } from './truncationPolicy.js';

export type { ArmEpisode } from './armEpisode.js';

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
export function measureEpisodes(episodes: readonly ArmEpisode[]): EpisodeMeasures {
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
  /** Which policy trained this arm and its size (`{ policy: 'neural', d_model: 32, parameters, ... }`). */
  policy: Record<string, JsonValue>;
  /** Held-out success per task level after training (neural policy: levels 1..max_level; else empty). */
  evaluationByLevel?: LevelSuccess[];
  /** The warm start every arm of the run began from (init=sft), or absent for a start from scratch. */
  warmStart?: WarmStartInfo;
}

/** Success on the held-out tasks of one level (the number of tool calls a task needs). */
export interface LevelSuccess {
  level: number;
  tasks: number;
  success: number;
}

/** Where a warm-started run's initial parameters came from, and how well they did before RL. */
export interface WarmStartInfo {
  /** The checkpoint file the parameters were read from or saved to ('' when caching is off). */
  checkpoint: string;
  /** The cache key (hash of seed, pretraining and model config, code version); '' for init_checkpoint. */
  key: string;
  /** What the checkpoint's header says produced it (seed, pretraining config, its loss). */
  meta: Record<string, JsonValue>;
  /** Held-out pass rate per level of the initial (pretrained) policy, same tasks as after RL. */
  before: LevelSuccess[];
}

/**
 * Success per task level of episodes that carry a `level` (prompted env), levels in ascending
 * order; empty when none does (the tabular env has no levels).
 */
export function successByLevel(episodes: readonly ArmEpisode[]): LevelSuccess[] {
  const count = new Map<number, [number, number]>();
  for (const e of episodes) {
    if (e.level === undefined) continue;
    const c = count.get(e.level) ?? [0, 0];
    c[0]++;
    if (e.status === 'success') c[1]++;
    count.set(e.level, c);
  }
  return [...count.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([level, [tasks, success]]) => ({ level, tasks, success: success / tasks }));
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
