/**
 * Golden-case adapters for verl's advantage estimators, the masked helpers and the groupwise utilities.
 * Each adapter turns a case's JSON inputs (nested lists) into typed arrays, calls the lab's kernel and
 * returns outputs keyed like verl's. `returns_is_same_object` is reported from the lab's own result
 * (`returns === advantages`), so it is compared, not assumed.
 */

import type { GroupLabel, MaskArray, Shape2 } from '../batch.js';
import { LabError } from '../errors.js';
import { gaeAdvantageReturn } from '../gae.js';
import { GPG_DEFAULTS, gpgAdvantage } from '../gpg.js';
import { asTorchIndex, groupMeanStd } from '../groupwise.js';
import { GRPO_DEFAULTS, grpoAdvantage, grpoVectorizedAdvantage } from '../grpo.js';
import { grpoPasskAdvantage, PASSK_DEFAULTS } from '../grpoPassk.js';
import { computeRewards } from '../klReward.js';
import { maskedMean, maskedRowMeans, maskedRowSums, maskedSum, maskedVar, maskedWhiten } from '../masked.js';
import { opoAdvantage } from '../opo.js';
import {
  multiTurnOptimalTokenBaselineAdvantage,
  type OptimalTokenBaselineOptions,
  optimalTokenBaselineAdvantage,
} from '../optimalTokenBaseline.js';
import { reinforcePlusPlusAdvantage, reinforcePlusPlusBaselineAdvantage } from '../reinforcePlusPlus.js';
import { remaxAdvantage } from '../remax.js';
import { rlooAdvantage, rlooVectorizedAdvantage } from '../rloo.js';
import type { Adapter, AdapterTable } from './types.js';

/** A [B,T] JSON matrix as a row-major Float32Array (non-finite values arrive as strings). */
export interface Matrix {
  data: Float32Array;
  shape: Shape2;
}

function num(v: unknown, field: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return Number.NaN;
  if (v === 'Infinity') return Number.POSITIVE_INFINITY;
  if (v === '-Infinity') return Number.NEGATIVE_INFINITY;
  throw new LabError('PARSE_ERROR', `${field}: expected a number, got ${JSON.stringify(v)}`, {
    details: { field },
  });
}

export function matrix(v: unknown, field: string, rowsLimit?: number): Matrix {
  if (!Array.isArray(v) || !v.every(Array.isArray)) {
    throw new LabError('PARSE_ERROR', `${field}: expected a list of rows`, { details: { field } });
  }
  const rowsAll = v as unknown[][];
  const rowsArr = rowsLimit === undefined ? rowsAll : rowsAll.slice(0, rowsLimit);
  const rows = rowsArr.length;
  const cols = rows > 0 ? (rowsArr[0] as unknown[]).length : 0;
  const data = new Float32Array(rows * cols);
  rowsArr.forEach((row, b) => {
    if (row.length !== cols) {
      throw new LabError('PARSE_ERROR', `${field}: row ${b} has ${row.length} values, row 0 has ${cols}`, {
        details: { field, row: b },
      });
    }
    row.forEach((x, t) => {
      data[b * cols + t] = num(x, field);
    });
  });
  return { data, shape: { rows, cols } };
}

function vector(v: unknown, field: string): number[] {
  if (!Array.isArray(v))
    throw new LabError('PARSE_ERROR', `${field}: expected a list`, { details: { field } });
  return v.map((x) => num(x, field));
}

function labels(v: unknown, field: string): GroupLabel[] {
  if (!Array.isArray(v))
    throw new LabError('PARSE_ERROR', `${field}: expected a list`, { details: { field } });
  return v as GroupLabel[];
}

/** Row-major flat array -> nested [B][T] list, the golden outputs' layout. */
export function nested(x: ArrayLike<number>, shape: Shape2): number[][] {
  const out: number[][] = [];
  for (let b = 0; b < shape.rows; b++)
    out.push(Array.from({ length: shape.cols }, (_, t) => x[b * shape.cols + t] as number));
  return out;
}

function args(config: Record<string, unknown>): Record<string, unknown> {
  return (config.args as Record<string, unknown> | undefined) ?? {};
}

function algo(config: Record<string, unknown>): Record<string, unknown> {
  return (config.algo_config as Record<string, unknown> | undefined) ?? {};
}

function batch(inputs: Record<string, unknown>, rowsLimit?: number) {
  const r = matrix(inputs.token_level_rewards, 'token_level_rewards', rowsLimit);
  const m = matrix(inputs.response_mask, 'response_mask', rowsLimit);
  return { rewards: r.data, mask: m.data as MaskArray, shape: r.shape };
}

function advantageOutputs(result: { advantages: Float32Array; returns: Float32Array }, shape: Shape2) {
  return {
    advantages: nested(result.advantages, shape),
    returns: nested(result.returns, shape),
    returns_is_same_object: result.returns === result.advantages,
  };
}

