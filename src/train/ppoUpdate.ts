/**
 * The lab's one PPO update: verl's actor update (`dp_actor.update_policy`) on one fixed batch, for
 * any {@link PolicyModel} (the tabular context policy, the GRU).
 *
 * The batch is split into `miniBatches` contiguous row ranges (verl splits in order when `shuffle`
 * is off; `ppo_mini_batch_size` = rows / miniBatches), and for each of `epochs` epochs each
 * mini-batch gives one optimizer step, with `old_log_prob` and the advantages fixed at rollout:
 *
 *   1. forward: `log_prob [B,T]` of the current parameters (`model.logProbAt`);
 *   2. the vanilla clipped loss and `∂loss/∂log_prob` (core `policyLossVanillaGrad`, aggregated by
 *      `loss_agg_mode` over the mini-batch: its own denominator), then, in this order, added into
 *      `∂loss/∂log_prob`: verl's KL loss `kl_loss_coef · ∂agg(kl)/∂log_prob` (`use_kl_loss`, core
 *      `klLossGrad`) and a caller's fixed extra term (`extraGradLogProb`, e.g. an SFT NLL term);
 *   3. backward to the parameters (`model.backward`), with verl's entropy bonus
 *      `−entropy_coeff · agg(H)` when `entropyCoef > 0`; a KL term with its own token set
 *      ({@link KlLossSpec.own}) is backpropagated on its own and added to the parameter gradient;
 *   4. the model's finiteness check of the gradient, global-norm clipping (verl `grad_clip`) when
 *      `gradClip` is given, `optimizer.step`, the finiteness check of the parameters.
 *
 * A mini-batch without mask tokens gives no step (verl would divide by zero). Old log-probs default
 * to the log-probs before any step (epoch 1's forward pass with one mini-batch: the parameters have
 * not moved since the batch was sampled, so this equals verl's separate `compute_log_prob` pass).
 * Deterministic: no random draws; steps in epoch-major, mini-batch order. Every current learner's
 * order of floating-point operations is one setting of these options (see the callers).
 */
import {
  type AggDenominator,
  type AggOptions,
  aggLossDenominator,
  LOSS_AGG_MODES,
  type LossAggMode,
} from '../core/aggLoss.js';
import type { FloatArray, Shape2 } from '../core/batch.js';
import { LabError } from '../core/errors.js';
import type { KlPenaltyName } from '../core/kl.js';
import { klLossGrad, klPenaltyDerivative } from '../core/klLoss.js';
import type { PolicyLossMetrics } from '../core/policyLossInputs.js';
import {
  policyLossVanillaGrad,
  VANILLA_DEFAULTS,
  type VanillaLossOptions,
} from '../core/vanillaPolicyLoss.js';
import { clipGradNorm } from '../policy/gradClip.js';
import type { Optimizer } from './adam.js';
import type { PolicyModel } from './policyModel.js';

/** The inputs of one PPO update that stay fixed over its epochs (`[B,T]` in `model.shapeOf(batch)`). */
export interface PpoBatch<B> {
  batch: B;
  /** Response mask `[B,T]` (0/1). */
  mask: Float32Array;
  advantages: Float32Array;
  /**
   * `old_log_prob [B,T]`: log-probs of the sampled tokens under pi_old (a recomputation, or the
   * rollout engine's own in verl's bypass mode). Default: the model's log-probs before any step.
   */
  oldLogProb?: Float64Array | undefined;
}

/** verl's use_kl_loss: `kl_loss_coef · kl_loss` against a fixed reference policy. */
export interface KlLossSpec {
  coef: number;
  type: KlPenaltyName;
  /** `ref_log_prob [B,T]` of the sampled tokens under the reference policy. */
  refLogProb: Float64Array;
  /**
   * Default (verl): the KL term over the response mask, aggregated like the policy loss
   * (`loss_agg_mode`, `agg`), added to `∂loss/∂log_prob` before the one backward pass.
   * `own`: a token-mean over these tokens only (`[B,T]` 0/1) with this denominator,
   * `∂/∂log_prob = coef / tokens · ∂kl/∂log_prob`, backpropagated on its own and added to the
   * parameter gradient (the filter experiment's KL on chosen rows; its order of operations).
   */
  own?: { mask: Float64Array; tokens: number } | undefined;
}

