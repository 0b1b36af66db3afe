/**
 * GRPO outcome advantages (verl `verl/trainer/ppo/core_algos.py`):
 *  - {@link grpoScalarAdvantages}: one scalar per row from one score per row, with the conventions
 *    (std kind, epsilon, singleton rule) as explicit options;
 *  - {@link grpoAdvantage}: `compute_grpo_outcome_advantage` ("grpo", the loop version) on a [B,T] batch;
 *  - {@link grpoVectorizedAdvantage}: `compute_grpo_vectorized_outcome_advantage` ("grpo_vectorized"),
 *    whose float32 one-pass variance and std floor make it differ on near-constant groups.
 */
import {
  checkLabels,
  checkOutNotAliased,
  type GroupLabel,
  type GroupLabels,
  type OutcomeBatch,
  outcomeFields,
  outputBuffer64,
  type RowOutOption,
  type Shape2,
} from './batch.js';
import { LabError } from './errors.js';
import { asTorchIndex, factorizeLabels, type GroupIds, groupMeanStd } from './groupwise.js';
import { broadcastRows, checkTokenBatch, rowSums, scanMask } from './rowScores.js';

/** Which standard deviation scales the centred score: `torch.std` (n−1), population (n), or none (Dr.GRPO). */
export type StdKind = 'unbiased' | 'population' | 'none';
/**
 * What a group of one gets: `verl` (mean 0, std 1, so `s/(1+eps)`, or `s` without std scaling),
 * `zero` (advantage 0), `error` (LabError SINGLETON_GROUP, as TRL refuses num_generations < 2).
 */
export type SingletonRule = 'verl' | 'zero' | 'error';

export interface GroupNormOptions {
  std?: StdKind;
  /** Added to the std (not the variance). */
  epsilon?: number;
  singleton?: SingletonRule;
}

/** verl's values: `torch.std` (unbiased), epsilon 1e-6 added to the std, singleton mean 0 / std 1. */
export const GRPO_DEFAULTS: Required<GroupNormOptions> = Object.freeze({
  std: 'unbiased',
  epsilon: 1e-6,
  singleton: 'verl',
});

const STD_KINDS: readonly StdKind[] = ['unbiased', 'population', 'none'];
const SINGLETON_RULES: readonly SingletonRule[] = ['verl', 'zero', 'error'];

/** Merges options over the defaults once and validates every field (UNKNOWN_MODE / BAD_ARGUMENT). */
export function resolveGroupNormOptions(options: GroupNormOptions = {}): Required<GroupNormOptions> {
  const o = { ...GRPO_DEFAULTS, ...options };
  if (!STD_KINDS.includes(o.std)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `std: unknown std kind '${o.std}' (expected ${STD_KINDS.join(', ')})`,
      {
        details: { field: 'std', value: o.std },
      },
    );
  }
  if (!SINGLETON_RULES.includes(o.singleton)) {
    throw new LabError(
      'UNKNOWN_MODE',
      `singleton: unknown singleton rule '${o.singleton}' (expected ${SINGLETON_RULES.join(', ')})`,
      { details: { field: 'singleton', value: o.singleton } },
    );
  }
  if (typeof o.epsilon !== 'number' || !Number.isFinite(o.epsilon) || o.epsilon < 0) {
    throw new LabError('BAD_ARGUMENT', `epsilon: expected a finite number >= 0, got ${o.epsilon}`, {
      details: { field: 'epsilon', value: o.epsilon },
    });
  }
  return o;
}

/** Throws NON_FINITE naming the first non-finite score. */
export function checkFiniteScores(scores: ArrayLike<number>, field = 'scores'): void {
  for (let i = 0; i < scores.length; i++) {
    const v = scores[i] as number;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new LabError('NON_FINITE', `${field}: value ${v} at row ${i} is not finite`, {
        details: { field, row: i, value: v },
      });
    }
  }
}

/** Per-group count, exact mean (the common value when all members are equal) and sum of squared deviations. */
export interface GroupMoments {
  count: Int32Array;
  mean: Float64Array;
  /** Σ (s − mean)², exactly 0 for a group whose members are all equal. */
  sumSq: Float64Array;
}

/**
 * Two-pass float64 group moments over dense ids. A group whose members are all equal gets that value
 * as its mean and 0 as its sum of squares exactly (a float64 sum/n can miss by an ulp, which would
 * turn an all-equal group's advantage from 0 into noise/eps).
 */