/** verl's `norm_adv_by_std_in_grpo` flag as the lab's std option. */
function stdFlag(v: unknown): 'unbiased' | 'none' {
  return v === false ? 'none' : 'unbiased';
}

/** The loop and vectorized GRPO kernels take the same verl arguments: `epsilon`, `norm_adv_by_std_in_grpo`. */
function grpoAdapter(kernel: typeof grpoAdvantage | typeof grpoVectorizedAdvantage): Adapter {
  return {
    run(inputs, config) {
      const { rewards, mask, shape } = batch(inputs);
      const a = args(config);
      const epsilon = (a.epsilon as number | undefined) ?? GRPO_DEFAULTS.epsilon;
      const result = kernel(
        { tokenLevelRewards: rewards, responseMask: mask, index: labels(inputs.index, 'index') },
        shape,
        {
          std: stdFlag(a.norm_adv_by_std_in_grpo),
          epsilon,
        },
      );
      return advantageOutputs(result, shape);
    },
  };
}

const grpo = grpoAdapter(grpoAdvantage);
const grpoVectorized = grpoAdapter(grpoVectorizedAdvantage);

const rloo: Adapter = {
  run(inputs) {
    const { rewards, mask, shape } = batch(inputs);
    return advantageOutputs(
      rlooAdvantage(
        { tokenLevelRewards: rewards, responseMask: mask, index: labels(inputs.index, 'index') },
        shape,
      ),
      shape,
    );
  },
};

const rlooVectorized: Adapter = {
  run(inputs) {
    const { rewards, mask, shape } = batch(inputs);
    return advantageOutputs(
      rlooVectorizedAdvantage(
        { tokenLevelRewards: rewards, responseMask: mask, index: labels(inputs.index, 'index') },
        shape,
      ),
      shape,
    );
  },
};

const opo: Adapter = {
  run(inputs) {
    const { rewards, mask, shape } = batch(inputs);
    return advantageOutputs(
      opoAdvantage(
        { tokenLevelRewards: rewards, responseMask: mask, index: labels(inputs.index, 'index') },
        shape,
      ),
      shape,
    );
  },
};

const gpg: Adapter = {
  run(inputs, config) {
    const { rewards, mask, shape } = batch(inputs);
    const fNorm = (args(config).f_norm as number | undefined) ?? GPG_DEFAULTS.fNorm;
    return advantageOutputs(
      gpgAdvantage(
        { tokenLevelRewards: rewards, responseMask: mask, index: labels(inputs.index, 'index') },
        shape,
        { fNorm },
      ),
      shape,
    );
  },
};

const reinforcePlusPlusBaseline: Adapter = {
  run(inputs) {
    const { rewards, mask, shape } = batch(inputs);
    return advantageOutputs(
      reinforcePlusPlusBaselineAdvantage(
        { tokenLevelRewards: rewards, responseMask: mask, index: labels(inputs.index, 'index') },
        shape,
      ),
      shape,
    );
  },
};

const reinforcePlusPlus: Adapter = {
  run(inputs, config) {
    const { rewards, mask, shape } = batch(inputs);
    const gamma = algo(config).gamma;
    if (typeof gamma !== 'number') {
      throw new LabError('BAD_ARGUMENT', 'gamma: verl requires config.gamma for reinforce_plus_plus', {
        details: { field: 'gamma' },
      });
    }
    return advantageOutputs(
      reinforcePlusPlusAdvantage({ tokenLevelRewards: rewards, responseMask: mask }, shape, { gamma }),
      shape,
    );
  },
};

const remax: Adapter = {
  run(inputs) {
    const { rewards, mask, shape } = batch(inputs);
    const baselines = vector(inputs.reward_baselines, 'reward_baselines');
    return advantageOutputs(
      remaxAdvantage({ tokenLevelRewards: rewards, rewardBaselines: baselines, responseMask: mask }, shape),
      shape,
    );
  },
};

/**
 * The pass@k cases feed `config.index_input` as `index` (the runner does) and pass only the first
 * len(index) rows (`config.rows` says so in words).
 */
const grpoPassk: Adapter = {
  configKeys: ['rows'],
  run(inputs, config) {
    const index = labels(inputs.index, 'index');
    const { rewards, mask, shape } = batch(inputs, index.length);
    const std = stdFlag(algo(config).norm_adv_by_std_in_grpo);
    const epsilon = (args(config).epsilon as number | undefined) ?? PASSK_DEFAULTS.epsilon;
    return advantageOutputs(
      grpoPasskAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index }, shape, { std, epsilon }),
      shape,
    );
  },
};

const gae: Adapter = {
  run(inputs, config) {
    const { rewards, mask, shape } = batch(inputs);
    const values = matrix(inputs.values, 'values').data;
    const a = args(config);
    const result = gaeAdvantageReturn({ tokenLevelRewards: rewards, values, responseMask: mask }, shape, {
      gamma: a.gamma as number,
      lam: a.lam as number,
    });
    return {
      advantages: nested(result.advantages, shape),
      returns: nested(result.returns, shape),
      returns_is_same_object: false,
    };
  },
};

