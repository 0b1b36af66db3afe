/**
 * One arm of the `mismatch` experiment (issue 30): GRPO + PPO on the GRU sequence policy in the
 * prompted env, where the rollouts come from an {@link InferenceEngine} that differs from the trainer
 * (precision, top-k / top-p, weight lag) and the update applies one correction
 * (mismatchCorrections.ts). Three policies are kept apart and recorded separately:
 *
 *  - behaviour: the engine's log-prob of each sampled token (truncated distribution, engine weights,
 *    engine precision), recorded at sampling time by {@link EngineAgent};
 *  - old: the trainer's full-precision (float64) recomputation of the same tokens before the update
 *    (decoupled PPO, verl's `compute_log_prob`);
 *  - current: the trainer's log-probs during the PPO epochs (train/ppoUpdate.ts on the GRU, the
 *    same update every arm of the lab runs).
 *
 * Per update it measures the behaviour/old mismatch with the functions `labs audit` folds token dumps
 * with (core/sequenceMismatchStats.ts, core/mismatchFold.ts), the correction's cost (masked fraction,
 * Kish ESS of the applied weights), the gradient norm, the entropy and the training success; every
 * `evalEvery` updates (and after the last) the held-out success of the trainer's policy (float64, no
 * truncation: the policy being learned). The collapse rule is {@link collapseCheck}.
 */
import type { Shape2 } from '../core/batch.js';
import { LabError } from '../core/errors.js';
import { kishEss } from '../core/ess.js';
import { MismatchAccumulator } from '../core/mismatchFold.js';
import { DEFAULT_PROB_EDGES, sequenceStatsOf } from '../core/sequenceMismatchStats.js';
import {
  type PromptedEnvOptions,
  type PromptedEpisode,
  runPromptedEpisode,
  samplePromptedTask,
} from '../envs/promptedArithmetic.js';
import {
  EngineAgent,
  EngineWeightSync,
  InferenceEngine,
  type InferenceEngineOptions,
} from '../policy/inferenceEngine.js';
import { SequenceAgent } from '../policy/sequenceAgent.js';
import { packSequences, type SequenceBatch, type SequenceModel } from '../policy/sequenceModel.js';
import type { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import { groupBatch } from './batching.js';
import { applyCorrection, type CorrectionThresholds, type MismatchArm } from './mismatchCorrections.js';
import { sequencePolicyModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';
import { groupLabels, rolloutGroups, sampleTaskBatch } from './rollout.js';

const ROLE_MODEL = 1;

/** Everything one arm reads. */
export interface MismatchArmOptions {
  arm: MismatchArm;
  thresholds: CorrectionThresholds;
  engine: InferenceEngineOptions;
  /** `engine_lag` (EngineWeightSync). */
  lag: number;
  updates: number;
  tasksPerUpdate: number;
  groupSize: number;
  ppoEpochs: number;
  lr: number;
  gradClip: number;
  clipRatio: number;
  std: 'unbiased' | 'population' | 'none';
  env: Partial<PromptedEnvOptions>;
  maxOperand: number;
  maxLevel: number;
  evalTasks: number;
  evalEvery: number;
  /** Collapse rule: success below `collapseRatio` × running best, once the best is ≥ `collapseMinBest`. */
  collapseRatio: number;
  collapseMinBest: number;
}

/** The seeded streams of a seed, the same for every arm (common random numbers). */
export interface MismatchStreams {
  tasks: Rng;
  pick: Rng;
  noise: Rng;
  /** Forked afresh at every evaluation, so every eval point of every arm sees the same draws. */
  evalRoot: Rng;
}

/** The token columns of one update, for a dump (`--dump`): `[rows, responseCols]` row-major. */
export interface UpdateTokens {
  update: number;
  batch: SequenceBatch;
  trainerLogProbs: Float64Array;
  inferenceLogProbs: Float64Array;
  responseMask: Float32Array;
  advantages: Float32Array;
  entropy: Float64Array;
}

/** Per update. NaN where undefined (no evaluation at this update). */
export interface MismatchUpdate {
  update: number;
  /** Updates the engine's weights were behind (EngineWeightSync). */
  staleness: number;
  /** verl `k3_kl` (= prime-rl mismatch_kl mean), `chi2_token`, max token ratio exp(old − engine). */
  k3: number;
  chi2Token: number;
  maxRatio: number;
  meanAbsDelta: number;
  /** Per rollout-probability bin (DEFAULT_PROB_EDGES): tokens and mean |old − engine| (NaN if empty). */
  binTokens: number[];
  binMeanAbsDelta: number[];
  /** Kish ESS fraction of the applied per-token weights (weight × kept) over the loss tokens. */
  ess: number;
  /** Loss tokens the correction masked / loss tokens. */
  maskedFraction: number;
  gradNorm: number;
  loss: number;
  /** Trainer entropy, mean over loss tokens. */
  entropy: number;
  trainSuccess: number;
  evalSuccess: number;
}

export interface CollapseEvent {
  update: number;
  reason: 'non_finite' | 'success_drop';
}

export interface MismatchArmResult {
  arm: MismatchArm;
  updates: MismatchUpdate[];
  collapse: CollapseEvent | null;
  finalEval: number;
  bestEval: number;
  /** Set when a non-finite loss, gradient or parameter stopped training (the LabError's message). */
  stopped: string | null;
}

/**
 * The collapse rule, defined once: at an evaluation, the held-out success `success` collapses when the
 * running best (over earlier evaluations and this one) is at least `minBest` and `success` is below
 * `ratio × best`. (A non-finite loss, gradient or parameter is a collapse too; the loop reports it.)
 */
export function collapseCheck(success: number, best: number, ratio: number, minBest: number): boolean {
  return best >= minBest && success < ratio * best;
}

function evaluate(model: SequenceModel, o: MismatchArmOptions, s: MismatchStreams): number {
  const root = s.evalRoot;
  const taskRng = root.fork('tasks');
  const agent = new SequenceAgent(model, root.fork('policy'));
  const noise = root.fork('noise');
  let ok = 0;
  for (let i = 0; i < o.evalTasks; i++) {
    const task = samplePromptedTask(taskRng, o.maxOperand, 1, o.maxLevel);
    if (runPromptedEpisode(task, agent, noise, o.env).status === 'success') ok++;
  }
  return ok / o.evalTasks;
}

/** The engine log-probs of a batch's model tokens, `[B, T]` aligned with `packTranscripts` (0 elsewhere). */
function engineColumns(episodes: readonly PromptedEpisode[], logProbs: readonly number[][], shape: Shape2) {
  const out = new Float64Array(shape.rows * shape.cols);
  episodes.forEach((ep, b) => {
    const lp = logProbs[b] as number[];
    let k = 0;
    for (let t = 0; t < ep.tokens.length; t++) {
      if (ep.roles[t] !== ROLE_MODEL) continue;
      out[b * shape.cols + t] = lp[k++] as number;
    }
    if (k !== lp.length) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `episode ${b}: ${k} model tokens but ${lp.length} engine log-probs`,
        {
          details: { field: 'engineLogProbs', row: b },
        },
      );
    }
  });
  return out;
}

