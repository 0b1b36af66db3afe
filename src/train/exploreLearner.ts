/**
 * The learner of the `explore` experiment: GRPO + PPO on the prompted env (tasks of 1-3 chained
 * tool calls written in the prompt) for either policy (`policy=table|neural`), with the three extra
 * terms the experiment varies:
 *
 * - sampling temperature tau: rollouts draw from softmax(z / tau) and record the behaviour log-prob
 *   of each model token under that tempered distribution (src/policy/temperature.ts). The update
 *   always trains the tau = 1 policy: old log-probs are the tau = 1 policy at rollout time (verl's
 *   `old_log_prob` recomputed by the actor). With `isCorrection` the advantages are multiplied by the
 *   core's truncated token IS weights `min(pi_1(a) / pi_tau(a), 2)` (verl `rollout_is=token`,
 *   `rollout_is_threshold=2`), which undoes the sampling distribution's tilt; without it the tempered
 *   samples are treated as if the tau = 1 policy had drawn them.
 * - entropy bonus beta (verl `entropy_coeff`): loss = pg_loss − beta · agg_loss(H, mask, mode), with
 *   H the tau = 1 entropy at every model token (core `entropyLossGrad` for the table, the model's
 *   `entropies` + `backward(·, dL/dH)` for the GRU).
 * - demonstrations (sft_coef): expert transcripts are appended to the batch as rows with loss mask 0
 *   (no policy-gradient, no entropy term) and get `∂loss/∂log pi = −sft_coef / N_expert` on their
 *   model tokens: loss += sft_coef · mean over expert model tokens of −log pi (a supervised NLL term
 *   beside the policy-gradient loss).
 *
 * Both policies see the same task draws, sampling draws and tool noise for the same streams.
 */