export function groupMoments(scores: ArrayLike<number>, groups: GroupIds): GroupMoments {
  const G = groups.groups;
  const ids = groups.ids;
  const count = new Int32Array(G);
  const sum = new Float64Array(G);
  const min = new Float64Array(G).fill(Number.POSITIVE_INFINITY);
  const max = new Float64Array(G).fill(Number.NEGATIVE_INFINITY);
  for (let i = 0; i < ids.length; i++) {
    const g = ids[i] as number;
    const s = scores[i] as number;
    count[g] = (count[g] as number) + 1;
    sum[g] = (sum[g] as number) + s;
    if (s < (min[g] as number)) min[g] = s;
    if (s > (max[g] as number)) max[g] = s;
  }
  const mean = new Float64Array(G);
  for (let g = 0; g < G; g++) {
    mean[g] = min[g] === max[g] ? (min[g] as number) : (sum[g] as number) / (count[g] as number);
  }
  const sumSq = new Float64Array(G);
  for (let i = 0; i < ids.length; i++) {
    const g = ids[i] as number;
    if (min[g] === max[g]) continue;
    const d = (scores[i] as number) - (mean[g] as number);
    sumSq[g] = (sumSq[g] as number) + d * d;
  }
  return { count, mean, sumSq };
}

/**
 * The error for a centred score divided by a std that is 0 in floating point while the group is not
 * constant (differences below ~1e-154 square to 0 in float64; verl's float32 one-pass variance can
 * round to 0) with epsilon 0: the advantage would be ±Infinity or NaN.
 */
export function degenerateStdError(value: number, label: GroupLabel, row: number): LabError {
  return new LabError(
    'NON_FINITE',
    `epsilon: the advantage of row ${row} (group ${JSON.stringify(label)}) would be ${value}: its group std is 0 in floating point although the scores differ, and epsilon is 0 (use epsilon > 0)`,
    { details: { field: 'epsilon', row, label } },
  );
}

function singletonError(label: GroupLabel, row: number, field: string): LabError {
  return new LabError(
    'SINGLETON_GROUP',
    `${field}: group ${JSON.stringify(label)} (row ${row}) has one member; the singleton rule is 'error'`,
    { details: { field, row, label } },
  );
}

/**
 * Core of the GRPO family on dense group ids (validated options, finite scores):
 * `a = (s − mean_g)/(std_g + eps)` (`s − mean_g` with std 'none'); singleton per the rule.
 * Float64 throughout except verl's singleton constant: `std + eps` there is a float32 tensor sum,
 * `fround(1 + eps)` (= 1.00000095367431640625 for eps 1e-6). Writes every position of `out` (a
 * checked length-B buffer) when given, else of a new array.
 */
export function groupNormalize(
  scores: ArrayLike<number>,
  groups: GroupIds,
  o: Required<GroupNormOptions>,
  field = 'index',
  out: Float64Array = new Float64Array(groups.ids.length),
): Float64Array {
  const { count, mean, sumSq } = groupMoments(scores, groups);
  const G = groups.groups;
  const scale = new Float64Array(G);
  for (let g = 0; g < G; g++) {
    const n = count[g] as number;
    if (n < 2) continue;
    const ss = sumSq[g] as number;
    if (!Number.isFinite(ss) || !Number.isFinite(mean[g] as number)) {
      // scores beyond ~1e154: an infinite std would silently turn every advantage of the group into 0
      throw new LabError(
        'NON_FINITE',
        `scores: group ${JSON.stringify(groups.labels[g])} is too large for float64 statistics (its sum or squared deviations overflow)`,
        { details: { field: 'scores', label: groups.labels[g] } },
      );
    }
    scale[g] =
      o.std === 'unbiased' ? Math.sqrt(ss / (n - 1)) : o.std === 'population' ? Math.sqrt(ss / n) : 0;
  }
  const singletonDenominator = o.std === 'none' ? 1 : Math.fround(1 + o.epsilon);
  for (let i = 0; i < out.length; i++) {
    const g = groups.ids[i] as number;
    const s = scores[i] as number;
    if ((count[g] as number) === 1) {
      if (o.singleton === 'error') throw singletonError(groups.labels[g] as GroupLabel, i, field);
      out[i] = o.singleton === 'zero' ? 0 : s / singletonDenominator;
      continue;
    }
    const centred = s - (mean[g] as number);
    if (o.std === 'none' || centred === 0) {
      out[i] = centred + 0; // an all-equal group is exactly 0 even with epsilon 0 (never 0/0)
    } else {
      const a = centred / ((scale[g] as number) + o.epsilon);
      if (!Number.isFinite(a)) throw degenerateStdError(a, groups.labels[g] as GroupLabel, i);
      out[i] = a;
    }
  }
  return out;
}

