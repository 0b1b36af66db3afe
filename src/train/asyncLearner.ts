/**
 * Learning inside the rollout simulation: the agent experiment's tool-arithmetic env and tabular policy,
 * trained by group REINFORCE while rollout workers and the trainer run on the schedule of
 * {@link simulateRollout}. This is what turns version lag into a measured probability ratio.
 *
 * - Workers: when a worker starts group n it plays task n (the same task stream for every mode) G times
 *   with the logits of the version it holds, recording log pi_behaviour(a_t | s_t) per action at sampling
 *   time (`Episode.steps[t].logProb`). Each action also gets a modelled token count
 *   ({@link sampleActionTokens}); the group's generation time is its longest trajectory's tokens x
 *   `secondsPerToken` (the G samples decode in parallel; the group is ready when the last one is).
 * - Trainer step from version k on K groups: GRPO advantages per group by the core kernel
 *   (`grpoScalarAdvantages`, the course's population std by default), the true per-action ratio
 *   rho_t = pi_k(a_t|s_t) / pi_behaviour(a_t|s_t), and ONE gradient-ascent step on
 *
 *     J(z) = (1/B) * sum_i A_i * sum_t w_{i,t} * log pi_z(a_{i,t} | s_{i,t}),   B = trajectories consumed,
 *
 *   with w held fixed (detached), so dJ/dz = (1/B) sum_i A_i sum_t w_{i,t} grad log pi_z. The gradient of
 *   the unclipped PPO surrogate rho_t * A at z = z_k is exactly the `is` case.
 *     `none`: w = 1 (treat stale samples as on-policy; the bias the course warns about);
 *     `is`:   w = rho_t (per-action importance weight: corrects the action distribution at each visited
 *             state, NOT the state-visitation distribution, which would need the product over earlier
 *             actions; the course's "say which layer of bias a correction corrects");
 *     `tis`:  w = min(rho_t, cap) (truncated IS, verl `rollout_is_threshold`, TRL
 *             `vllm_importance_sampling_cap`): bounded variance, bias where rho > cap;
 *     `seq_is`, `seq_tis`: every action of trajectory i gets the same weight, the product of its ratios
 *             prod_t rho_t (log-sum clamped at +-20), untruncated or truncated at the cap (verl
 *             `rollout_is: sequence`, TRL `vllm_importance_sampling_mode="sequence_truncate"`): this also
 *             reweights which states were visited, at the price of the course's "products of ratios
 *             over whole trajectories have large variance";
 *     `drop`: w = 1, but groups with lag > eta are discarded at consumption (in `unbounded` and
 *             `admission` modes; `bounded` already does this, so `drop` equals `none` there).
 * - Version k+1's logits are stored when the step is computed; workers can only use them once the
 *   simulation publishes them (after the step ends plus the publication delay).
 */

import { LabError } from '../core/errors.js';
import { importanceRatios, kishEss, LOG_RATIO_CLAMP } from '../core/ess.js';
import { grpoScalarAdvantages } from '../core/grpo.js';
import {
  checkOperandRange,
  DEFAULT_OPERANDS,
  type OperandRange,
  sampleTask,
} from '../envs/toolArithmetic.js';
import { accumulateGradLogProb, checkLogits, createLogits, logProb, NUM_LOGITS } from '../policy/tabular.js';
import type { Rng } from '../random.js';
import { type Episode, rolloutEpisode } from './episode.js';
import { protocolSuccessProbability } from './evaluate.js';
import { EVENT_SIM_DEFAULTS, type RolloutMode, type SimResult, simulateRollout } from './eventSim.js';
import {
  checkLengthModel,
  LENGTH_DEFAULTS,
  type LengthModel,
  sampleActionTokens,
} from './generationLength.js';
import {
  ascend,
  checkEpisodeBatch,
  type GroupAdvantageOptions,
  TEACHING_ADVANTAGE,
} from './groupReinforce.js';
import { rolloutGroups } from './rollout.js';