import { aggLossGrad, type LossAggMode } from '../core/aggLoss.js';
import { entropyLossGrad } from '../core/entropy.js';
import { rolloutIsWeights } from '../core/rolloutCorrection.js';
import {
  maxPromptLength,
  PROMPTED_VOCAB_SIZE,
  type PromptedEnvOptions,
  type PromptedEpisode,
  type PromptedTask,
  promptedContextCount,
  runPromptedEpisode,
  type TranscriptAgent,
} from '../envs/promptedArithmetic.js';
import {
  FIRST_OBSERVATION_TOKEN,
  TOK_ADD,
  TOK_READ,
  TOK_SUB,
  TOK_SUBMIT,
  TOK_THINK,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { packSequences, SequenceModel, type SequenceSampler } from '../policy/sequenceModel.js';
import { sampleTempered, temperedTables } from '../policy/temperature.js';
import type { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import { groupBatch } from './batching.js';
import { sequencePolicyModel, tabularModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';
import { rolloutGroups } from './rollout.js';
import { gatherLogProbs, type PackedBatch } from './tokenLearner.js';

export interface ExploreLearnerConfig {
  policy: 'table' | 'neural';
  lr: number;
  neural_lr: number;
  d_model: number;
  grad_clip: number;
  observation_logit_init: number;
  think_buckets: number;
  tool_error_rate: number;
  think_decay: number;
  think_cap: number;
  max_operand: number;
  budget: number;
  clip_ratio: number;
  ppo_epochs: number;
}

/** A prompted episode with the behaviour log-prob of each response token (0 on env tokens). */
export interface ExploreEpisode extends PromptedEpisode {
  behaviourLogProb: number[];
}

export interface UpdateTerms {
  temperature: number;
  entropyCoef: number;
  isCorrection: boolean;
  lossAggMode: LossAggMode;
  /** Expert transcripts for the supervised term (may be empty) and its coefficient. */
  demonstrations: readonly ExploreEpisode[];
  sftCoef: number;
}

export interface ExploreLearner {
  readonly description: Record<string, string | number>;
  /** `repeats` episodes per task (or `repeats[k]` for task k) at temperature `tau`, task-major. */
  rollout(
    tasks: readonly PromptedTask[],
    repeats: number | readonly number[],
    tau: number,
    pick: Rng,
    noise: Rng,
  ): ExploreEpisode[];
  /** PPO epochs on `rows` with GRPO advantages of `scores` in groups `group`; returns the tau = 1 entropy (token-mean over model tokens, before the step). */
  update(rows: readonly ExploreEpisode[], group: Int32Array, terms: UpdateTerms): { entropy: number };
}

/** Initial logit per token: 0 for actions, `init` for observation tokens (the "pretrained" prior). */
function initialLogits(init: number): number[] {
  return Array.from({ length: PROMPTED_VOCAB_SIZE }, (_, v) => (v >= FIRST_OBSERVATION_TOKEN ? init : 0));
}

function envOptions(cfg: ExploreLearnerConfig): Partial<PromptedEnvOptions> {
  return {
    budget: cfg.budget,
    toolErrorRate: cfg.tool_error_rate,
    thinkBuckets: cfg.think_buckets,
    thinkDecay: cfg.think_decay,
    thinkCap: cfg.think_cap,
  };
}

/** Records each model token's behaviour log-prob beside the env's transcript. */
function withBehaviour(ep: PromptedEpisode, logProbs: number[]): ExploreEpisode {
  const behaviourLogProb: number[] = [];
  let k = 0;
  for (const role of ep.roles) behaviourLogProb.push(role === 1 ? (logProbs[k++] as number) : 0);
  return { ...ep, behaviourLogProb };
}

/**
 * The scripted expert of the demonstrations: read, then before each tool call `thinkCap` thinks (each
 * halves the slip chance), the operator the prompt names (add for +, sub for −; the tabular context's
 * phase says which), then submit. Succeeds unless a tool slips (0.3 · 0.5² = 7.5% per call).
 */
export class ExpertAgent implements TranscriptAgent {
  private thinks = 0;
  constructor(
    private readonly thinkBuckets: number,
    private readonly thinkCap: number,
  ) {}
  start(): void {
    this.thinks = 0;
  }
  choose(context: number): number {
    const phase = Math.floor(Math.floor(context / this.thinkBuckets) / 2);
    if (phase === 0) return TOK_READ;
    if (phase === 3) return TOK_SUBMIT;
    if (this.thinks < this.thinkCap) {
      this.thinks++;
      return TOK_THINK;
    }
    this.thinks = 0;
    return phase === 1 ? TOK_ADD : TOK_SUB;
  }
  append(): void {}
}

/** Expert transcripts of `tasks` (one each; behaviour log-probs 0: they enter only the supervised term). */
export function expertTranscripts(
  tasks: readonly PromptedTask[],
  cfg: ExploreLearnerConfig,
  noise: Rng,
): ExploreEpisode[] {
  const agent = new ExpertAgent(cfg.think_buckets, cfg.think_cap);
  return tasks.map((t) => {
    const ep = runPromptedEpisode(t, agent, noise, envOptions(cfg));
    return withBehaviour(ep, new Array(ep.modelTokens).fill(0));
  });
}

/** Shared part of an update: batch, masks, advantages (IS-weighted if asked), SFT gradient. */
function prepare(
  rows: readonly ExploreEpisode[],
  group: Int32Array,
  terms: UpdateTerms,
  oldLogProb: (all: ExploreEpisode[], batch: PackedBatch) => Float64Array,
) {
  const all = [...rows, ...terms.demonstrations];
  const scores = all.map((e, i) => (i < rows.length ? e.score : 0));
  const labels = new Int32Array(all.length);
  labels.set(group);
  for (let i = rows.length; i < all.length; i++) labels[i] = -1 - i; // singletons: advantage 0
  const {
    batch,
    mask,
    advantages: adv,
  } = groupBatch(all, scores, labels, {
    // demonstration rows: outside the policy-gradient and entropy terms
    editMask: (m, b) => m.fill(0, rows.length * b.shape.cols),
    norm: { std: 'unbiased' },
  });
  const { cols } = batch.shape;
  const old = oldLogProb(all, batch);
  if (terms.isCorrection && terms.temperature !== 1) {
    const logRatio = new Float64Array(old.length);
    all.forEach((e, b) => {
      for (let t = 0; t < e.tokens.length; t++) {
        if (mask[b * cols + t] !== 0)
          logRatio[b * cols + t] = (old[b * cols + t] as number) - (e.behaviourLogProb[t] as number);
      }
    });
    const w = rolloutIsWeights({ logRatio, responseMask: mask }, batch.shape).weights;
    for (let i = 0; i < adv.length; i++) adv[i] = (adv[i] as number) * (w[i] as number);
  }
  const sft = new Float64Array(batch.tokens.length);
  let expertTokens = 0;
  for (let b = rows.length; b < all.length; b++)
    for (let t = 0; t < cols; t++) if (batch.roles[b * cols + t] === 1) expertTokens++;
  if (terms.sftCoef > 0 && expertTokens > 0) {
    for (let b = rows.length; b < all.length; b++)
      for (let t = 0; t < cols; t++)
        if (batch.roles[b * cols + t] === 1) sft[b * cols + t] = -terms.sftCoef / expertTokens;
  }
  return { all, batch, mask, adv, old, sft };
}

function tableLearner(cfg: ExploreLearnerConfig): ExploreLearner {
  const V = PROMPTED_VOCAB_SIZE;
  const contexts = promptedContextCount(cfg.think_buckets);
  const policy = new ContextPolicy(contexts, V, { tokenLogits: initialLogits(cfg.observation_logit_init) });
  const optimizer = new Optimizer(policy.logits.length, { kind: 'adam', learningRate: cfg.lr });
  const model = tabularModel(policy);
  let logTable = policy.logProbabilities();
  return {
    description: { policy: 'table', contexts, parameters: policy.logits.length },
    rollout(tasks, repeats, tau, pick, noise) {
      logTable = policy.logProbabilities();
      const { probs, logProbs } = temperedTables(policy.logits, contexts, V, tau);
      let drawn: number[] = [];
      const agent: TranscriptAgent = {
        start: () => {
          drawn = [];
        },
        choose: (ctx) => {
          const tok = ContextPolicy.sample(probs, V, ctx, pick);
          drawn.push(logProbs[ctx * V + tok] as number);
          return tok;
        },
        append: () => {},
      };
      return rolloutGroups(tasks, repeats, (task) =>
        withBehaviour(runPromptedEpisode(task, agent, noise, envOptions(cfg)), drawn),
      );
    },
    update(rows, group, terms) {
      const prep = prepare(rows, group, terms, (_all, b) => gatherLogProbs(logTable, V, b));
      const { batch, mask, adv, sft } = prep;
      const shape = batch.shape;
      const n = shape.rows * shape.cols;
      // the tau = 1 token-mean entropy before the update; the logits at each position are its context's row
      const z = new Float64Array(n * V);
      for (let i = 0; i < n; i++)
        z.set(policy.logits.subarray(batch.contexts[i]! * V, batch.contexts[i]! * V + V), i * V);
      const entropy = entropyLossGrad(
        { logits: z, responseMask: mask },
        { rows: shape.rows, cols: shape.cols, vocab: V },
        'token-mean',
      ).value;
      ppoUpdate(
        model,
        optimizer,
        { batch, mask, advantages: adv, oldLogProb: prep.old },
        {
          epochs: cfg.ppo_epochs,
          loss: { lossAggMode: terms.lossAggMode, clipRatio: cfg.clip_ratio },
          entropyCoef: terms.entropyCoef,
          extraGradLogProb: sft,
        },
      );
      return { entropy };
    },
  };
}

/** The GRU's TranscriptAgent at temperature tau, recording behaviour log-probs. */
class TemperedSequenceAgent implements TranscriptAgent {
  drawn: number[] = [];
  private readonly weights: Float64Array;
  constructor(
    private readonly sampler: SequenceSampler,
    private readonly tau: number,
    private readonly rng: Rng,
  ) {
    this.weights = new Float64Array(PROMPTED_VOCAB_SIZE);
  }
  start(prompt: readonly number[]): void {
    this.drawn = [];
    this.sampler.reset();
    for (const tok of prompt) this.sampler.feed(tok);
  }
  choose(): number {
    const s = sampleTempered(this.sampler.logits, 0, PROMPTED_VOCAB_SIZE, this.tau, this.rng, this.weights);
    this.drawn.push(s.logProb);
    return s.token;
  }
  append(token: number): void {
    this.sampler.feed(token);
  }
}

function neuralLearner(cfg: ExploreLearnerConfig, init: Rng, initialParams?: Float64Array): ExploreLearner {
  const model = new SequenceModel(
    {
      vocab: PROMPTED_VOCAB_SIZE,
      context: maxPromptLength(cfg.max_operand) + cfg.budget,
      dModel: cfg.d_model,
      outputBias: initialLogits(cfg.observation_logit_init),
    },
    init,
  );
  if (initialParams) {
    if (initialParams.length !== model.size)
      throw new Error(
        `explore: warm-start parameters of size ${initialParams.length}, model size ${model.size}`,
      );
    model.params.set(initialParams);
  }
  const optimizer = new Optimizer(model.size, { kind: 'adam', learningRate: cfg.neural_lr });
  const policyModel = sequencePolicyModel(model);
  let step = 0;
  return {
    description: { policy: 'neural', model: 'gru', d_model: model.dModel, parameters: model.size },
    rollout(tasks, repeats, tau, pick, noise) {
      model.prepareGeneration();
      const agent = new TemperedSequenceAgent(model.sampler(), tau, pick);
      return rolloutGroups(tasks, repeats, (task) =>
        withBehaviour(runPromptedEpisode(task, agent, noise, envOptions(cfg)), agent.drawn),
      );
    },
    update(rows, group, terms) {
      const seqOf = (all: readonly ExploreEpisode[]) =>
        packSequences(
          all.map((e) => e.prompt),
          all.map((e) => e.tokens),
        );
      // old log-probs: the tau = 1 model before this update's steps (verl's recomputed old_log_prob)
      const { all, batch, mask, adv, sft, old } = prepare(rows, group, terms, (a) =>
        model.logProbs(seqOf(a)).slice(),
      );
      const seq = seqOf(all);
      const shape = batch.shape;
      // the tau = 1 token-mean entropy before the update, of the forward pass that gave `old`
      const tokenMean = aggLossGrad(mask, shape, 'token-mean');
      const h = model.entropies();
      let entropy = 0;
      for (let i = 0; i < h.length; i++) entropy += (tokenMean[i] as number) * (h[i] as number);
      const stats = ppoUpdate(
        policyModel,
        optimizer,
        { batch: seq, mask, advantages: adv, oldLogProb: old },
        {
          epochs: cfg.ppo_epochs,
          loss: { lossAggMode: terms.lossAggMode, clipRatio: cfg.clip_ratio },
          entropyCoef: terms.entropyCoef,
          extraGradLogProb: sft,
          gradClip: cfg.grad_clip,
          firstStep: step,
        },
      );
      step += stats.steps.length;
      return { entropy };
    },
  };
}

/**
 * The learner for `cfg.policy`, initialised from `init` (the seed's policy-init stream), or for the
 * neural policy from `initialParams` when given (the warm start: src/experiments/warmStart.ts).
 */
export function createExploreLearner(
  cfg: ExploreLearnerConfig,
  init: Rng,
  initialParams?: Float64Array,
): ExploreLearner {
  return cfg.policy === 'neural' ? neuralLearner(cfg, init, initialParams) : tableLearner(cfg);
}