/**
 * {@link groupNormalize} in verl's loop arithmetic (`compute_grpo_outcome_advantage` on float32
 * tensors, torch 1.13 CPU), for float32 `scores`:
 *  - `mean_g = torch.mean(torch.stack(scores of g))`: a float32 sum in row order, then `/ n` rounded
 *    to float32 (torch's CPU mean is `sum(...).div_(n)`);
 *  - `std_g = torch.std(...)` (full reduction, `std_var_all_cpu`): the squared deviations from that
 *    float32 mean summed in float64, `/ (n − 1)` (`/ n` for 'population'), `sqrt`, rounded to float32;
 *  - `a = fl32(fl32(s − mean_g) / fl32(std_g + fl32(eps)))` (`fl32(s − mean_g)` with std 'none').
 * Why it matters: for a group whose scores differ by a few float32 ulps, the float32 mean is off the
 * exact mean by a sizeable fraction of the spread, and std ≈ ulps ≈ eps, so float64 statistics give
 * advantages far from verl's (-0.323 vs -0.246 on the supplement's golden case). An all-equal group whose
 * float32 sum is exact (0/1 rewards, any dyadic value) gives exactly 0, as in verl.
 * Order caveat: torch sums a contiguous float32 vector of 8 or more elements in SIMD lanes (order
 * depends on the CPU); this uses row order, which is torch's order below 8 members. Singletons follow
 * the rule (verl: mean 0, std 1, `s / fl32(1 + eps)`).
 */
export function groupNormalizeFloat32(
  scores: ArrayLike<number>,
  groups: GroupIds,
  o: Required<GroupNormOptions>,
  field = 'index',
): Float64Array {
  const f32 = Math.fround;
  const G = groups.groups;
  const ids = groups.ids;
  const count = new Int32Array(G);
  const sum = new Float32Array(G); // each store rounds the partial sum to float32, as torch's float32 sum
  for (let i = 0; i < ids.length; i++) {
    const g = ids[i] as number;
    count[g] = (count[g] as number) + 1;
    sum[g] = (sum[g] as number) + f32(scores[i] as number);
  }
  const mean = new Float32Array(G);
  for (let g = 0; g < G; g++) mean[g] = (sum[g] as number) / (count[g] as number);
  const sumSq = new Float64Array(G);
  for (let i = 0; i < ids.length; i++) {
    const g = ids[i] as number;
    const d = f32(scores[i] as number) - (mean[g] as number);
    sumSq[g] = (sumSq[g] as number) + d * d;
  }
  const epsF = f32(o.epsilon);
  const denominator = new Float64Array(G);
  for (let g = 0; g < G; g++) {
    const n = count[g] as number;
    if (n < 2) continue;
    if (!Number.isFinite(mean[g] as number) || !Number.isFinite(sumSq[g] as number)) {
      throw new LabError(
        'NON_FINITE',
        `scores: group ${JSON.stringify(groups.labels[g])} is too large for float32 statistics (its sum or squared deviations overflow)`,
        { details: { field: 'scores', label: groups.labels[g] } },
      );
    }
    const divisor = o.std === 'population' ? n : n - 1;
    denominator[g] = f32(f32(Math.sqrt((sumSq[g] as number) / divisor)) + epsF);
  }
  const singletonDenominator = o.std === 'none' ? 1 : f32(1 + epsF);
  const out = new Float64Array(ids.length);
  for (let i = 0; i < out.length; i++) {
    const g = ids[i] as number;
    const s = f32(scores[i] as number);
    if ((count[g] as number) === 1) {
      if (o.singleton === 'error') throw singletonError(groups.labels[g] as GroupLabel, i, field);
      out[i] = o.singleton === 'zero' ? 0 : f32(s / singletonDenominator);
      continue;
    }
    const centred = f32(s - (mean[g] as number));
    if (o.std === 'none' || centred === 0) {
      out[i] = centred + 0; // never 0/0 on an all-equal group, even with epsilon 0
    } else {
      const a = f32(centred / (denominator[g] as number));
      if (!Number.isFinite(a)) throw degenerateStdError(a, groups.labels[g] as GroupLabel, i);
      out[i] = a;
    }
  }
  return out;
}

