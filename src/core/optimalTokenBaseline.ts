/**
 * Optimal token baselines, as verl's `compute_optimal_token_baseline_advantage`
 * ("optimal_token_baseline") and `compute_multi_turn_optimal_token_baseline_advantage`
 * ("tir_optimal_token_baseline"): a per-position baseline
 *   B_t = Σ_i G_t·W_t / (Σ_i W_t + eps)
 * over the members of a prompt group, with `G` the reward-to-go and `W` a cumulative path-variance proxy.
 */
import {
  checkFinite,
  checkLabels,
  checkMask,
  checkOutNotAliased,
  type FloatArray,
  type GroupLabels,
  type MaskArray,
  type OutcomeBatch,
  type OutReturnsOption,
  outputBuffer,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { factorizeLabels, groupMembers } from './groupwise.js';
import { checkMatrixLength, checkTokenBatch } from './rowScores.js';

/** The inputs of verl's optimal-token-baseline estimators: an {@link OutcomeBatch} plus two `[B,T]` arrays. */
export interface OptimalTokenBaselineInputs extends OutcomeBatch {
  /** `old_log_probs` `[B,T]`: log-probs of the sampled tokens under the rollout policy. */
  oldLogProbs: FloatArray;
  /** `sum_pi_squared` `[B,T]`: `Σ_v π(v)²` of each position's next-token distribution. */
  sumPiSquared: FloatArray;
}

export interface OptimalTokenBaselineOptions extends OutReturnsOption {
  /** Per-token rollout IS weights ([B,T]); W is then scaled by their square. Default none. */
  rolloutIsWeights?: FloatArray;
  /**
   * Zero the baseline of a group's unique longest member from position len_2nd on (the part no other
   * member reaches). verl's defaults: off for the plain estimator in the trainer, on for the TIR one.
   */
  zeroTail?: 'zero' | 'keep';
  /** Added to the denominator (verl 1e-8). */
  epsilon?: number;
}

/** verl's defaults of the plain estimator: no IS weights, tail kept, eps 1e-8. */
export const OPTIMAL_TOKEN_BASELINE_DEFAULTS: Readonly<
  Required<Omit<OptimalTokenBaselineOptions, 'rolloutIsWeights' | 'out' | 'outReturns'>>
> = Object.freeze({ zeroTail: 'keep', epsilon: 1e-8 });

/** verl's defaults of the multi-turn (TIR) estimator: as the plain one, but the tail is zeroed. */
export const MULTI_TURN_OPTIMAL_TOKEN_BASELINE_DEFAULTS: Readonly<
  Required<Omit<OptimalTokenBaselineOptions, 'rolloutIsWeights' | 'out' | 'outReturns'>>
> = Object.freeze({ zeroTail: 'zero', epsilon: 1e-8 });

export interface OptimalTokenBaselineResult {
  /** (G − B)·m, +0 under a 0 mask. */
  advantages: Float32Array;
  /** G, the reward-to-go of r·m (a separate array, not masked). */
  returns: Float32Array;
}

const f32 = Math.fround;

interface OtbInputs {
  G: Float32Array;
  W: Float32Array;
}

/**
 * Shared first steps: `G = reverse-cumsum_t(r·m)`, `w_t = 1 − 2·exp(old_log_probs) + Σπ²` (× IS²),
 * `W = cumsum_t(w·m)`. Element-wise float32 as verl; cumulative sums accumulated in float64 and stored
 * as float32 (torch's CPU cumsum accumulates float in double).
 */
function pathInputs(
  tokenLevelRewards: FloatArray,
  responseMask: MaskArray,
  oldLogProbs: FloatArray,
  sumPiSquared: FloatArray,
  shape: Shape2,
  isWeights: FloatArray | undefined,
  outReturns: Float32Array | null | undefined,
): OtbInputs {
  const { rows, cols } = shape;
  const G = outputBuffer(outReturns, rows * cols, `[${rows},${cols}]`, 'outReturns');
  const W = new Float32Array(rows * cols);
  for (let b = 0; b < rows; b++) {
    let acc = 0;
    for (let t = cols - 1; t >= 0; t--) {
      const i = b * cols + t;
      if (responseMask[i] === 1) acc += tokenLevelRewards[i] as number;
      G[i] = acc;
    }
    let wAcc = 0;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      if (responseMask[i] === 1) {
        const pi = f32(Math.exp(oldLogProbs[i] as number));
        let w = f32(f32(1 - f32(2 * pi)) + (sumPiSquared[i] as number));
        if (isWeights) {
          const r = isWeights[i] as number;
          w = f32(w * f32(r * r));
        }
        wAcc += w;
      }
      W[i] = wAcc;
      if (!Number.isFinite(W[i] as number)) {
        throw new LabError(
          'NON_FINITE',
          `old_log_probs: exp(old_log_probs) at row ${b}, token ${t} makes the path-variance sum non-finite`,
          { details: { field: 'old_log_probs', row: b, token: t } },
        );
      }
    }
  }
  return { G, W };
}