export interface PpoUpdateOptions<B = unknown> {
  /** verl `ppo_epochs` (integer >= 1). */
  epochs: number;
  /** Mini-batches per epoch, contiguous row ranges (verl: batch / `ppo_mini_batch_size`). Default 1. */
  miniBatches?: number;
  /** The policy loss (core `policyLossVanillaGrad` options; verl's defaults). */
  loss?: VanillaLossOptions;
  /** `false`: no policy-gradient term (only the KL term steps). Default true. */
  policyGradient?: boolean;
  klLoss?: KlLossSpec | null | undefined;
  /** verl `entropy_coeff` (>= 0; default 0: no entropy term). */
  entropyCoef?: number;
  /** A fixed `∂loss/∂log_prob [B,T]` added at every step (e.g. a supervised NLL term). */
  extraGradLogProb?: Float64Array | null | undefined;
  /**
   * verl `actor.grad_clip` (verl's default 1.0): global L2 norm bound of the parameter gradient.
   * Default here: no clipping (the tabular learners never clipped).
   */
  gradClip?: number;
  /** Number of the first optimizer step, for error messages (the caller's running count). Default 0. */
  firstStep?: number;
  /** Called after each optimizer step (measure the policy there). */
  onStep?: (step: PpoStep<B>) => void;
  /** Called after each epoch (1-based), after its steps. */
  onEpoch?: (epoch: number) => void;
}

/** What one optimizer step measured (before it, on its mini-batch). */
export interface PpoStepStats {
  /** 1-based epoch and 0-based mini-batch of the step. */
  epoch: number;
  miniBatch: number;
  /** The policy loss and verl's metrics (NaN / null without the policy-gradient term). */
  loss: number;
  metrics: PolicyLossMetrics | null;
  /** verl's `kl_loss` metric (before the coefficient; 0 without the KL loss). */
  klLoss: number;
  /** Global gradient norm before clipping (NaN without `gradClip`). */
  gradNorm: number;
}

/** A step as {@link PpoUpdateOptions.onStep} sees it: its stats and its mini-batch's inputs. */
export interface PpoStep<B> extends PpoStepStats {
  batch: B;
  shape: Shape2;
  mask: Float32Array;
  advantages: Float32Array;
  oldLogProb: Float64Array;
  /** `log_prob` of the mini-batch before the step. */
  logProb: Float64Array;
}

export interface PpoUpdateStats {
  /** Every optimizer step in order (one per epoch with one mini-batch). */
  steps: PpoStepStats[];
  /** The aggregation denominator of the whole batch (`loss_agg_mode`, `agg`). */
  denominator: AggDenominator;
  /** The old log-probs `[B,T]` the update used. */
  oldLogProb: Float64Array;
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

function checkLength(field: string, a: FloatArray | null | undefined, n: number, shape: Shape2): void {
  if (a && a.length !== n) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `${field}: expected ${n} values [${shape.rows}, ${shape.cols}], got ${a.length}`,
      { details: { field, expected: n, actual: a.length } },
    );
  }
}

/** Validates the options once, at the entry; returns the loss options with verl's defaults. */
function checkOptions<B>(o: PpoUpdateOptions<B>, n: number, shape: Shape2, fixed: PpoBatch<B>) {
  if (!Number.isInteger(o.epochs) || o.epochs < 1) {
    throw new LabError('BAD_ARGUMENT', `ppo_epochs: expected a positive integer, got ${o.epochs}`, {
      details: { field: 'ppo_epochs', value: o.epochs },
    });
  }
  const loss = { ...VANILLA_DEFAULTS, ...o.loss };
  const mode = o.loss?.lossAggMode ?? VANILLA_DEFAULTS.lossAggMode;
  if (!LOSS_AGG_MODES.includes(mode)) {
    throw new LabError('UNKNOWN_MODE', `lossAggMode '${mode}' is not one of ${LOSS_AGG_MODES.join(', ')}`, {
      details: { field: 'lossAggMode', value: mode },
    });
  }
  const coef = o.entropyCoef ?? 0;
  if (!(coef >= 0 && Number.isFinite(coef))) {
    throw new LabError('BAD_ARGUMENT', `entropy_coeff: expected a finite number >= 0, got ${coef}`, {
      details: { field: 'entropy_coeff', value: coef },
    });
  }
  if (o.gradClip !== undefined && !(o.gradClip > 0)) {
    throw new LabError('BAD_ARGUMENT', `grad_clip: expected a number > 0, got ${o.gradClip}`, {
      details: { field: 'grad_clip', value: o.gradClip },
    });
  }
  checkLength('mask', fixed.mask, n, shape);
  checkLength('advantages', fixed.advantages, n, shape);
  checkLength('oldLogProb', fixed.oldLogProb, n, shape);
  checkLength('refLogProb', o.klLoss?.refLogProb, n, shape);
  checkLength('klLoss.own.mask', o.klLoss?.own?.mask, n, shape);
  checkLength('extraGradLogProb', o.extraGradLogProb, n, shape);
  checkLength('rolloutIsWeights', o.loss?.rolloutIsWeights, n, shape);
  return { loss, mode };
}

