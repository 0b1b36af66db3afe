/**
 * Supervised pretraining (SFT) of the sequence policy on the scripted demonstrator's transcripts
 * (src/train/demonstrator.ts): next-token cross-entropy on the model's own action tokens, the
 * environment's tokens (and the prompt) masked out — verl's SFT trainer with a `loss_mask` over the
 * response (`verl/trainer/fsdp_sft_trainer.py`, `_compute_loss_and_backward`: per-token
 * `CrossEntropyLoss(reduction='none')` times `loss_mask`, summed and divided by the number of
 * unmasked tokens), or TRL's `SFTTrainer` with `completion_only_loss` / `assistant_only_loss`.
 *
 * This is the warm start real reasoning RL begins from: a policy that already solves some tasks
 * some of the time, so RL's groups are "sometimes solved" rather than "never solved".
 */
import { LabError } from '../core/errors.js';
import {
  type PromptedEnvOptions,
  type PromptedTask,
  samplePromptedTask,
} from '../envs/promptedArithmetic.js';
import { ROLE_MODEL } from '../envs/tokenVocab.js';
import { clipGradNorm } from '../policy/gradClip.js';
import { packSequences, type SequenceBatch, type SequenceModel } from '../policy/sequenceModel.js';
import type { Rng } from '../random.js';
import { Optimizer } from './adam.js';
import { type DemonstratorMixture, demonstrate, mixtureCdf } from './demonstrator.js';

/**
 * Version of what pretraining produces for given options (the demonstrator's scripts, this loop and
 * its loss, the streams it draws from): bump it on any change that moves a pretrained parameter, so
 * cached checkpoints of the old code are not reused (src/experiments/warmStart.ts).
 */
export const SFT_CODE_VERSION = 1;

/** The loss of {@link sftLossGrad} and how many tokens it averaged over. */
export interface SftLoss {
  /** `L = −(1/N) Σ_{b,s} m[b,s] · log p(y[b,s] | y[b,<s], prompt_b)`. */
  loss: number;
  /** `N = Σ m`, the tokens in the loss. */
  tokens: number;
}

/**
 * Masked next-token cross-entropy of `model` on `batch` (token-mean over the mask), and its gradient
 * with respect to every parameter, written into `model.grads`:
 *
 *   L = −(1/N) Σ_{b,s} m[b,s] · logp[b,s],   N = Σ_{b,s} m[b,s]
 *   ∂L/∂logp[b,s] = −m[b,s] / N   (chained to the parameters by `model.backward`)
 *
 * `mask` is `[batch.rows, batch.responseCols]` over the response tokens, exactly 0 or 1 (1 = a token
 * the model wrote, learned; 0 = the environment's tokens and padding). verl `fsdp_sft_trainer`'s
 * loss with `loss_mask`; TRL `SFTTrainer` with a completion-only loss.
 * Errors: SHAPE_MISMATCH for a mask of another shape; BAD_MASK naming row and token for an entry
 * that is not 0 or 1; EMPTY_MASK for an all-zero mask (the mean would be 0/0).
 */
export function sftLossGrad(model: SequenceModel, batch: SequenceBatch, mask: ArrayLike<number>): SftLoss {
  const n = batch.rows * batch.responseCols;
  if (mask.length !== n) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `mask: expected ${n} values [${batch.rows}, ${batch.responseCols}], got ${mask.length}`,
      { details: { field: 'mask', expected: n, actual: mask.length } },
    );
  }
  let tokens = 0;
  for (let i = 0; i < n; i++) {
    const m = mask[i] as number;
    if (m !== 0 && m !== 1) {
      const row = Math.floor(i / batch.responseCols);
      const token = i % batch.responseCols;
      throw new LabError('BAD_MASK', `mask: value ${m} at row ${row}, token ${token} is not 0 or 1`, {
        details: { field: 'mask', row, token, value: m },
      });
    }
    tokens += m;
  }
  if (tokens === 0) {
    throw new LabError('EMPTY_MASK', 'mask: no token to learn (all zero): the mean cross-entropy is 0/0', {
      details: { field: 'mask' },
    });
  }
  const logp = model.logProbs(batch);
  const grad = new Float64Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    if (mask[i] === 0) continue;
    sum += logp[i] as number;
    grad[i] = -1 / tokens;
  }
  model.backward(grad);
  return { loss: -sum / tokens, tokens };
}

