/**
 * The rows of a `clip` record's tables (`sweep`, `behaviour_shift`, `reference_kl`), built from the
 * measures of the sweep arms and the reference runs.
 */
import { ratioStats, trueKlAtPositions } from '../../core/clipMeasures.js';
import { VOCAB_SIZE } from '../../envs/tokenArithmetic.js';
import {
  bandOf,
  type CheckpointMeasures,
  NEVER_BINDS,
  type ReferenceRun,
  type SweepArm,
  type SweepBatch,
} from '../../train/clipLab.js';
import type { JsonValue } from '../types.js';
import type { ClipConfig } from './clipOptions.js';
import { type HeadlineSlice, mean, round6 } from './clipRecord.js';

/** The measures each sweep row reports, averaged over the fixed batches. */
export const SWEEP_MEASURES = [
  'kl_true_mean',
  'kl_true_max',
  'ratio_max',
  'ratio_p99',
  'frac_outside_clip',
  'pg_clipfrac',
  'pg_clipfrac_lower',
  'ppo_kl',
  'ppo_kl_logged',
  'pg_clipfrac_logged',
  'update_norm',
] as const;

/** The fields of an arm that fix the headline slice, as its sweep rows spell them. */
export function sliceOf(arm: SweepArm): HeadlineSlice {
  return { optimizer: arm.optimizer, lr: arm.lr, mini_batches: arm.miniBatches, dual_clip: arm.dualClip };
}

/** One `tables.sweep` row: the arm's grid keys, then each measure's mean over the fixed batches. */
export function sweepRow(
  arm: SweepArm,
  cfg: ClipConfig,
  epochs: number,
  perBatch: CheckpointMeasures[],
): Record<string, JsonValue> {
  const band = bandOf(arm.clip);
  const clipped = perBatch.reduce((s, m) => s + m.clipped_token_steps, 0);
  const further = perBatch.reduce((s, m) => s + m.moved_further_token_steps, 0);
  const row: Record<string, JsonValue> = {
    clip: arm.clip.name,
    clip_ratio_low: arm.clip.low >= NEVER_BINDS ? null : arm.clip.low,
    clip_ratio_high: arm.clip.high >= NEVER_BINDS ? null : arm.clip.high,
    dual_clip: arm.dualClip,
    clip_ratio_c: arm.dualClip ? cfg.clip_ratio_c : null,
    mini_batches: arm.miniBatches,
    optimizer: arm.optimizer,
    lr: arm.lr,
    epochs,
    band_low: round6(1 - band.low),
    band_high: round6(1 + band.high),
  };
  for (const m of SWEEP_MEASURES) row[m] = round6(mean(perBatch.map((x) => x[m])));
  // Of the tokens clipped before a step (token-steps pooled over the batches), the fraction that the
  // step moved further out; null when nothing was clipped (no clip, or the first step).
  row.clipped_moved_further = clipped > 0 ? round6(further / clipped) : null;
  row.clipped_token_steps = clipped;
  row.ppo_kl_minus_true = round6((row.ppo_kl as number) - (row.kl_true_mean as number));
  return row;
}

/** Where a behaviour-shift batch came from: pi_old itself, pi_old at a temperature, or an older policy. */
export interface BehaviourSource {
  name: 'on_policy' | 'temperature' | 'stale';
  /** Sampling temperature (1 unless `temperature`). */
  temperature: number;
  /** Updates between the sampling policy and pi_old (0 unless `stale`). */
  lag: number;
  batches: SweepBatch[];
}

/** One `tables.behaviour_shift` row: the update measured against pi_old and against the behaviour policy. */
export function behaviourRow(
  source: BehaviourSource,
  clip: string,
  epochs: number,
  batches: readonly SweepBatch[],
  perBatch: readonly CheckpointMeasures[],
): Record<string, JsonValue> {
  const band = { low: 0.2, high: 0.2 };
  const at = (b: number) => batches[b] as SweepBatch;
  const each = (f: (batch: SweepBatch, m: CheckpointMeasures) => number) =>
    round6(mean(perBatch.map((m, b) => f(at(b), m))));
  const klFrom = (table: Float64Array, other: Float64Array, f: SweepBatch['fixed']) =>
    trueKlAtPositions(table, other, VOCAB_SIZE, f.batch.contexts, f.mask, f.batch.shape).mean;
  return {
    source: source.name,
    temperature: source.temperature,
    lag: source.lag,
    clip,
    epochs,
    kl_behav_old: each((s) => klFrom(s.behaviourTable, s.oldTable, s.fixed)),
    kl_behav_new: each((s, m) => klFrom(s.behaviourTable, m.table, s.fixed)),
    kl_old_new: each((_, m) => m.kl_true_mean),
    behav_frac_outside_before: each(
      (s) =>
        ratioStats(s.behaviourLogProb, s.fixed.oldLogProb, s.fixed.mask, s.fixed.batch.shape, band)
          .fracOutside,
    ),
    behav_frac_outside_after: each(
      (s, m) =>
        ratioStats(s.behaviourLogProb, m.logProb, s.fixed.mask, s.fixed.batch.shape, band).fracOutside,
    ),
    frac_outside_clip: each((_, m) => m.frac_outside_clip),
    is_ratio_max: each(
      (s) => ratioStats(s.behaviourLogProb, s.fixed.oldLogProb, s.fixed.mask, s.fixed.batch.shape, band).max,
    ),
    behav_ratio_max_after: each(
      (s, m) => ratioStats(s.behaviourLogProb, m.logProb, s.fixed.mask, s.fixed.batch.shape, band).max,
    ),
    pg_clipfrac: each((_, m) => m.pg_clipfrac),
    batch_success: each((s) => s.success),
  };
}

export function referenceArmName(coef: number): string {
  return coef === 0 ? 'no_kl_loss' : `kl_coef_${coef}`;
}

/** `tables.reference_kl`: per arm, every `ref_updates/10`-th update and the last, with final held-out success. */
export function referenceRows(runs: readonly ReferenceRun[], updates: number): Record<string, JsonValue>[] {
  const every = Math.max(1, Math.round(updates / 10));
  const rows: Record<string, JsonValue>[] = [];
  for (const r of runs) {
    r.steps.forEach((s, i) => {
      if ((i + 1) % every !== 0 && i !== r.steps.length - 1) return;
      rows.push({
        arm: referenceArmName(r.coef),
        kl_loss_coef: r.coef,
        update: i + 1,
        kl_to_ref: round6(s.klToRef),
        kl_to_old: round6(s.klToOld),
        kl_loss: round6(s.klLoss),
        train_success: round6(s.success),
        final_eval_success: round6(r.evalSuccess),
      });
    });
  }
  return rows;
}
