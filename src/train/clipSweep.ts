/**
 * PPO epochs on one fixed batch with verl's mini-batching, and exact measurements of how far the
 * policy moved from `pi_old` after each epoch (the clip experiment's engine).
 *
 * verl's actor update (`dp_actor.update_policy`): the batch is split into `ppo_mini_batch_size`
 * mini-batches; for each of `ppo_epochs` epochs, each mini-batch gives one optimizer step on the
 * vanilla clipped loss (+ `kl_loss_coef · kl_loss` when `use_kl_loss`), with `old_log_prob` and the
 * advantages fixed at rollout. Here mini-batches are contiguous row ranges of the batch (verl
 * splits in order when `shuffle` is off), each aggregated on its own (its own token-mean
 * denominator), and the logged metrics are averaged over every step, as verl's `append_to_dict`
 * + mean does.
 *
 * The policy is behind {@link PolicyModel} — flat parameters the optimizer updates, the log-prob
 * rows the batch reads, a backward from `∂loss/∂log_prob` — so a sequence model can be swept by
 * the same code; only the tabular one ({@link tabularModel}) exists today.
 */
import {
  type ClipRegion,
  clippedMovedFurther,
  l2Distance,
  ratioStats,
  trueKlAtPositions,
} from '../core/clipMeasures.js';
import { LabError } from '../core/errors.js';
import type { KlPenaltyName } from '../core/kl.js';
import { klLossGrad } from '../core/klLoss.js';
import {
  policyLossVanilla,
  policyLossVanillaGrad,
  resolveClip,
  VANILLA_DEFAULTS,
  type VanillaLossOptions,
} from '../core/vanillaPolicyLoss.js';
import { type ContextPolicy, chainLogProbGrad } from '../policy/contextPolicy.js';
import type { Optimizer } from './adam.js';
import { gatherLogProbs, type PackedBatch } from './tokenLearner.js';

/** What the sweep needs of a policy (tabular today; a sequence model can implement the same). */
export interface PolicyModel {
  /** The flat parameter vector the optimizer updates in place. */
  readonly params: Float64Array;
  readonly vocab: number;
  /**
   * The log-prob rows `[R, V]` of the current parameters that `batch` reads, and which row each
   * position reads (`[B,T]`): a table's rows are its contexts, a sequence model's its positions.
   */
  logProbRows(batch: PackedBatch): { table: Float64Array; rowOf: ArrayLike<number> };
  /** `log pi(token | position)` at every position of `batch` (`[B,T]`, 0 at padding). */
  logProbAt(batch: PackedBatch): Float64Array;
  /** `∂loss/∂params` from `∂loss/∂log_prob` at the positions of `batch` (`[B,T]`). */
  backward(batch: PackedBatch, gradLogProb: Float64Array): Float64Array;
}

/** The tabular softmax policy as a {@link PolicyModel}: parameters = logits `[contexts, vocab]`. */
export function tabularModel(policy: ContextPolicy): PolicyModel {
  return {
    params: policy.logits,
    vocab: policy.vocab,
    logProbRows: (batch) => ({ table: policy.logProbabilities(), rowOf: batch.contexts }),
    logProbAt: (batch) => gatherLogProbs(policy.logProbabilities(), policy.vocab, batch),
    backward: (batch, grad) =>
      chainLogProbGrad(
        policy.probabilities(),
        policy.contexts,
        policy.vocab,
        batch.contexts,
        batch.tokens,
        grad,
      ),
  };
}

/** Rows `[from, to)` of a packed batch as a batch of its own (views, no copy). */
export function batchRows(batch: PackedBatch, from: number, to: number): PackedBatch {
  const { cols } = batch.shape;
  return {
    shape: { rows: to - from, cols },
    tokens: batch.tokens.subarray(from * cols, to * cols),
    contexts: batch.contexts.subarray(from * cols, to * cols),
    roles: batch.roles.subarray(from * cols, to * cols),
    lengths: batch.lengths.subarray(from, to),
  };
}