export type Correction = 'none' | 'is' | 'tis' | 'seq_is' | 'seq_tis' | 'drop';
export const CORRECTIONS: readonly Correction[] = ['none', 'is', 'tis', 'seq_is', 'seq_tis', 'drop'];

export interface AsyncLearnerOptions {
  mode: RolloutMode;
  /** Lag bound: admission + drop in `bounded`, admission only in `admission`; the drop threshold of `drop`. Default 2. */
  eta?: number;
  correction?: Correction;
  /** Truncation cap of `tis` (verl `rollout_is_threshold` default 2.0). */
  tisCap?: number;
  workers?: number;
  /** K groups per trainer step. */
  groupsPerBatch?: number;
  /** G episodes per group (per task). */
  groupSize?: number;
  updates?: number;
  trainStepTime?: number;
  publishDelay?: number;
  /** Simulated seconds per generated token (decode time). Default 0.01 (100 tokens/s). */
  secondsPerToken?: number;
  /** Gradient-ascent learning rate on the 24 logits (the agent experiment's default 2). */
  lr?: number;
  advantage?: Partial<GroupAdvantageOptions>;
  length?: Partial<LengthModel>;
  operands?: OperandRange;
}

/**
 * The learner's defaults, which the `rollout` experiment's options read (one source of defaults for
 * the library and the CLI): the simulation's schedule (EVENT_SIM_DEFAULTS) and the agent
 * experiment's K = 16, G = 8, 150 updates, lr 2.
 */
export const ASYNC_LEARNER_DEFAULTS = Object.freeze({
  eta: EVENT_SIM_DEFAULTS.eta,
  correction: 'none' as Correction,
  tisCap: 2,
  workers: EVENT_SIM_DEFAULTS.workers,
  groupsPerBatch: EVENT_SIM_DEFAULTS.groupsPerBatch,
  groupSize: 8,
  updates: EVENT_SIM_DEFAULTS.updates,
  trainStepTime: EVENT_SIM_DEFAULTS.trainStepTime,
  publishDelay: EVENT_SIM_DEFAULTS.publishDelay,
  secondsPerToken: 0.01,
  lr: 2,
});

/** Independent seeded streams; passing the same three streams to two runs gives them the same tasks. */
export interface AsyncLearnerStreams {
  /** Task n of the run is the n-th draw (one task per started group). */
  tasks: Rng;
  /** Action sampling of the workers. */
  policy: Rng;
  /** Token counts of the actions. */
  lengths: Rng;
}

/** Per-update measurements, each of length `updates` (index u = trainer step u, from version u). */
export interface UpdateSeries {
  /** Simulated time at which step u ended. */
  simTime: Float64Array;
  lagMean: Float64Array;
  lagMax: Float64Array;
  /** Kish ESS fraction of the raw per-action ratios rho of the batch (a shift diagnostic). */
  essRatio: Float64Array;
  /** Kish ESS fraction of the weights actually applied (1 for none/drop). */
  essApplied: Float64Array;
  /** Kish ESS fraction of per-trajectory ratio products (sequence-level IS). */
  essSequence: Float64Array;
  /** Mean |log rho| over the batch's actions: the size of the shift, whatever the lag. */
  meanAbsLogRatio: Float64Array;
  /** Fraction of the batch's actions with rho > cap (what `tis` truncates; reported for every correction). */
  overCap: Float64Array;
  /** Mean reward of the consumed batch. */
  trainSuccess: Float64Array;
  /** Mean tokens of the consumed trajectories. */
  consumedLength: Float64Array;
  /** Exact protocol success probability of the trainer's policy after the step (noise-free). */
  protocolProb: Float64Array;
}

