/**
 * What a token-level run does with a trajectory that hit the token budget before submitting (the
 * `truncation` experiment's arms; `mask` and `aggregation` use `zero_score`), and DAPO's soft overlong
 * penalty. `shapeBatch` applies a policy to a sampled batch: which rows are trained on, in which
 * group, with which score.
 */
import { LabError } from '../core/errors.js';
import type { ArmEpisode } from './armEpisode.js';

/**
 * What happens to a trajectory that hit the token budget before submitting:
 * - `zero_score`: scored 0 like any failure and trained on (the naive default);
 * - `drop`: removed from the batch before advantages (its group is smaller);
 * - `mask`: scored 0 in its group's statistics but its loss mask is all 0 (TRL's
 *   `mask_truncated_completions=True`);
 * - `soft_penalty`: DAPO's overlong reward shaping added to every trajectory's score:
 *   0 for L <= Lmax − Lcache, (Lmax − Lcache − L)/Lcache inside the buffer, −1 beyond
 *   (Lmax = budget, Lcache = overlong_buffer); a truncated trajectory (L = Lmax) gets 0 − 1.
 */
export type TruncationPolicy = 'zero_score' | 'drop' | 'mask' | 'soft_penalty';

export const TRUNCATION_POLICIES: readonly TruncationPolicy[] = [
  'zero_score',
  'drop',
  'mask',
  'soft_penalty',
];

/**
 * DAPO's soft overlong penalty (verl `DAPORewardManager` with `overlong_buffer.penalty_factor = 1`) for
 * a transcript of `length` tokens under budget `maxLength` with ramp `buffer` (L_cache):
 * 0 for `L ≤ max − buffer`, `(max − buffer − L)/buffer` up to `max` (reaching −1 there), −1 beyond.
 * Errors: BAD_ARGUMENT for `buffer` not > 0 (the ramp would divide by 0).
 */
export function overlongPenalty(length: number, maxLength: number, buffer: number): number {
  if (!(buffer > 0)) {
    throw new LabError('BAD_ARGUMENT', `overlong_buffer: expected a number > 0, got ${buffer}`, {
      details: { field: 'overlong_buffer', value: buffer },
    });
  }
  const start = maxLength - buffer;
  if (length <= start) return 0;
  if (length <= maxLength) return (start - length) / buffer;
  return -1;
}

/** A batch after the truncation policy: the rows trained on, their group and their score. */
export interface ShapedBatch {
  rows: ArmEpisode[];
  /** Group (task) of each row: `floor(i / groupSize)` of its index in the sampled batch. */
  group: number[];
  scores: number[];
  /** Rows removed by `drop` (0 for the other policies). */
  dropped: number;
}

/**
 * Applies `policy` to `all` (K groups of `groupSize` consecutive samples): `drop` removes truncated
 * rows (their group gets smaller), `soft_penalty` adds {@link overlongPenalty} to every score,
 * `zero_score` and `mask` keep rows and scores (`mask` zeroes the loss mask later, see
 * {@link maskTruncatedRows}). `overlongBuffer` is needed only by `soft_penalty`.
 */
export function shapeBatch(
  all: readonly ArmEpisode[],
  policy: TruncationPolicy,
  groupSize: number,
  budget: number,
  overlongBuffer: number | undefined,
): ShapedBatch {
  if (!TRUNCATION_POLICIES.includes(policy)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `truncation policy '${policy}' is not one of ${TRUNCATION_POLICIES.join(', ')}`,
      {
        details: { field: 'truncation', value: policy },
      },
    );
  }
  const kept = all.map((e, i) => ({ e, i })).filter(({ e }) => policy !== 'drop' || e.status !== 'truncated');
  const rows = kept.map(({ e }) => e);
  const group = kept.map(({ i }) => Math.floor(i / groupSize));
  let scores = rows.map((e) => e.score);
  if (policy === 'soft_penalty') {
    if (overlongBuffer === undefined) {
      throw new LabError(
        'BAD_OPTION_VALUE',
        "truncation policy 'soft_penalty' needs the overlong_buffer option",
        {
          details: { field: 'overlong_buffer' },
        },
      );
    }
    scores = rows.map((e) => e.score + overlongPenalty(e.tokens.length, budget, overlongBuffer));
  }
  return { rows, group, scores, dropped: all.length - rows.length };
}

/**
 * The `mask` policy (TRL `mask_truncated_completions=True`): zeroes the loss mask ([rows, cols],
 * row-major) of every truncated row; returns how many rows it masked.
 */
export function maskTruncatedRows(rows: readonly ArmEpisode[], mask: Float32Array, cols: number): number {
  let masked = 0;
  rows.forEach((e, b) => {
    if (e.status !== 'truncated') return;
    mask.fill(0, b * cols, (b + 1) * cols);
    masked++;
  });
  return masked;
}
