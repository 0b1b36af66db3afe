/**
 * The two policies a token-lab arm can train (`--set policy=table|neural`), behind one small
 * interface so the arm's loop (src/experiments/tokenLab.ts) is the same for both:
 *
 * - `table`: the tabular softmax policy over the token env's 36 contexts (kind, stage, verified,
 *   think bucket) — the lab's default; every context has its own logits, nothing is shared.
 * - `neural`: the GRU sequence model (src/policy/sequenceModel.ts) on the prompted env
 *   (src/envs/promptedArithmetic.ts): the task is written in the prompt (1-3 chained operations),
 *   the model reads the whole transcript, and one set of parameters serves every position, as an
 *   LLM does.
 *
 * Each learner draws tasks, rolls out episodes with the current parameters, and runs the PPO epochs
 * of an update; the arm's loop does everything else (truncation policy, masks, GRPO advantages,
 * measurements) identically.
 */
import type { VanillaLossOptions } from '../core/vanillaPolicyLoss.js';
import {
  maxPromptLength,
  PROMPTED_VOCAB_SIZE,
  type PromptedEnvOptions,
  type PromptedTask,
  runPromptedEpisode,
  samplePromptedTask,
} from '../envs/promptedArithmetic.js';
import {
  contextCount,
  FIRST_OBSERVATION_TOKEN,
  sampleTokenTask,
  type TokenTask,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { SequenceAgent } from '../policy/sequenceAgent.js';
import { packSequences, SequenceModel } from '../policy/sequenceModel.js';
import { Rng } from '../random.js';
import { Optimizer, type OptimizerKind } from './adam.js';
import type { ArmEpisode } from './armEpisode.js';
import { sequencePolicyModel, tabularModel } from './policyModel.js';
import { type PpoUpdateStats, ppoUpdate } from './ppoUpdate.js';
import { rolloutGroups, sampleTaskBatch, tokenEnvRollout } from './rollout.js';
import { gatherLogProbs, type PackedBatch } from './tokenLearner.js';

export type PolicyKind = 'table' | 'neural';
export const POLICY_KINDS: readonly PolicyKind[] = ['table', 'neural'];

/** The options a learner reads (token-lab config keys). */
export interface LearnerConfig {
  policy: PolicyKind;
  lr: number;
  optimizer: OptimizerKind;
  observation_logit_init: number;
  think_buckets: number;
  tool_error_rate: number;
  max_operand: number;
  budget: number;
  unbounded_budget?: number | undefined;
  d_model: number;
  neural_lr: number;
  grad_clip: number;
  max_level: number;
  think_decay: number;
  think_cap: number;
}

/** What the GRU's shape and initial output bias are made of (read by {@link createSequenceModel}). */
export type SequenceModelConfig = Pick<
  LearnerConfig,
  'max_operand' | 'budget' | 'unbounded_budget' | 'd_model' | 'observation_logit_init'
>;

export interface ArmLearner {
  /** `{ policy, ...size }` for the record. */
  readonly description: Record<string, string | number>;
  /** Draws `count` tasks from `rng` (the same draws for every arm of a seed). */
  sampleTasks(rng: Rng, count: number): unknown[];
  /** `repeats` episodes per task with the current parameters, task-major (a task's group is contiguous). */
  rollout(tasks: readonly unknown[], repeats: number, pick: Rng, noise: Rng, budget: number): ArmEpisode[];
  /** `epochs` full-batch PPO steps on the packed rows (`batch` from packTranscripts of `rows`). */
  update(
    rows: readonly ArmEpisode[],
    batch: PackedBatch,
    advantages: Float32Array,
    mask: Float32Array,
    loss: VanillaLossOptions,
    epochs: number,
  ): PpoUpdateStats;
}

/**
 * Evaluation tasks of a seed for the tabular env (stream `token-lab/eval-tasks`): the same for every
 * arm and every option except max_operand.
 */
export function evaluationTasks(seed: number, cfg: { eval_tasks: number; max_operand: number }): TokenTask[] {
  const rng = new Rng(seed).fork('token-lab/eval-tasks');
  return sampleTaskBatch(rng, cfg.eval_tasks, (r) => sampleTokenTask(r, cfg.max_operand));
}

/**
 * The learner for `cfg.policy`, initialised from `init` (the seed's policy-init stream); a neural
 * learner starts instead from `initialParams` when given (a warm start, src/experiments/warmStart.ts).
 */
export function createLearner(cfg: LearnerConfig, init: Rng, initialParams?: Float64Array): ArmLearner {
  return cfg.policy === 'neural' ? neuralLearner(cfg, init, initialParams) : tableLearner(cfg);
}

/**
 * The neural policy's model for `cfg` (vocabulary, a context for the longest prompt and budget,
 * d_model, the observation-token output bias), its parameters drawn from `init`.
 */
export function createSequenceModel(cfg: SequenceModelConfig, init: Rng): SequenceModel {
  const context = maxPromptLength(cfg.max_operand) + Math.max(cfg.budget, cfg.unbounded_budget ?? cfg.budget);
  return new SequenceModel(
    {
      vocab: PROMPTED_VOCAB_SIZE,
      context,
      dModel: cfg.d_model,
      outputBias: initialLogits(PROMPTED_VOCAB_SIZE, cfg.observation_logit_init),
    },
    init,
  );
}

/** Initial logit per token: 0 for actions, `observationLogitInit` for observation tokens. */
function initialLogits(vocab: number, observationLogitInit: number): number[] {
  return Array.from({ length: vocab }, (_, v) => (v >= FIRST_OBSERVATION_TOKEN ? observationLogitInit : 0));
}

function tableLearner(cfg: LearnerConfig): ArmLearner {
  const policy = new ContextPolicy(contextCount(cfg.think_buckets), VOCAB_SIZE, {
    tokenLogits: initialLogits(VOCAB_SIZE, cfg.observation_logit_init),
  });
  const optimizer = new Optimizer(policy.logits.length, {
    kind: cfg.optimizer,
    learningRate: cfg.lr,
  });
  const model = tabularModel(policy);
  // old log-probs are those of the policy that sampled the batch: the table at rollout time
  let logTable = policy.logProbabilities();
  return {
    description: { policy: 'table', contexts: policy.contexts, parameters: policy.logits.length },
    sampleTasks: (rng, count) => sampleTaskBatch(rng, count, (r) => sampleTokenTask(r, cfg.max_operand)),
    rollout(tasks, repeats, pick, noise, budget) {
      logTable = policy.logProbabilities();
      const env = { budget, toolErrorRate: cfg.tool_error_rate, thinkBuckets: cfg.think_buckets };
      return tokenEnvRollout(policy.probabilities(), tasks as TokenTask[], repeats, pick, noise, env);
    },
    update(_rows, batch, advantages, mask, loss, epochs) {
      const oldLogProb = gatherLogProbs(logTable, VOCAB_SIZE, batch);
      return ppoUpdate(model, optimizer, { batch, mask, advantages, oldLogProb }, { epochs, loss });
    },
  };
}

function neuralLearner(cfg: LearnerConfig, init: Rng, initialParams?: Float64Array): ArmLearner {
  const model = createSequenceModel(cfg, init);
  if (initialParams) model.params.set(initialParams);
  const optimizer = new Optimizer(model.size, { kind: cfg.optimizer, learningRate: cfg.neural_lr });
  const policyModel = sequencePolicyModel(model);
  let steps = 0;
  return {
    description: {
      policy: 'neural',
      model: 'gru',
      d_model: model.dModel,
      context: model.context,
      vocab: model.vocab,
      parameters: model.size,
    },
    sampleTasks: (rng, count) =>
      sampleTaskBatch(rng, count, (r) => samplePromptedTask(r, cfg.max_operand, 1, cfg.max_level)),
    rollout(tasks, repeats, pick, noise, budget) {
      const agent = new SequenceAgent(model, pick);
      const env: Partial<PromptedEnvOptions> = {
        budget,
        toolErrorRate: cfg.tool_error_rate,
        thinkBuckets: cfg.think_buckets,
        thinkDecay: cfg.think_decay,
        thinkCap: cfg.think_cap,
      };
      return rolloutGroups(tasks as PromptedTask[], repeats, (task) =>
        runPromptedEpisode(task, agent, noise, env),
      );
    },
    update(rows, _batch, advantages, mask, loss, epochs) {
      const seq = packSequences(
        rows.map((e) => e.prompt ?? []),
        rows.map((e) => e.tokens),
      );
      // old log-probs: epoch 1's forward pass (the parameters have not moved since the rollout)
      const stats = ppoUpdate(
        policyModel,
        optimizer,
        { batch: seq, mask, advantages },
        { epochs, gradClip: cfg.grad_clip, loss, firstStep: steps },
      );
      steps += epochs;
      return stats;
    },
  };
}