export interface AsyncLearnerResult {
  options: Required<Omit<AsyncLearnerOptions, 'advantage' | 'length' | 'operands'>> & {
    advantage: GroupAdvantageOptions;
    length: LengthModel;
    operands: OperandRange;
  };
  sim: SimResult;
  /** The trainer's logits after the last step. */
  logits: Float64Array;
  /** Logits of every version: versions[v] is the policy after v steps (versions[0] = uniform). */
  versions: Float64Array[];
  series: UpdateSeries;
  /** One entry per consumed action: its group's lag and log(pi_current / pi_behaviour). */
  actionLag: Int32Array;
  actionLogRatio: Float64Array;
  /** The GRPO advantage of the trajectory each consumed action belongs to (same order). */
  actionAdvantage: Float64Array;
  /** Trainer step (0-based) that consumed each action (same order). */
  actionUpdate: Int32Array;
  /** Tokens of every trajectory of every started group (in start order), and of consumed ones. */
  generatedLengths: Float64Array;
  consumedLengths: Float64Array;
}

interface GroupData {
  episodes: Episode[];
  tokens: number[];
}

function checkLearnerOptions(o: AsyncLearnerResult['options']): void {
  const positive = (v: number, field: string) => {
    if (!(Number.isFinite(v) && v > 0)) {
      throw new LabError('BAD_ARGUMENT', `asyncLearner: ${field} must be a finite number > 0, got ${v}`, {
        details: { field, value: v },
      });
    }
  };
  positive(o.tisCap, 'tisCap');
  positive(o.secondsPerToken, 'secondsPerToken');
  positive(o.lr, 'lr');
  if (!Number.isInteger(o.groupSize) || o.groupSize < 1) {
    throw new LabError(
      'BAD_ARGUMENT',
      `asyncLearner: groupSize must be an integer >= 1, got ${o.groupSize}`,
      {
        details: { field: 'groupSize', value: o.groupSize },
      },
    );
  }
  if (!CORRECTIONS.includes(o.correction)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `asyncLearner: correction must be one of ${CORRECTIONS.join(', ')}, got '${o.correction}'`,
      { details: { field: 'correction', value: o.correction } },
    );
  }
  checkLengthModel(o.length);
  checkOperandRange(o.operands);
}

/** A growable float buffer (the number of consumed actions is known only at the end). */
class FloatList {
  private buf = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  toArray(): Float64Array {
    return this.buf.slice(0, this.length);
  }
}

/** Per-action quantities of one off-policy step, in batch order (episode by episode, step by step). */
export interface OffPolicyStep {
  /** log pi_current(a_t|s_t) - log pi_behaviour(a_t|s_t) (unclamped). */
  logRatios: Float64Array;
  /** exp(clamp(logRatio, +-20)). */
  ratios: Float64Array;
  /** The weight applied to each action's grad log pi (see the file comment). */
  weights: Float64Array;
}

/**
 * dJ/dz at z = `logits` for J(z) = (1/B) sum_i A_i sum_t w_{i,t} log pi_z(a_{i,t} | s_{i,t}), w detached:
 * w = 1 (`none`, `drop`), rho (`is`), min(rho, tisCap) (`tis`), with rho the ratio of `logits` to the
 * behaviour log-prob recorded in each step; for `seq_is` / `seq_tis` every action of trajectory i has
 * w = exp(clamp(sum_t log rho_t, +-20)), untruncated / truncated at tisCap. For `is` this is also the gradient of the unclipped
 * surrogate (1/B) sum_i A_i sum_t pi_z(a)/pi_behaviour(a) at z = logits. Writes `out` (length 24,
 * zeroed first). Shapes: `advantages` has one entry per episode, B >= 1.
 */