/**
 * The row ranges of `miniBatches` contiguous mini-batches of `rows` rows (sizes differ by at most
 * one). BAD_ARGUMENT unless `1 <= miniBatches <= rows`.
 */
export function miniBatchRanges(rows: number, miniBatches: number): [number, number][] {
  if (!Number.isInteger(miniBatches) || miniBatches < 1 || miniBatches > rows) {
    throw new LabError(
      'BAD_ARGUMENT',
      `mini_batches: expected an integer in [1, ${rows}] (the batch's rows), got ${miniBatches}`,
      { details: { field: 'mini_batches', value: miniBatches } },
    );
  }
  return Array.from({ length: miniBatches }, (_, k) => [
    Math.floor((k * rows) / miniBatches),
    Math.floor(((k + 1) * rows) / miniBatches),
  ]);
}

/** The inputs of one PPO update that stay fixed over its epochs. */
export interface FixedBatch {
  batch: PackedBatch;
  /** Response mask `[B,T]`. */
  mask: Float32Array;
  advantages: Float32Array;
  /** `old_log_prob [B,T]`: log-probs of the sampled tokens under pi_old. */
  oldLogProb: Float64Array;
}

/** verl's use_kl_loss: `kl_loss_coef · agg(kl_penalty(log_prob, ref_log_prob, kl_loss_type))`. */
export interface KlLossSpec {
  coef: number;
  type: KlPenaltyName;
  /** `ref_log_prob [B,T]` of the sampled tokens under the reference policy. */
  refLogProb: Float64Array;
}

export interface PpoEpochsOptions {
  /** verl `ppo_epochs`. */
  epochs: number;
  /** Mini-batches per epoch (verl: batch size / `ppo_mini_batch_size`). */
  miniBatches: number;
  loss: VanillaLossOptions;
  klLoss?: KlLossSpec | null;
  /** Called after each epoch (1-based) with the running totals; measure the policy there. */
  onEpoch?: (epoch: number, totals: StepTotals) => void;
}

/** Running totals over the optimizer steps so far. */
export interface StepTotals {
  steps: number;
  /** Σ over steps of verl's logged metrics (evaluated before each step, on its mini-batch). */
  pgClipfrac: number;
  pgClipfracLower: number;
  ppoKl: number;
  /** Σ over steps of verl's `kl_loss` metric (0 without the KL loss). */
  klLoss: number;
  /** Tokens clipped before a step (counted once per step) and, of those, moved further out by it. */
  clipped: number;
  movedFurther: number;
}

/**
 * `epochs` × `miniBatches` optimizer steps of verl's actor update on a fixed batch (see the file
 * header); returns the totals. Deterministic: no randomness (mini-batches in order).
 */