/** The mismatch measures of one batch (audit functions: one sequence-stats row per batch row). */
function mismatchOf(old: Float64Array, engine: Float64Array, mask: Float32Array, shape: Shape2) {
  const acc = new MismatchAccumulator(DEFAULT_PROB_EDGES.length - 1);
  for (let b = 0; b < shape.rows; b++) {
    const o: number[] = [];
    const r: number[] = [];
    for (let t = 0; t < shape.cols; t++) {
      const i = b * shape.cols + t;
      if (mask[i] === 1) {
        o.push(old[i] as number);
        r.push(engine[i] as number);
      }
    }
    if (o.length > 0) acc.add(sequenceStatsOf(o, r, DEFAULT_PROB_EDGES));
  }
  const off = acc.offPolicy();
  const d = acc.deltaStats();
  return {
    k3: off.k3_kl as number,
    chi2Token: off.chi2_token as number,
    maxRatio: d.ratio_max as number,
    meanAbsDelta: d.mean_abs_delta as number,
    binTokens: acc.binN.slice(),
    binMeanAbsDelta: acc.binAbs.map((s, k) =>
      (acc.binN[k] as number) > 0 ? s / (acc.binN[k] as number) : Number.NaN,
    ),
  };
}

/**
 * Trains `model` (already initialised, e.g. warm-started; modified in place) for `o.updates` updates
 * of arm `o.arm`. `onUpdate(u)` after each update; `onTokens` receives every update's token columns
 * (for a dump). Deterministic for (model, options, streams).
 *
 * Why it is long: one update is read top to bottom like the rest of the lab's learners (sample with
 * the engine, recompute old log-probs, apply the arm's correction, PPO epochs, measure, check for
 * collapse), and the three log-prob streams it keeps apart would otherwise be passed between phases.
 */