/**
 * One scalar advantage per row from one score per row (length B), grouped by `index` with Python
 * equality (`"1"` ≠ `"01"`, `1` ≠ `"1"`). verl loop semantics by default:
 *   a = (s − mean_g)/(std_g + eps), std = torch.std (unbiased), eps = 1e-6;
 *   singleton 'verl': mean 0, std 1 → s/(1+eps) with float32(1+1e-6); 'zero' → 0;
 *   'error' → LabError SINGLETON_GROUP; std 'none' → s − mean (Dr.GRPO, verl's norm_adv_by_std_in_grpo=false).
 * All-equal groups of size ≥ 2 give exactly 0. Computed in float64.
 * `out`: a length-B Float64Array to write into (see {@link RowOutOption}); it is then the result.
 * Errors: NON_FINITE score, SHAPE_MISMATCH labels length, BAD_VALUE label, UNKNOWN_MODE / BAD_ARGUMENT option,
 * SHAPE_MISMATCH / BAD_ARGUMENT `out` (wrong length / not a Float64Array).
 */
export function grpoScalarAdvantages(
  scores: ArrayLike<number>,
  index: GroupLabels,
  options: GroupNormOptions & RowOutOption = {},
): Float64Array {
  const { out, ...normOptions } = options;
  checkOutNotAliased(out, 'out', { scores, index });
  const o = resolveGroupNormOptions(normOptions);
  checkFiniteScores(scores);
  const groups = factorizeLabels(index, scores.length);
  return groupNormalize(scores, groups, o, 'index', outputBuffer64(out, scores.length, `[${scores.length}]`));
}

/** Advantages and returns of an outcome estimator; verl returns the same tensor twice for most of them. */
export interface AdvantageReturn {
  advantages: Float32Array;
  /** `=== advantages` (the same object) where verl returns the same tensor twice. */
  returns: Float32Array;
}

export interface GrpoAdvantageOptions extends GroupNormOptions {
  /** A [B,T] Float32Array to overwrite with the result (reuse across steps); default a new array. */
  out?: Float32Array;
}

/**
 * verl `compute_grpo_outcome_advantage` ("grpo"): `s_b = Σ_t token_level_rewards[b,t]` over ALL T
 * positions (a reward on a mask-0 position still counts; rounded to float32), grouped by `index`
 * (Python equality), `a_b` in verl's float32 arithmetic ({@link groupNormalizeFloat32}: float32 group
 * mean, torch.std about it, `(s − mean)/(std + eps)` rounded as torch does), then
 * `advantages[b,t] = a_b · m[b,t]` ([B,T] row-major, float32; +0 where the mask is 0). On groups whose
 * scores differ by a few float32 ulps this differs from the float64 {@link grpoScalarAdvantages}, as
 * verl's float32 run differs from its float64 one. `returns` is the same array object, as in verl.
 * verl's `norm_adv_by_std_in_grpo=false` is `{ std: 'none' }`; `epsilon` is verl's `epsilon`;
 * `out` reuses a [B,T] buffer (it is then the returned array).
 * Errors: SHAPE_MISMATCH (shape, lengths, labels), NON_FINITE reward (row, token), BAD_MASK, BAD_VALUE label,
 * SINGLETON_GROUP with singleton 'error'.
 */
export function grpoAdvantage(
  inputs: OutcomeBatch,
  shape: Shape2,
  options: GrpoAdvantageOptions = {},
): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  const { out, ...normOptions } = options;
  checkOutNotAliased(out, 'out', outcomeFields(inputs));
  const o = resolveGroupNormOptions(normOptions);
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  checkLabels(index, shape.rows);
  const layout = scanMask(responseMask, shape);
  const scores = rowSums(tokenLevelRewards, shape);
  for (let b = 0; b < scores.length; b++) scores[b] = Math.fround(scores[b] as number);
  const groups = factorizeLabels(index, shape.rows);
  const perRow = groupNormalizeFloat32(scores, groups, o);
  const advantages = broadcastRows(perRow, responseMask, shape, layout, out);
  return { advantages, returns: advantages };
}

