/**
 * GPG (Group Policy Gradient), as verl's `compute_gpg_outcome_advantage` ("gpg").
 */

import {
  checkOutNotAliased,
  type OutcomeBatch,
  type OutOption,
  outcomeFields,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { type AdvantageReturn, groupMoments } from './grpo.js';
import { broadcastRows, groupedRowScores } from './rowScores.js';

export interface GpgOptions extends OutOption {
  /** Divisor of the centred score (verl `f_norm`, default 1). */
  fNorm?: number;
}

/** verl's default: `f_norm = 1`. */
export const GPG_DEFAULTS: Readonly<Required<Omit<GpgOptions, 'out'>>> = Object.freeze({ fNorm: 1 });

/**
 * verl `compute_gpg_outcome_advantage`: `α = B / max(#{b : s_b ≠ 0}, 1)` over the whole batch (verl
 * overwrites its `alpha` argument with this), `a = α·(s − mean_g)/f_norm`, no std; a group of one has
 * mean 0. `advantages = a·m` ([B,T] float32), `returns` the same object.
 * Errors: BAD_ARGUMENT for a zero or non-finite f_norm, plus the usual input errors.
 */
export function gpgAdvantage(inputs: OutcomeBatch, shape: Shape2, options: GpgOptions = {}): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  checkOutNotAliased(options.out, 'out', outcomeFields(inputs));
  const { fNorm } = { ...GPG_DEFAULTS, ...options };
  if (!Number.isFinite(fNorm) || fNorm === 0) {
    throw new LabError('BAD_ARGUMENT', `f_norm: expected a finite non-zero number, got ${fNorm}`, {
      details: { field: 'f_norm', value: fNorm },
    });
  }
  const { scores, groups } = groupedRowScores(tokenLevelRewards, responseMask, index, shape);
  const { count, mean } = groupMoments(scores, groups);
  let nonZero = 0;
  for (const s of scores) if (s !== 0) nonZero++;
  const alpha = shape.rows / Math.max(nonZero, 1);
  const perRow = new Float64Array(shape.rows);
  for (let b = 0; b < shape.rows; b++) {
    const g = groups.ids[b] as number;
    const m = (count[g] as number) === 1 ? 0 : (mean[g] as number);
    perRow[b] = (alpha * ((scores[b] as number) - m)) / fNorm;
  }
  const advantages = broadcastRows(perRow, responseMask, shape, undefined, options.out ?? undefined);
  return { advantages, returns: advantages };
}