export function offPolicyGradient(
  logits: ArrayLike<number>,
  episodes: readonly Episode[],
  advantages: ArrayLike<number>,
  correction: Correction,
  tisCap: number,
  out: Float64Array = new Float64Array(NUM_LOGITS),
): OffPolicyStep {
  checkLogits(logits);
  checkEpisodeBatch(episodes, advantages, out);
  if (!(tisCap > 0)) {
    throw new LabError('BAD_ARGUMENT', `tisCap: expected a number > 0, got ${tisCap}`, {
      details: { field: 'tisCap', value: tisCap },
    });
  }
  const current: number[] = [];
  const behaviour: number[] = [];
  for (const ep of episodes) {
    for (const s of ep.steps) {
      current.push(logProb(logits, s.kind, s.stage, s.action));
      behaviour.push(s.logProb);
    }
  }
  const ratios = importanceRatios(current, behaviour);
  const logRatios = new Float64Array(current.length);
  const weights = new Float64Array(current.length);
  for (let j = 0; j < current.length; j++) logRatios[j] = (current[j] as number) - (behaviour[j] as number);
  out.fill(0);
  const scale = 1 / episodes.length;
  let a = 0;
  for (let i = 0; i < episodes.length; i++) {
    const adv = advantages[i] as number;
    const steps = (episodes[i] as Episode).steps;
    let seq = 1;
    if (correction === 'seq_is' || correction === 'seq_tis') {
      let logSum = 0;
      for (let t = 0; t < steps.length; t++) logSum += logRatios[a + t] as number;
      seq = Math.exp(Math.max(-LOG_RATIO_CLAMP, Math.min(LOG_RATIO_CLAMP, logSum)));
      if (correction === 'seq_tis') seq = Math.min(seq, tisCap);
    }
    for (const s of steps) {
      const rho = ratios[a] as number;
      const w =
        correction === 'is'
          ? rho
          : correction === 'tis'
            ? Math.min(rho, tisCap)
            : correction === 'seq_is' || correction === 'seq_tis'
              ? seq
              : 1;
      weights[a] = w;
      if (adv !== 0) accumulateGradLogProb(logits, s.kind, s.stage, s.action, scale * adv * w, out);
      a++;
    }
  }
  return { logRatios, ratios, weights };
}

/**
 * Runs the simulation with learning and returns the schedule, the final policy and every measurement.
 * `onUpdate(u, total)` is called after each trainer step is computed (progress reporting).
 *
 * Why one long function: it is the two hooks handed to {@link simulateRollout}, and they share the
 * learner's state. `generate` reads the policy versions that `train` stores and leaves each group's
 * episodes and token counts for `train` to consume and free; `train` steps the logits in place and
 * fills the per-update series and the per-action and length lists the result returns. As closures
 * over this scope the hooks see that state directly; as module functions they would take it as
 * arguments (the `train` hook alone uses thirteen of this scope's variables) or as a state object
 * standing for this scope.
 */
