/**
 * GRPO pass@k advantages (https://arxiv.org/abs/2503.19595), as verl's
 * `compute_grpo_passk_outcome_advantage` ("grpo_passk").
 */

import {
  checkOutNotAliased,
  type GroupLabel,
  type OutcomeBatch,
  type OutOption,
  outcomeFields,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { groupMembers } from './groupwise.js';
import { type AdvantageReturn, degenerateStdError } from './grpo.js';
import { broadcastRows, groupedRowScores } from './rowScores.js';

export interface PasskOptions extends OutOption {
  /** 'unbiased': divide by torch.std(group) + eps (verl's config norm_adv_by_std_in_grpo=true); 'none': don't. */
  std?: 'unbiased' | 'none';
  /** Added to the group std (verl 1e-6). */
  epsilon?: number;
}

/** verl's defaults: std-normalised (`norm_adv_by_std_in_grpo=true`), epsilon 1e-6. */
export const PASSK_DEFAULTS: Readonly<Required<Omit<PasskOptions, 'out'>>> = Object.freeze({
  std: 'unbiased',
  epsilon: 1e-6,
});

/**
 * verl `compute_grpo_passk_outcome_advantage`: per group (≥ 2 members required), with the top two
 * scores `r1 ≥ r2`, only the arg-max row gets `r1 − r2` (divided by `std(group) + eps`, std unbiased,
 * when std is 'unbiased'); every other row gets 0. Ties at the top give 0.
 * verl reads the normalisation flag from `config.norm_adv_by_std_in_grpo`, NOT from its function
 * argument of the same name; here it is the `std` option.
 * Errors: SINGLETON_GROUP for a group of one (verl raises ValueError), BAD_ARGUMENT epsilon, input errors.
 */
export function grpoPasskAdvantage(
  inputs: OutcomeBatch,
  shape: Shape2,
  options: PasskOptions = {},
): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  checkOutNotAliased(options.out, 'out', outcomeFields(inputs));
  const { std, epsilon } = { ...PASSK_DEFAULTS, ...options };
  if (std !== 'unbiased' && std !== 'none') {
    throw new LabError('UNKNOWN_MODE', `std: grpo_passk supports 'unbiased' or 'none', got '${std}'`, {
      details: { field: 'std', value: std },
    });
  }
  if (!Number.isFinite(epsilon) || epsilon < 0) {
    throw new LabError('BAD_ARGUMENT', `epsilon: expected a finite number >= 0, got ${epsilon}`, {
      details: { field: 'epsilon', value: epsilon },
    });
  }
  const { scores, groups } = groupedRowScores(tokenLevelRewards, responseMask, index, shape);
  const members = groupMembers(groups);
  const perRow = new Float64Array(shape.rows);
  members.forEach((rows, g) => {
    if (rows.length < 2) {
      throw new LabError(
        'SINGLETON_GROUP',
        `index: pass@k needs at least 2 samples per group; group ${JSON.stringify(groups.labels[g] as GroupLabel)} (row ${rows[0]}) has 1`,
        { details: { field: 'index', row: rows[0] } },
      );
    }
    let best = rows[0] as number;
    for (const r of rows) if ((scores[r] as number) > (scores[best] as number)) best = r;
    let second = Number.NEGATIVE_INFINITY;
    for (const r of rows) if (r !== best && (scores[r] as number) > second) second = scores[r] as number;
    const gap = (scores[best] as number) - second;
    if (gap === 0) return;
    if (std === 'none') {
      perRow[best] = gap;
      return;
    }
    let sum = 0;
    for (const r of rows) sum += scores[r] as number;
    const mean = sum / rows.length;
    let ss = 0;
    for (const r of rows) ss += ((scores[r] as number) - mean) ** 2;
    if (!Number.isFinite(ss)) {
      throw new LabError(
        'NON_FINITE',
        `scores: group ${JSON.stringify(groups.labels[g] as GroupLabel)} is too large for float64 statistics (its squared deviations overflow)`,
        { details: { field: 'scores', label: groups.labels[g] } },
      );
    }
    perRow[best] = gap / (Math.sqrt(ss / (rows.length - 1)) + epsilon);
    if (!Number.isFinite(perRow[best] as number)) {
      throw degenerateStdError(perRow[best] as number, groups.labels[g] as GroupLabel, best);
    }
  });
  const advantages = broadcastRows(perRow, responseMask, shape, undefined, options.out ?? undefined);
  return { advantages, returns: advantages };
}