/**
 * `epochs` × `miniBatches` optimizer steps of verl's actor update of `model` on one fixed batch (see
 * the file header). Shapes: every `[B,T]` tensor in `model.shapeOf(fixed.batch)`. Errors (once, at
 * the entry): BAD_ARGUMENT (epochs, mini-batches, entropy coefficient, grad clip), UNKNOWN_MODE
 * (`loss_agg_mode`), SHAPE_MISMATCH; during the steps the kernels' and the model's (NON_FINITE).
 */
export function ppoUpdate<B>(
  model: PolicyModel<B>,
  optimizer: Optimizer,
  fixed: PpoBatch<B>,
  options: PpoUpdateOptions<B>,
): PpoUpdateStats {
  const shape = model.shapeOf(fixed.batch);
  const { cols } = shape;
  const n = shape.rows * cols;
  const { loss, mode } = checkOptions(options, n, shape, fixed);
  const ranges = miniBatchRanges(shape.rows, options.miniBatches ?? 1);
  const denominator = aggLossDenominator(fixed.mask, shape, mode, loss.agg ?? {});
  const withPg = options.policyGradient ?? true;
  const entropyCoef = options.entropyCoef ?? 0;
  const kl = options.klLoss ?? null;
  const extra = options.extraGradLogProb ?? null;
  // old log-probs before any step: epoch 1's forward pass when it is the whole batch
  const old = fixed.oldLogProb
    ? Float64Array.from(fixed.oldLogProb)
    : ranges.length === 1
      ? null
      : model.logProbAt(fixed.batch);
  let oldLogProb = old ?? new Float64Array(n);
  const parts = ranges.map(([from, to]): MiniBatch<B> => {
    const slice = <T extends FloatArray>(a: T) => a.subarray(from * cols, to * cols) as T;
    const isWeights = options.loss?.rolloutIsWeights;
    return {
      batch: ranges.length === 1 ? fixed.batch : model.rows(fixed.batch, from, to),
      shape: { rows: to - from, cols },
      mask: slice(fixed.mask),
      adv: slice(fixed.advantages),
      ref: kl ? slice(kl.refLogProb) : null,
      klMask: kl?.own ? slice(kl.own.mask) : null,
      extra: extra ? slice(extra) : null,
      loss: isWeights ? { ...options.loss, rolloutIsWeights: slice(isWeights) } : options.loss,
      from,
      to,
    };
  });
  const terms: StepTerms = { withPg, kl, entropyCoef, mode, agg: loss.agg };
  const steps: PpoStepStats[] = [];
  let step = options.firstStep ?? 0;
  for (let e = 1; e <= options.epochs; e++) {
    for (let k = 0; k < parts.length; k++) {
      const part = parts[k] as (typeof parts)[number];
      let hasTokens = false;
      for (let i = 0; i < part.mask.length && !hasTokens; i++) hasTokens = part.mask[i] !== 0;
      if (!hasTokens) continue; // verl would divide by zero; an empty mini-batch gives no step
      const logProb = model.logProbAt(part.batch);
      if (!old && e === 1) oldLogProb = logProb.slice();
      const partOld = oldLogProb.subarray(part.from * cols, part.to * cols);
      const stats: PpoStepStats = {
        epoch: e,
        miniBatch: k,
        loss: Number.NaN,
        metrics: null,
        klLoss: 0,
        gradNorm: Number.NaN,
      };
      const grads = parameterGradient(model, part, logProb, partOld, terms, stats);
      model.checkFinite?.(grads, 'grads', step);
      if (options.gradClip !== undefined) stats.gradNorm = clipGradNorm(grads, options.gradClip, step);
      optimizer.step(model.params, grads);
      model.checkFinite?.(model.params, 'params', step);
      step++;
      steps.push(stats);
      options.onStep?.({
        ...stats,
        batch: part.batch,
        shape: part.shape,
        mask: part.mask,
        advantages: part.adv,
        oldLogProb: partOld,
        logProb,
      });
    }
    options.onEpoch?.(e);
  }
  return { steps, denominator, oldLogProb };
}

