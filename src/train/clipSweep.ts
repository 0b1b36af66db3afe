/**
 * The clip experiment's measurements of a PPO update: how far the policy moved from `pi_old` after
 * each epoch, exactly, and verl's logged metrics summed over the optimizer steps.
 *
 * The update itself is the lab's one loop ({@link ppoUpdate}: verl's `dp_actor.update_policy` with
 * mini-batches in order); {@link recordStepTotals} is its `onStep` hook here, summing verl's metrics
 * over every step (verl's `append_to_dict` + mean) and counting the clipped tokens each step moved
 * further out. The policy is behind {@link PolicyModel} (+ {@link PolicyRows} for the exact KL), so a
 * sequence model can be swept by the same code; only the tabular one is wired into the experiment.
 */
import {
  type ClipRegion,
  clippedMovedFurther,
  l2Distance,
  ratioStats,
  trueKlAtPositions,
} from '../core/clipMeasures.js';
import {
  policyLossVanilla,
  resolveClip,
  VANILLA_DEFAULTS,
  type VanillaLossOptions,
} from '../core/vanillaPolicyLoss.js';
import type { PolicyModel, PolicyRows } from './policyModel.js';
import type { PpoBatch, PpoStep } from './ppoUpdate.js';
import type { PackedBatch } from './tokenLearner.js';

/** The inputs of one PPO update that stay fixed over its epochs, old log-probs given. */
export type FixedBatch = PpoBatch<PackedBatch> & { oldLogProb: Float64Array };

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
 * Fresh {@link StepTotals} and the `onStep` hook of {@link ppoUpdate} that adds each step to them:
 * verl's metrics of the step, and of the tokens clipped before it (the clip region of `loss`) those
 * whose log-prob moved further out of the band after it (`model`'s log-probs re-evaluated).
 */
export function recordStepTotals<B>(
  model: PolicyModel<B>,
  loss: VanillaLossOptions,
): { totals: StepTotals; onStep: (step: PpoStep<B>) => void } {
  const p = resolveClip({ ...VANILLA_DEFAULTS, ...loss });
  const region: ClipRegion = { low: p.low, high: p.high, c: p.c };
  const totals: StepTotals = {
    steps: 0,
    pgClipfrac: 0,
    pgClipfracLower: 0,
    ppoKl: 0,
    klLoss: 0,
    clipped: 0,
    movedFurther: 0,
  };
  const onStep = (s: PpoStep<B>) => {
    const after = model.logProbAt(s.batch);
    const moves = clippedMovedFurther(s.oldLogProb, s.logProb, after, s.advantages, s.mask, s.shape, region);
    totals.klLoss += s.klLoss;
    totals.steps++;
    totals.pgClipfrac += s.metrics?.pg_clipfrac ?? Number.NaN;
    totals.pgClipfracLower += s.metrics?.pg_clipfrac_lower ?? Number.NaN;
    totals.ppoKl += s.metrics?.ppo_kl ?? Number.NaN;
    totals.clipped += moves.clipped;
    totals.movedFurther += moves.movedFurther;
  };
  return { totals, onStep };
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
  model: PolicyModel<PackedBatch> & PolicyRows<PackedBatch>,
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