function validate(
  tokenLevelRewards: FloatArray,
  responseMask: MaskArray,
  index: GroupLabels,
  oldLogProbs: FloatArray,
  sumPiSquared: FloatArray,
  shape: Shape2,
  o: Required<Omit<OptimalTokenBaselineOptions, 'rolloutIsWeights' | 'out' | 'outReturns'>> &
    OptimalTokenBaselineOptions,
): void {
  const { epsilon, zeroTail } = o;
  if (!Number.isFinite(epsilon) || epsilon < 0) {
    throw new LabError('BAD_ARGUMENT', `epsilon: expected a finite number >= 0, got ${epsilon}`, {
      details: { field: 'epsilon', value: epsilon },
    });
  }
  if (zeroTail !== 'zero' && zeroTail !== 'keep') {
    throw new LabError('UNKNOWN_MODE', `zeroTail: expected 'zero' or 'keep', got '${zeroTail}'`, {
      details: { field: 'zeroTail', value: zeroTail },
    });
  }
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  checkMatrixLength(oldLogProbs, shape, 'old_log_probs');
  checkMatrixLength(sumPiSquared, shape, 'sum_pi_squared');
  if (o.rolloutIsWeights) checkMatrixLength(o.rolloutIsWeights, shape, 'rollout_is_weights');
  checkLabels(index, shape.rows);
  checkFinite(tokenLevelRewards, shape.cols, 'token_level_rewards');
  checkFinite(oldLogProbs, shape.cols, 'old_log_probs');
  checkFinite(sumPiSquared, shape.cols, 'sum_pi_squared');
  if (o.rolloutIsWeights) checkFinite(o.rolloutIsWeights, shape.cols, 'rollout_is_weights');
  checkMask(responseMask, shape.cols);
}

/** Both estimators' first steps: validate once, then G and W (see {@link pathInputs}) and the valid tokens per row. */
function prepare(
  tokenLevelRewards: FloatArray,
  responseMask: MaskArray,
  index: GroupLabels,
  oldLogProbs: FloatArray,
  sumPiSquared: FloatArray,
  shape: Shape2,
  o: Required<Omit<OptimalTokenBaselineOptions, 'rolloutIsWeights' | 'out' | 'outReturns'>> &
    OptimalTokenBaselineOptions,
): OtbInputs & { lengths: Int32Array } {
  validate(tokenLevelRewards, responseMask, index, oldLogProbs, sumPiSquared, shape, o);
  const named = {
    token_level_rewards: tokenLevelRewards,
    response_mask: responseMask,
    index,
    old_log_probs: oldLogProbs,
    sum_pi_squared: sumPiSquared,
    rollout_is_weights: o.rolloutIsWeights,
  };
  checkOutNotAliased(o.outReturns, 'outReturns', named);
  checkOutNotAliased(o.out, 'out', { ...named, outReturns: o.outReturns });
  const { G, W } = pathInputs(
    tokenLevelRewards,
    responseMask,
    oldLogProbs,
    sumPiSquared,
    shape,
    o.rolloutIsWeights,
    o.outReturns,
  );
  return { G, W, lengths: validTokenCounts(responseMask, shape) };
}