/** One mini-batch of the update: views of the batch's rows `[from, to)` and of their tensors. */
interface MiniBatch<B> {
  batch: B;
  shape: Shape2;
  mask: Float32Array;
  adv: Float32Array;
  ref: Float64Array | null;
  klMask: Float64Array | null;
  extra: Float64Array | null;
  loss: VanillaLossOptions | undefined;
  from: number;
  to: number;
}

/** The loss terms of every step (from the options, resolved once). */
interface StepTerms {
  withPg: boolean;
  kl: KlLossSpec | null;
  entropyCoef: number;
  mode: LossAggMode;
  agg: AggOptions | undefined;
}

/**
 * `∂loss/∂params` of one step (steps 2–3 of the file header, in that order): the policy loss's
 * `∂loss/∂log_prob` (its loss and metrics into `stats`), plus the verl KL loss and the extra term,
 * backpropagated once with the entropy bonus; then the own-token KL term's own backward, added.
 */
function parameterGradient<B>(
  model: PolicyModel<B>,
  part: MiniBatch<B>,
  logProb: Float64Array,
  partOld: Float64Array,
  terms: StepTerms,
  stats: PpoStepStats,
): Float64Array {
  const { withPg, kl, entropyCoef, mode } = terms;
  let gradLogProb: Float64Array | null = null;
  if (withPg) {
    const res = policyLossVanillaGrad(
      { oldLogProb: partOld, logProb, advantages: part.adv, responseMask: part.mask },
      part.shape,
      part.loss,
    );
    stats.loss = res.loss;
    stats.metrics = res.metrics;
    gradLogProb = res.grad;
  }
  if (kl && part.ref && !kl.own) {
    const k1 = klLossGrad(
      { logProb, refLogProb: part.ref, mask: part.mask },
      part.shape,
      kl.type,
      mode,
      terms.agg,
    );
    gradLogProb ??= new Float64Array(logProb.length);
    for (let i = 0; i < gradLogProb.length; i++)
      gradLogProb[i] = (gradLogProb[i] as number) + kl.coef * (k1.grad[i] as number);
    stats.klLoss = k1.loss;
  }
  if (part.extra) {
    gradLogProb ??= new Float64Array(logProb.length);
    for (let i = 0; i < gradLogProb.length; i++)
      gradLogProb[i] = (gradLogProb[i] as number) + (part.extra[i] as number);
  }
  const entropy = entropyCoef > 0 ? { coef: entropyCoef, mode, mask: part.mask } : undefined;
  let grads = gradLogProb
    ? model.backward(part.batch, gradLogProb, entropy)
    : new Float64Array(model.params.length);
  if (kl?.own && part.ref && part.klMask) {
    const g = new Float64Array(logProb.length);
    for (let i = 0; i < g.length; i++) {
      if (!part.klMask[i]) continue;
      const dk = klPenaltyDerivative((logProb[i] as number) - (part.ref[i] as number), kl.type);
      g[i] = (kl.coef / kl.own.tokens) * dk;
    }
    grads = grads.slice(); // the next backward may overwrite the model's buffer
    const chained = model.backward(part.batch, g);
    for (let j = 0; j < grads.length; j++) grads[j] = (grads[j] as number) + (chained[j] as number);
  }
  return grads;
}