const klReward: Adapter = {
  run(inputs, config) {
    const scores = matrix(inputs.token_level_scores, 'token_level_scores');
    const old = matrix(inputs.old_log_prob, 'old_log_prob').data;
    const ref = matrix(inputs.ref_log_prob, 'ref_log_prob').data;
    const klRatio = args(config).kl_ratio as number;
    return {
      token_level_rewards: nested(
        computeRewards(
          { tokenLevelScores: scores.data, oldLogProb: old, refLogProb: ref },
          scores.shape,
          klRatio,
        ),
        scores.shape,
      ),
    };
  },
};

const maskedHelpers: Adapter = {
  run(inputs) {
    const values = matrix(inputs.values, 'values');
    const mask = matrix(inputs.mask, 'mask').data;
    const { data, shape } = values;
    return {
      masked_sum: maskedSum({ values: data, mask }, shape),
      'masked_sum_axis_-1': Array.from(maskedRowSums({ values: data, mask }, shape)),
      masked_mean: maskedMean({ values: data, mask }, shape),
      'masked_mean_axis_-1': Array.from(maskedRowMeans({ values: data, mask }, shape)),
      masked_var_unbiased: maskedVar({ values: data, mask }, shape, { correction: 'unbiased' }),
      masked_var_biased: maskedVar({ values: data, mask }, shape, { correction: 'biased' }),
      masked_whiten: nested(maskedWhiten({ values: data, mask }, shape), shape),
      masked_whiten_no_shift: nested(maskedWhiten({ values: data, mask }, shape, { mean: 'keep' }), shape),
    };
  },
};

const groupMeanStdAdapter: Adapter = {
  run(inputs, config) {
    // an absent eps leaves groupMeanStd's own default (verl's 1e-6)
    const eps = args(config).eps as number | undefined;
    const r = groupMeanStd(vector(inputs.scores, 'scores'), vector(inputs.gidx, 'gidx'), eps);
    return { mean: Array.from(r.mean), std: Array.from(r.std), count: Array.from(r.count) };
  },
};

const asTorchIndexAdapter: Adapter = {
  run(inputs) {
    return { gidx: asTorchIndex(labels(inputs.index, 'index')) };
  },
};

/**
 * `config.args.rollout_is_weights: true` means: pass the case's `rollout_is_weights` input. An absent
 * `handle_zero_tail` or `epsilon` leaves the kernel's own default (which differs between the plain and
 * the multi-turn estimator for the tail, as in verl).
 */
function otbAdapter(kernel: typeof optimalTokenBaselineAdvantage): Adapter {
  return {
    run(inputs, config) {
      const { rewards, mask, shape } = batch(inputs);
      const a = args(config);
      const options: OptimalTokenBaselineOptions = {};
      if (typeof a.handle_zero_tail === 'boolean') options.zeroTail = a.handle_zero_tail ? 'zero' : 'keep';
      if (typeof a.epsilon === 'number') options.epsilon = a.epsilon;
      if (a.rollout_is_weights === true) {
        options.rolloutIsWeights = matrix(inputs.rollout_is_weights, 'rollout_is_weights').data;
      }
      const result = kernel(
        {
          tokenLevelRewards: rewards,
          responseMask: mask,
          index: labels(inputs.index, 'index'),
          oldLogProbs: matrix(inputs.old_log_probs, 'old_log_probs').data,
          sumPiSquared: matrix(inputs.sum_pi_squared, 'sum_pi_squared').data,
        },
        shape,
        options,
      );
      return {
        advantages: nested(result.advantages, shape),
        returns: nested(result.returns, shape),
        returns_is_same_object: result.returns === result.advantages,
      };
    },
  };
}

export const advantageAdapters: AdapterTable = {
  compute_optimal_token_baseline_advantage: otbAdapter(optimalTokenBaselineAdvantage),
  compute_multi_turn_optimal_token_baseline_advantage: otbAdapter(multiTurnOptimalTokenBaselineAdvantage),
  compute_grpo_outcome_advantage: grpo,
  compute_grpo_vectorized_outcome_advantage: grpoVectorized,
  compute_rloo_outcome_advantage: rloo,
  compute_rloo_vectorized_outcome_advantage: rlooVectorized,
  compute_opo_outcome_advantage: opo,
  compute_gpg_outcome_advantage: gpg,
  compute_reinforce_plus_plus_baseline_outcome_advantage: reinforcePlusPlusBaseline,
  compute_reinforce_plus_plus_outcome_advantage: reinforcePlusPlus,
  compute_remax_outcome_advantage: remax,
  compute_grpo_passk_outcome_advantage: grpoPassk,
  compute_gae_advantage_return: gae,
  compute_rewards: klReward,
  'torch_functional.masked_*': maskedHelpers,
  'groupwise.group_mean_std': groupMeanStdAdapter,
  'groupwise.as_torch_index': asTorchIndexAdapter,
};