export function runAsyncLearner(
  options: AsyncLearnerOptions,
  streams: AsyncLearnerStreams,
  onUpdate?: (done: number, total: number) => void,
): AsyncLearnerResult {
  const o: AsyncLearnerResult['options'] = {
    ...ASYNC_LEARNER_DEFAULTS,
    ...options,
    advantage: { ...TEACHING_ADVANTAGE, ...options.advantage },
    length: { ...LENGTH_DEFAULTS, ...options.length },
    operands: options.operands ?? DEFAULT_OPERANDS,
  };
  checkLearnerOptions(o);
  const U = o.updates;
  const logits = createLogits();
  const versions: Float64Array[] = [logits.slice()];
  const groupData: GroupData[] = [];
  const generated = new FloatList();
  const consumed = new FloatList();
  const actionLag = new FloatList();
  const actionLogRatio = new FloatList();
  const actionAdvantage = new FloatList();
  const actionUpdate = new FloatList();
  const series: UpdateSeries = {
    simTime: new Float64Array(U),
    lagMean: new Float64Array(U),
    lagMax: new Float64Array(U),
    essRatio: new Float64Array(U),
    essApplied: new Float64Array(U),
    essSequence: new Float64Array(U),
    meanAbsLogRatio: new Float64Array(U),
    overCap: new Float64Array(U),
    trainSuccess: new Float64Array(U),
    consumedLength: new Float64Array(U),
    protocolProb: new Float64Array(U),
  };
  const grad = new Float64Array(NUM_LOGITS);

  const sim = simulateRollout(
    {
      mode: o.mode,
      eta: o.eta,
      dropBeyond:
        o.correction === 'drop' && (o.mode === 'unbounded' || o.mode === 'admission') ? o.eta : null,
      workers: o.workers,
      groupsPerBatch: o.groupsPerBatch,
      updates: U,
      trainStepTime: o.trainStepTime,
      publishDelay: o.publishDelay,
    },
    {
      generate: ({ id, version }) => {
        const behaviour = versions[version] as Float64Array;
        const task = sampleTask(streams.tasks, o.operands);
        const tokens: number[] = [];
        let longest = 0;
        // one group per generation event: the K x G rollout with K = 1; each episode's token
        // lengths are drawn right after it, as the engine would report them
        const episodes = rolloutGroups([task], o.groupSize, (t) => {
          const ep = rolloutEpisode(behaviour, t, streams.policy);
          let n = 0;
          for (let s = 0; s < ep.steps.length; s++) n += sampleActionTokens(o.length, streams.lengths);
          tokens.push(n);
          generated.push(n);
          if (n > longest) longest = n;
          return ep;
        });
        groupData[id] = { episodes, tokens };
        return longest * o.secondsPerToken;
      },

      train: ({ index, version, groups }) => {
        // Gather the batch: one row per trajectory, one entry per action.
        const episodes: Episode[] = [];
        const rewards: number[] = [];
        const labels: number[] = [];
        const lags: number[] = [];
        let lagSum = 0;
        let lagMax = 0;
        let tokenSum = 0;
        for (const g of groups) {
          const data = groupData[g.id] as GroupData;
          lagSum += g.lag;
          lagMax = Math.max(lagMax, g.lag);
          data.episodes.forEach((ep, j) => {
            episodes.push(ep);
            rewards.push(ep.reward);
            labels.push(g.id);
            lags.push(g.lag);
            const n = data.tokens[j] as number;
            consumed.push(n);
            tokenSum += n;
          });
          delete groupData[g.id]; // consumed: free the episodes
        }
        const advantages = grpoScalarAdvantages(rewards, labels, o.advantage);
        const step = offPolicyGradient(logits, episodes, advantages, o.correction, o.tisCap, grad);
        const { ratios, weights, logRatios } = step;
        const seqRatio = new Float64Array(episodes.length);
        let overCap = 0;
        let absLog = 0;
        let wins = 0;
        let a = 0;
        for (let i = 0; i < episodes.length; i++) {
          const ep = episodes[i] as Episode;
          wins += ep.reward;
          let logSeq = 0;
          for (let t = 0; t < ep.steps.length; t++) {
            if ((ratios[a] as number) > o.tisCap) overCap += 1;
            logSeq += logRatios[a] as number;
            absLog += Math.abs(logRatios[a] as number);
            actionLag.push(lags[i] as number);
            actionLogRatio.push(logRatios[a] as number);
            actionAdvantage.push(advantages[i] as number);
            actionUpdate.push(index);
            a++;
          }
          seqRatio[i] = Math.exp(Math.max(-LOG_RATIO_CLAMP, Math.min(LOG_RATIO_CLAMP, logSeq)));
        }
        ascend(logits, grad, o.lr);
        versions[version + 1] = logits.slice();

        series.lagMean[index] = lagSum / groups.length;
        series.lagMax[index] = lagMax;
        series.essRatio[index] = kishEss(ratios).fraction;
        series.essApplied[index] = kishEss(weights).fraction;
        series.essSequence[index] = kishEss(seqRatio).fraction;
        series.meanAbsLogRatio[index] = absLog / ratios.length;
        series.overCap[index] = overCap / ratios.length;
        series.trainSuccess[index] = wins / episodes.length;
        series.consumedLength[index] = tokenSum / episodes.length;
        series.protocolProb[index] = protocolSuccessProbability(logits);
        onUpdate?.(index + 1, U);
      },
    },
  );
  sim.updates.forEach((u) => {
    series.simTime[u.index] = u.end;
  });

  return {
    options: o,
    sim,
    logits,
    versions,
    series,
    actionLag: Int32Array.from(actionLag.toArray()),
    actionLogRatio: actionLogRatio.toArray(),
    actionAdvantage: actionAdvantage.toArray(),
    actionUpdate: Int32Array.from(actionUpdate.toArray()),
    generatedLengths: generated.toArray(),
    consumedLengths: consumed.toArray(),
  };
}