/** Packs episodes (prompt + transcript) for the model, with the mask of the model's own tokens. */
export function packDemonstrations(
  episodes: readonly { prompt: readonly number[]; tokens: readonly number[]; roles: readonly number[] }[],
): { batch: SequenceBatch; mask: Float64Array } {
  const batch = packSequences(
    episodes.map((e) => e.prompt),
    episodes.map((e) => e.tokens),
  );
  const mask = new Float64Array(batch.rows * batch.responseCols);
  episodes.forEach((e, b) => {
    for (let s = 0; s < e.roles.length; s++)
      if (e.roles[s] === ROLE_MODEL) mask[b * batch.responseCols + s] = 1;
  });
  return { batch, mask };
}

export interface SftOptions {
  /** Optimizer steps (≥ 0; 0 leaves the model as initialised). */
  steps: number;
  /** Demonstrations per step (≥ 1). */
  batch: number;
  /** Adam step size. */
  lr: number;
  /** Global gradient-norm bound (verl `grad_clip`). */
  gradClip: number;
  mixture: DemonstratorMixture;
  /** Tasks: operands in [0, maxOperand], levels uniform in 1..maxLevel (as RL draws them). */
  maxOperand: number;
  maxLevel: number;
  /** The env the demonstrations are played in (budget, tool slips, think effect). */
  env: Partial<PromptedEnvOptions>;
}

/** What pretraining did: the loss of every step (before its update). */
export interface SftStats {
  losses: number[];
}

/**
 * Pretrains `model` in place: `steps` Adam steps (fresh optimizer, `lr`), each on `batch` new
 * demonstrations (tasks from `rng.fork('sft/tasks')`, behaviours and their choices from
 * `rng.fork('sft/behaviour')`, tool slips from `rng.fork('sft/noise')`) with the masked
 * cross-entropy of {@link sftLossGrad}, gradient clipped to `gradClip`. Deterministic for (model,
 * options, rng). Errors: BAD_ARGUMENT for steps < 0, batch < 1 or bad mixture weights (naming the
 * weight); NON_FINITE naming the step and tensor if training diverges.
 */
export function pretrainSequenceModel(model: SequenceModel, options: SftOptions, rng: Rng): SftStats {
  const { steps, batch } = options;
  if (!Number.isInteger(steps) || steps < 0) {
    throw new LabError('BAD_ARGUMENT', `sft_steps: expected an integer >= 0, got ${steps}`, {
      details: { field: 'sft_steps', value: steps },
    });
  }
  if (!Number.isInteger(batch) || batch < 1) {
    throw new LabError('BAD_ARGUMENT', `sft_batch: expected an integer >= 1, got ${batch}`, {
      details: { field: 'sft_batch', value: batch },
    });
  }
  const cdf = mixtureCdf(options.mixture);
  const taskRng = rng.fork('sft/tasks');
  const behaviourRng = rng.fork('sft/behaviour');
  const noise = rng.fork('sft/noise');
  const optimizer = new Optimizer(model.size, { kind: 'adam', learningRate: options.lr });
  const losses: number[] = [];
  for (let step = 0; step < steps; step++) {
    const tasks: PromptedTask[] = Array.from({ length: batch }, () =>
      samplePromptedTask(taskRng, options.maxOperand, 1, options.maxLevel),
    );
    const { batch: packed, mask } = packDemonstrations(
      demonstrate(tasks, cdf, behaviourRng, noise, options.env),
    );
    const { loss } = sftLossGrad(model, packed, mask);
    model.checkFinite(model.grads, 'grads', step);
    clipGradNorm(model.grads, options.gradClip, step);
    optimizer.step(model.params, model.grads);
    model.checkFinite(model.params, 'params', step);
    losses.push(loss);
  }
  return { losses };
}