export interface VectorizedGroupNormOptions {
  /** 'unbiased' divides by the floored std (verl's default); 'none' is norm_adv_by_std_in_grpo=false. */
  std?: 'unbiased' | 'none';
  /** Variance floor AND the constant added to the std (verl passes the same epsilon to both). */
  epsilon?: number /** A [B,T] Float32Array to overwrite with the result (reuse across steps); default a new array. */;
  out?: Float32Array;
}

const VECTORIZED_DEFAULTS: Required<Omit<VectorizedGroupNormOptions, 'out'>> = Object.freeze({
  std: 'unbiased',
  epsilon: 1e-6,
});

/**
 * Canonical group ids as verl's vectorized estimators build them (`as_torch_index`), made dense
 * (0..G-1 in first-appearance order) so huge integer labels do not allocate huge arrays; the grouping
 * is identical. Negative integer labels are refused (torch's index_add_ raises on them).
 */
export function canonicalGroupIds(index: GroupLabels, rows: number, field = 'index'): GroupIds {
  checkLabels(index, rows, field);
  const gidx = asTorchIndex(index, field);
  for (let i = 0; i < rows; i++) {
    if ((gidx[i] as number) < 0) {
      throw new LabError(
        'BAD_VALUE',
        `${field}: label ${JSON.stringify(index[i])} at row ${i} becomes the negative group id ${gidx[i]}`,
        { details: { field, row: i } },
      );
    }
  }
  return factorizeLabels(gidx, rows, field);
}

/**
 * verl `compute_grpo_vectorized_outcome_advantage` ("grpo_vectorized"): labels canonicalised by
 * `as_torch_index` (numeric strings merge: `"1"` = `"01"`), group stats from verl's float32
 * `group_mean_std` (one-pass variance `(Σs² − (Σs)²/n)/max(n−1,1)`, `std = sqrt(max(var, eps))`,
 * singletons mean 0 / std 1), then `a = (s − mean)/(std + eps)` in float32 (or `s − mean`), × mask.
 * Differs from {@link grpoAdvantage} on (near-)constant groups: std ≥ sqrt(eps) and the one-pass
 * float32 variance can be a rounding residue instead of 0. `returns` is the same array object;
 * `out` reuses a [B,T] buffer (it is then the returned array; padding is overwritten with 0).
 */
export function grpoVectorizedAdvantage(
  inputs: OutcomeBatch,
  shape: Shape2,
  options?: VectorizedGroupNormOptions,
): AdvantageReturn {
  const { tokenLevelRewards, responseMask, index } = inputs;
  const { out, ...normOptions } = options ?? {};
  checkOutNotAliased(out, 'out', outcomeFields(inputs));
  const o = { ...VECTORIZED_DEFAULTS, ...normOptions };
  if (o.std !== 'unbiased' && o.std !== 'none') {
    throw new LabError('UNKNOWN_MODE', `std: grpo_vectorized supports 'unbiased' or 'none', got '${o.std}'`, {
      details: { field: 'std', value: o.std },
    });
  }
  resolveGroupNormOptions({ epsilon: o.epsilon });
  checkTokenBatch(tokenLevelRewards, responseMask, shape, 'token_level_rewards');
  const groups = canonicalGroupIds(index, shape.rows);
  const scores = rowSums(tokenLevelRewards, shape);
  for (let b = 0; b < scores.length; b++) scores[b] = Math.fround(scores[b] as number);
  const { mean, std } = groupMeanStd(scores, groups.ids, o.epsilon);
  const f32 = Math.fround;
  const epsF = o.epsilon;
  const perRow = new Float64Array(shape.rows);
  for (let b = 0; b < shape.rows; b++) {
    const g = groups.ids[b] as number;
    const centred = f32((scores[b] as number) - (mean[g] as number));
    perRow[b] = o.std === 'none' ? centred : f32(centred / f32((std[g] as number) + epsF));
    if (!Number.isFinite(perRow[b] as number)) {
      throw degenerateStdError(perRow[b] as number, index[b] as GroupLabel, b);
    }
  }
  const advantages = broadcastRows(perRow, responseMask, shape, scanMask(responseMask, shape), out);
  return { advantages, returns: advantages };
}