/** Rows of each group (first-appearance order of labels, rows ascending). */
function groupRows(index: GroupLabels, rows: number, keep: (b: number) => boolean): number[][] {
  return groupMembers(factorizeLabels(index, rows), keep).filter((m) => m.length > 0);
}

/** The unique longest member and the second-longest length, or null when the longest is tied. */
function uniqueLongest(
  rows: number[],
  length: (b: number) => number,
): { row: number; secondLength: number } | null {
  const sorted = rows.map(length).sort((a, b) => a - b);
  const max = sorted[sorted.length - 1] as number;
  const second = sorted[sorted.length - 2] as number;
  const longest = rows.filter((b) => length(b) === max);
  return longest.length === 1 && max > second ? { row: longest[0] as number, secondLength: second } : null;
}

/** Valid tokens per row of a validated 0/1 mask. */
function validTokenCounts(mask: MaskArray, shape: Shape2): Int32Array {
  const { rows, cols } = shape;
  const counts = new Int32Array(rows);
  for (let b = 0; b < rows; b++) {
    let n = 0;
    for (let i = b * cols; i < (b + 1) * cols; i++) n += mask[i] as number;
    counts[b] = n;
  }
  return counts;
}

/**
 * The shared step of both estimators on `[rows, width]` aligned arrays R (reward-to-go) and W (path
 * variance): per group of ≥ 2 members and per position p,
 * `B_p = f32(Σ_i f32(R[i,p]·W[i,p])) / f32(f32(Σ_i W[i,p]) + eps)` over the members whose position p is
 * valid (`valid[i,p] = 1`, or every member when `valid` is null); the same B_p for every member; groups
 * of one keep 0. With zeroTail 'zero', the unique longest member (by `lengths`) gets 0 from the
 * second-longest length on.
 */
function groupBaselines(
  groups: number[][],
  width: number,
  R: Float32Array,
  W: Float32Array,
  valid: MaskArray | null,
  o: { epsilon: number; zeroTail: 'zero' | 'keep'; lengths: Int32Array },
): Float32Array {
  const baseline = new Float32Array(R.length);
  for (const members of groups) {
    if (members.length < 2) continue;
    for (let p = 0; p < width; p++) {
      let num = 0;
      let den = 0;
      for (const b of members) {
        const i = b * width + p;
        if (valid !== null && valid[i] !== 1) continue;
        num += f32((R[i] as number) * (W[i] as number));
        den += W[i] as number;
      }
      const B = f32(f32(num) / f32(f32(den) + o.epsilon));
      if (!Number.isFinite(B)) {
        // Σ W = 0 with eps 0 (e.g. every member deterministic there: w = 1 − 2·1 + 1 = 0) is 0/0
        throw new LabError(
          'NON_FINITE',
          `epsilon: the baseline at position ${p} of the group of row ${members[0]} is ${B} (Σ W = ${f32(den)}, epsilon ${o.epsilon}); use epsilon > 0`,
          { details: { field: 'epsilon', row: members[0], token: p } },
        );
      }
      for (const b of members) baseline[b * width + p] = B;
    }
    if (o.zeroTail === 'zero') {
      const tail = uniqueLongest(members, (b) => o.lengths[b] as number);
      if (tail) baseline.fill(0, tail.row * width + tail.secondLength, (tail.row + 1) * width);
    }
  }
  return baseline;
}

/**
 * verl `compute_optimal_token_baseline_advantage`: per group of ≥ 2 members and per position t,
 * `B_t = Σ_i G[i,t]·W[i,t]·m[i,t] / (Σ_i W[i,t]·m[i,t] + eps)` (positions aligned by index t);
 * a group of one has B = 0. With zeroTail 'zero', the unique longest member (by valid-token count,
 * strictly longer than the second) gets B = 0 from position len_2nd on.
 * `advantages = (G − B)·m`; `returns = G`. [B,T] float32 out.
 * Errors: shape / NON_FINITE (any position: the cumulative sums read them all) / BAD_MASK / labels.
 */