export function runMismatchArm(
  model: SequenceModel,
  o: MismatchArmOptions,
  s: MismatchStreams,
  onUpdate?: (done: number) => void,
  onTokens?: (tokens: UpdateTokens) => void,
): MismatchArmResult {
  const engine = new InferenceEngine(model, o.engine);
  const sync = new EngineWeightSync(o.lag);
  const optimizer = new Optimizer(model.size, { kind: 'adam', learningRate: o.lr });
  const updates: MismatchUpdate[] = [];
  let collapse: CollapseEvent | null = null;
  let best = Number.NEGATIVE_INFINITY;
  let finalEval = Number.NaN;
  let stopped: string | null = null;
  let steps = 0;
  /** One update (rollout, measures, correction, PPO epochs); throws NON_FINITE for a non-finite loss. */
  const step = (u: number): MismatchUpdate => {
    // --- rollout with the engine (its weights synced every engine_lag + 1 updates)
    const staleness = sync.beforeRollout(engine, model, u);
    const agent = new EngineAgent(engine, s.pick);
    const tasks = sampleTaskBatch(s.tasks, o.tasksPerUpdate, (r) =>
      samplePromptedTask(r, o.maxOperand, 1, o.maxLevel),
    );
    const engineLp: number[][] = [];
    const episodes = rolloutGroups(tasks, o.groupSize, (task) => {
      const episode = runPromptedEpisode(task, agent, s.noise, o.env);
      engineLp.push(agent.engineLogProbs.slice());
      return episode;
    });
    const group = groupLabels(episodes.length, o.groupSize);
    const scores: number[] = episodes.map((e) => (e.status === 'success' ? 1 : 0));
    const { batch, mask, advantages: adv } = groupBatch(episodes, scores, group, { norm: { std: o.std } });
    const shape = batch.shape;
    const seq = packSequences(
      episodes.map((e) => e.prompt),
      episodes.map((e) => e.tokens),
    );
    // --- old: the trainer's float64 recomputation; behaviour: the engine's recorded log-probs
    const old = model.logProbs(seq, new Float64Array(shape.rows * shape.cols));
    const entropyCol = model.entropies();
    const behaviour = engineColumns(episodes, engineLp, shape);
    const m = mismatchOf(old, behaviour, mask, shape);
    let lossTokens = 0;
    let entropy = 0;
    for (let i = 0; i < mask.length; i++) {
      if (mask[i] !== 1) continue;
      lossTokens++;
      entropy += entropyCol[i] as number;
    }
    onTokens?.({
      update: u + 1,
      batch: seq,
      trainerLogProbs: old,
      inferenceLogProbs: behaviour,
      responseMask: mask,
      advantages: adv,
      entropy: entropyCol,
    });
    // --- correction, then the PPO epochs (the lab's ppoUpdate)
    const c = applyCorrection(o.arm, old, behaviour, mask, shape, o.thresholds);
    let kept = 0;
    const applied = new Float64Array(mask.length);
    for (let i = 0; i < mask.length; i++) {
      if (mask[i] !== 1) continue;
      kept += c.mask[i] as number;
      applied[i] = (c.mask[i] as number) * (c.weights ? (c.weights[i] as number) : 1);
    }
    const ess = kishEss(applied, mask).fraction;
    const record: MismatchUpdate = {
      update: u + 1,
      staleness,
      ...m,
      ess,
      maskedFraction: lossTokens > 0 ? 1 - kept / lossTokens : Number.NaN,
      gradNorm: Number.NaN,
      loss: Number.NaN,
      entropy: lossTokens > 0 ? entropy / lossTokens : Number.NaN,
      trainSuccess: scores.reduce((a, b) => a + b, 0) / scores.length,
      evalSuccess: Number.NaN,
    };
    updates.push(record);
    if (kept > 0) {
      const stats = ppoUpdate(
        sequencePolicyModel(model),
        optimizer,
        { batch: seq, mask: c.mask, advantages: adv, oldLogProb: c.oldForLoss },
        {
          epochs: o.ppoEpochs,
          gradClip: o.gradClip,
          loss: { clipRatio: o.clipRatio, lossAggMode: 'token-mean', rolloutIsWeights: c.weights },
          firstStep: steps,
        },
      );
      steps += o.ppoEpochs;
      record.loss = stats.steps[0]?.loss ?? Number.NaN;
      record.gradNorm = stats.steps[0]?.gradNorm ?? Number.NaN;
      if (!Number.isFinite(record.loss)) throw new LabError('NON_FINITE', `loss is ${record.loss}`);
    }
    return record;
  };
  for (let u = 0; u < o.updates; u++) {
    let record: MismatchUpdate;
    try {
      record = step(u);
    } catch (e) {
      // a non-finite engine logit, loss, gradient or parameter: the arm collapses and stops here
      if (!(e instanceof LabError) || e.code !== 'NON_FINITE') throw e;
      stopped = e.message;
      collapse ??= { update: u + 1, reason: 'non_finite' };
      onUpdate?.(o.updates);
      break;
    }
    // --- held-out success every evalEvery updates and after the last; the collapse rule
    if ((u + 1) % o.evalEvery === 0 || u === o.updates - 1) {
      const success = evaluate(model, o, s);
      record.evalSuccess = success;
      best = Math.max(best, success);
      finalEval = success;
      if (!collapse && collapseCheck(success, best, o.collapseRatio, o.collapseMinBest)) {
        collapse = { update: u + 1, reason: 'success_drop' };
      }
    }
    onUpdate?.(u + 1);
  }
  return { arm: o.arm, updates, collapse, finalEval, bestEval: best, stopped };
}
