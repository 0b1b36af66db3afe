/**
 * OPO (On-Policy RL with Optimal reward baseline, https://arxiv.org/pdf/2505.23585), as verl's
 * `compute_opo_outcome_advantage` ("opo").
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
import type { AdvantageReturn } from './grpo.js';
import { broadcastRows, groupedRowScores, scanMask } from './rowScores.js';

/**
 * verl `compute_opo_outcome_advantage`: length-weighted group baseline
 * `b_g = Σ_i len_i·s_i / Σ_i len_i` with `len_i = Σ_t m[i,t]`, `a = s − b_g`; a group of one has
 * baseline 0 (a = s). `advantages = a·m` ([B,T] float32), `returns` the same object.
 * Errors: EMPTY_MASK when a group of ≥ 2 has no valid token at all (verl divides 0 by 0 → NaN),
 * plus the usual shape / NON_FINITE / BAD_MASK / label errors.
 */
export function opoAdvantage(inputs: OutcomeBatch, shape: Shape2, options: OutOption = {}): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  checkOutNotAliased(options.out, 'out', outcomeFields(inputs));
  const { scores, groups } = groupedRowScores(tokenLevelRewards, responseMask, index, shape);
  const layout = scanMask(responseMask, shape); // validates the 0/1 mask before its lengths are used
  const { rows } = shape;
  const weighted = new Float64Array(groups.groups);
  const totalLen = new Float64Array(groups.groups);
  for (let b = 0; b < rows; b++) {
    const len = layout.validTokens[b] as number;
    const g = groups.ids[b] as number;
    weighted[g] = (weighted[g] as number) + len * (scores[b] as number);
    totalLen[g] = (totalLen[g] as number) + len;
  }
  const perRow = new Float64Array(rows);
  for (let b = 0; b < rows; b++) {
    const g = groups.ids[b] as number;
    if ((groups.sizes[g] as number) === 1) {
      perRow[b] = scores[b] as number;
      continue;
    }
    if ((totalLen[g] as number) === 0) {
      throw new LabError(
        'EMPTY_MASK',
        `response_mask: group ${JSON.stringify(groups.labels[g] as GroupLabel)} (row ${b}) has no valid token, so its length-weighted baseline is 0/0`,
        { details: { field: 'response_mask', row: b } },
      );
    }
    perRow[b] = (scores[b] as number) - (weighted[g] as number) / (totalLen[g] as number);
  }
  const advantages = broadcastRows(perRow, responseMask, shape, layout, options.out ?? undefined);
  return { advantages, returns: advantages };
}