export function optimalTokenBaselineAdvantage(
  inputs: OptimalTokenBaselineInputs,
  shape: Shape2,
  options: OptimalTokenBaselineOptions = {},
): OptimalTokenBaselineResult {
  const { tokenLevelRewards, responseMask, index, oldLogProbs, sumPiSquared } = inputs;
  const o = { ...OPTIMAL_TOKEN_BASELINE_DEFAULTS, ...options };
  const { G, W, lengths } = prepare(
    tokenLevelRewards,
    responseMask,
    index,
    oldLogProbs,
    sumPiSquared,
    shape,
    o,
  );
  const { epsilon, zeroTail } = o;
  const { rows, cols } = shape;
  const baseline = groupBaselines(
    groupRows(index, rows, () => true),
    cols,
    G,
    W,
    responseMask,
    {
      epsilon,
      zeroTail,
      lengths,
    },
  );
  const advantages = outputBuffer(o.out, rows * cols, `[${rows},${cols}]`);
  for (let i = 0; i < advantages.length; i++) {
    advantages[i] = responseMask[i] === 1 ? (G[i] as number) - (baseline[i] as number) + 0 : 0;
  }
  return { advantages, returns: G };
}

/**
 * verl `compute_multi_turn_optimal_token_baseline_advantage` ("tir_optimal_token_baseline"): like
 * {@link optimalTokenBaselineAdvantage}, but each row's valid tokens are first packed to the left, so
 * the k-th valid token of every member is aligned across the group (tool-output holes do not shift
 * the alignment); `b*_k = Σ_i R·W / (Σ_i W + eps)` over the packed arrays (members shorter than k
 * contribute 0), zero tail on packed positions, rows without valid tokens are left out of their group,
 * and the result is scattered back to the valid positions, × m.
 */
export function multiTurnOptimalTokenBaselineAdvantage(
  inputs: OptimalTokenBaselineInputs,
  shape: Shape2,
  options: OptimalTokenBaselineOptions = {},
): OptimalTokenBaselineResult {
  const { tokenLevelRewards, responseMask, index, oldLogProbs, sumPiSquared } = inputs;
  const o = { ...MULTI_TURN_OPTIMAL_TOKEN_BASELINE_DEFAULTS, ...options };
  const { G, W, lengths } = prepare(
    tokenLevelRewards,
    responseMask,
    index,
    oldLogProbs,
    sumPiSquared,
    shape,
    o,
  );
  const { epsilon, zeroTail } = o;
  const { rows, cols } = shape;
  let maxLen = 0;
  for (const n of lengths) if (n > maxLen) maxLen = n;
  // packed[b][k]: the k-th valid token's G and W; zeros beyond the row's length
  const packedR = new Float32Array(rows * maxLen);
  const packedW = new Float32Array(rows * maxLen);
  for (let b = 0; b < rows; b++) {
    let k = 0;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      if (responseMask[i] === 1) {
        packedR[b * maxLen + k] = G[i] as number;
        packedW[b * maxLen + k] = W[i] as number;
        k++;
      }
    }
  }
  const members = groupRows(index, rows, (b) => (lengths[b] as number) > 0);
  // packed positions past a row's length hold R = W = 0, so every member can be summed at every k
  const baseline = groupBaselines(members, maxLen, packedR, packedW, null, { epsilon, zeroTail, lengths });
  const advantages = outputBuffer(o.out, rows * cols, `[${rows},${cols}]`);
  for (let b = 0; b < rows; b++) {
    let k = 0;
    for (let t = 0; t < cols; t++) {
      const i = b * cols + t;
      if (responseMask[i] === 1) {
        const j = b * maxLen + k;
        advantages[i] = (packedR[j] as number) - (baseline[j] as number) + 0;
        k++;
      } else advantages[i] = 0;
    }
  }
  return { advantages, returns: G };
}