export function ppoEpochs(
  model: PolicyModel,
  optimizer: Optimizer,
  fixed: FixedBatch,
  options: PpoEpochsOptions,
): StepTotals {
  if (!Number.isInteger(options.epochs) || options.epochs < 1) {
    throw new LabError('BAD_ARGUMENT', `ppo_epochs: expected a positive integer, got ${options.epochs}`, {
      details: { field: 'ppo_epochs', value: options.epochs },
    });
  }
  const { batch } = fixed;
  const cols = batch.shape.cols;
  const o = { ...VANILLA_DEFAULTS, ...options.loss };
  const p = resolveClip(o);
  const region: ClipRegion = { low: p.low, high: p.high, c: p.c };
  const parts = miniBatchRanges(batch.shape.rows, options.miniBatches).map(([from, to]) => {
    const slice = <T extends Float32Array | Float64Array>(a: T) => a.subarray(from * cols, to * cols) as T;
    return {
      batch: batchRows(batch, from, to),
      mask: slice(fixed.mask),
      adv: slice(fixed.advantages),
      old: slice(fixed.oldLogProb),
      ref: options.klLoss ? slice(options.klLoss.refLogProb) : null,
    };
  });
  const totals: StepTotals = {
    steps: 0,
    pgClipfrac: 0,
    pgClipfracLower: 0,
    ppoKl: 0,
    klLoss: 0,
    clipped: 0,
    movedFurther: 0,
  };
  for (let e = 1; e <= options.epochs; e++) {
    for (const part of parts) {
      let hasTokens = false;
      for (let i = 0; i < part.mask.length && !hasTokens; i++) hasTokens = part.mask[i] !== 0;
      if (!hasTokens) continue; // verl would divide by zero; an empty mini-batch gives no step
      const before = model.logProbAt(part.batch);
      const res = policyLossVanillaGrad(
        { oldLogProb: part.old, logProb: before, advantages: part.adv, responseMask: part.mask },
        part.batch.shape,
        options.loss,
      );
      const grad = res.grad;
      if (options.klLoss && part.ref) {
        const kl = klLossGrad(
          { logProb: before, refLogProb: part.ref, mask: part.mask },
          part.batch.shape,
          options.klLoss.type,
          o.lossAggMode,
          o.agg,
        );
        for (let i = 0; i < grad.length; i++)
          grad[i] = (grad[i] as number) + options.klLoss.coef * (kl.grad[i] as number);
        totals.klLoss += kl.loss;
      }
      optimizer.step(model.params, model.backward(part.batch, grad));
      const after = model.logProbAt(part.batch);
      const moves = clippedMovedFurther(
        part.old,
        before,
        after,
        part.adv,
        part.mask,
        part.batch.shape,
        region,
      );
      totals.steps++;
      totals.pgClipfrac += res.metrics.pg_clipfrac;
      totals.pgClipfracLower += res.metrics.pg_clipfrac_lower;
      totals.ppoKl += res.metrics.ppo_kl;
      totals.clipped += moves.clipped;
      totals.movedFurther += moves.movedFurther;
    }
    options.onEpoch?.(e, totals);
  }
  return totals;
}

/** How far the policy has moved from pi_old on the fixed batch, measured exactly (one sweep row). */
export interface DriftMeasures {
  /** Exact KL(pi_old || pi_now) over the vocabulary, mean over the batch's mask-1 positions. */
  kl_true_mean: number;
  /** Its maximum over those positions. */
  kl_true_max: number;
  ratio_max: number;
  ratio_p99: number;
  /** Fraction of mask-1 tokens with ratio outside `band`. */
  frac_outside_clip: number;
  /** verl's metrics of the vanilla loss evaluated at the current policy on the whole batch. */
  pg_clipfrac: number;
  pg_clipfrac_lower: number;
  /** k1 estimate `masked_mean(old − lp)`: the sample estimate of kl_true_mean. */
  ppo_kl: number;
  /** `||θ_now − θ_old||₂`. */
  update_norm: number;
}

/**
 * {@link DriftMeasures} of `model` now against pi_old: `oldRows` is the `[R,V]` table of pi_old
 * (from `model.logProbRows(batch)` before the update, same `rowOf`), `oldParams` its parameters,
 * `band` the clip band the ratios are compared with, `loss` the options verl's metrics use.
 */
export function measureDrift(
  model: PolicyModel,
  fixed: FixedBatch,
  oldRows: Float64Array,
  oldParams: Float64Array,
  band: { low: number; high: number },
  loss: VanillaLossOptions,
): DriftMeasures {
  const { batch, mask, oldLogProb, advantages } = fixed;
  const now = model.logProbRows(batch);
  const kl = trueKlAtPositions(oldRows, now.table, model.vocab, now.rowOf, mask, batch.shape);
  const lp = model.logProbAt(batch);
  const ratios = ratioStats(oldLogProb, lp, mask, batch.shape, band);
  const metrics = policyLossVanilla(
    { oldLogProb, logProb: lp, advantages, responseMask: mask },
    batch.shape,
    loss,
  ).metrics;
  return {
    kl_true_mean: kl.mean,
    kl_true_max: kl.max,
    ratio_max: ratios.max,
    ratio_p99: ratios.p99,
    frac_outside_clip: ratios.fracOutside,
    pg_clipfrac: metrics.pg_clipfrac,
    pg_clipfrac_lower: metrics.pg_clipfrac_lower,
    ppo_kl: metrics.ppo_kl,
    update_norm: l2Distance(model.params, oldParams),
  };
}
