/**
 * Conformance adapters of the loss-side kernels: golden `fn` name -> lab kernel, outputs keyed like
 * verl's (see test/golden/verl-core-algos.json). Thin: convert nested lists to typed arrays, map
 * verl's config names onto the lab's options, reshape the result.
 */
import { type AggOptions, aggLoss, LOSS_AGG_MODES, type LossAggMode } from '../aggLoss.js';
import type { Shape2 } from '../batch.js';
import { policyLossBypass } from '../bypassLoss.js';
import { policyLossCispo } from '../cispoLoss.js';
import { policyLossClipCov, policyLossKlCov } from '../covarianceLosses.js';
import { computeEntropyLoss, entropyFromLogits } from '../entropy.js';
import { LabError } from '../errors.js';
import { createKlController, type KlPenaltyName, klPenalty } from '../kl.js';
import { policyLossGpg, policyLossReinforce } from '../logProbLosses.js';
import {
  type RolloutIsLevel,
  type RolloutIsOptions,
  rolloutCorrection,
  rolloutIsWeights,
  rolloutRejectionMask,
} from '../rolloutCorrection.js';
import { policyLossSapo } from '../sapoLoss.js';
import { policyLossGeoMean, policyLossGspo } from '../sequenceRatioLosses.js';
import { valueLoss } from '../valueLoss.js';
import { policyLossVanilla, type VanillaLossOptions } from '../vanillaPolicyLoss.js';
import type { AdapterTable, GoldenCase } from './types.js';

/** A nested list `[B][T]` as a row-major Float32Array plus its shape. */
export function matrix(v: unknown, field: string): { data: Float32Array; shape: Shape2 } {
  if (!Array.isArray(v) || v.length === 0 || !Array.isArray(v[0])) {
    throw new LabError('PARSE_ERROR', `${field}: expected a non-empty [B][T] list`, { details: { field } });
  }
  const rows = v.length;
  const cols = (v[0] as unknown[]).length;
  const data = new Float32Array(rows * cols);
  v.forEach((row: unknown, b) => {
    if (!Array.isArray(row) || row.length !== cols) {
      throw new LabError('PARSE_ERROR', `${field}: row ${b} is not a list of ${cols} numbers`, {
        details: { field, row: b },
      });
    }
    row.forEach((x: unknown, t) => {
      data[b * cols + t] = typeof x === 'number' ? x : Number(x);
    });
  });
  return { data, shape: { rows, cols } };
}

/** Row-major data back to a nested list; `null` where `mask` is 0 (the golden derived losses). */
export function nested(
  data: ArrayLike<number>,
  shape: Shape2,
  mask?: ArrayLike<number>,
): (number | null)[][] {
  const out: (number | null)[][] = [];
  for (let b = 0; b < shape.rows; b++) {
    const row: (number | null)[] = [];
    for (let t = 0; t < shape.cols; t++) {
      const i = b * shape.cols + t;
      row.push(mask && mask[i] === 0 ? null : (data[i] as number));
    }
    out.push(row);
  }
  return out;
}

function num(v: unknown): number | null {
  return typeof v === 'number' ? v : null;
}

/** verl's `global_batch_info` dict (or agg_loss keyword args) as AggOptions. */
export function aggOptionsFrom(info: Record<string, unknown> | undefined): AggOptions {
  if (!info) return {};
  const o: AggOptions = {
    batchNumTokens: num(info.batch_num_tokens),
    globalBatchSize: num(info.global_batch_size),
    lossScaleFactor: num(info.loss_scale_factor),
  };
  const dp = num(info.dp_size);
  if (dp !== null) o.dpSize = dp;
  return o;
}

type ActorConfig = Record<string, unknown>;

/** Clip options from a golden `actor_config` (unset fields keep verl's defaults). */
function clipOptionsFrom(ac: ActorConfig): VanillaLossOptions {
  const o: VanillaLossOptions = {};
  if (typeof ac.clip_ratio === 'number') o.clipRatio = ac.clip_ratio;
  if ('clip_ratio_low' in ac) o.clipRatioLow = num(ac.clip_ratio_low);
  if ('clip_ratio_high' in ac) o.clipRatioHigh = num(ac.clip_ratio_high);
  if (typeof ac.clip_ratio_c === 'number') o.clipRatioC = ac.clip_ratio_c;
  return o;
}

/** Case-level config keys of the policy-loss cases: the aggregation mode and whether IS weights are passed. */
const POLICY_LOSS_CONFIG_KEYS = ['loss_agg_mode', 'rollout_is_weights'] as const;

/** The four standard inputs of every policy loss. */
function policyInputs(inputs: Record<string, unknown>) {
  const old = matrix(inputs.old_log_prob, 'old_log_prob');
  const lp = matrix(inputs.log_prob, 'log_prob');
  const adv = matrix(inputs.advantages, 'advantages');
  const mask = matrix(inputs.response_mask, 'response_mask');
  return { old: old.data, lp: lp.data, adv: adv.data, mask: mask.data, shape: old.shape };
}

function vanillaRun(inputs: Record<string, unknown>, config: Record<string, unknown>, c: GoldenCase) {
  const ac = (config.actor_config ?? {}) as ActorConfig;
  const { old, lp, adv, mask, shape } = policyInputs(inputs);
  const options: VanillaLossOptions = {
    ...clipOptionsFrom(ac),
    lossAggMode: config.loss_agg_mode as LossAggMode,
    agg: aggOptionsFrom(ac.global_batch_info as Record<string, unknown> | undefined),
  };
  if (config.rollout_is_weights)
    options.rolloutIsWeights = matrix(inputs.rollout_is_weights, 'rollout_is_weights').data;
  const r = policyLossVanilla(
    { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask },
    shape,
    options,
  );
  const out: Record<string, unknown> = {
    pg_loss: r.loss,
    pg_metrics: {
      'actor/pg_clipfrac': r.metrics.pg_clipfrac,
      'actor/ppo_kl': r.metrics.ppo_kl,
      'actor/pg_clipfrac_lower': r.metrics.pg_clipfrac_lower,
    },
  };
  if (c.outputs && typeof c.outputs === 'object' && 'derived_per_token_pg_losses' in c.outputs) {
    out.derived_per_token_pg_losses = nested(r.perTokenLoss, shape, mask);
  }
  return out;
}

/** Metrics dict with verl's `actor/` prefix (only the metrics the loss reports). */
function actorMetrics(m: Record<string, number | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(m)) if (v !== undefined) out[`actor/${k}`] = v;
  return out;
}

/** Common option mapping of the docs/verl-semantics.md §5.1 losses. */
function otherLossSetup(inputs: Record<string, unknown>, config: Record<string, unknown>) {
  const ac = (config.actor_config ?? {}) as ActorConfig;
  const io = policyInputs(inputs);
  const clip = clipOptionsFrom(ac);
  const common = {
    agg: aggOptionsFrom(ac.global_batch_info as Record<string, unknown> | undefined),
    rolloutIsWeights: config.rollout_is_weights
      ? matrix(inputs.rollout_is_weights, 'rollout_is_weights').data
      : null,
  };
  const lossAggMode = config.loss_agg_mode as LossAggMode;
  return { ac, io, clip, common, lossAggMode };
}

/** A nested list `[B][T][V]` as a row-major Float32Array. */
function tensor3(
  v: unknown,
  field: string,
): { data: Float32Array; shape: { rows: number; cols: number; vocab: number } } {
  if (!Array.isArray(v) || !Array.isArray(v[0]) || !Array.isArray(v[0][0])) {
    throw new LabError('PARSE_ERROR', `${field}: expected a [B][T][V] list`, { details: { field } });
  }
  const rows = v.length;
  const cols = (v[0] as unknown[]).length;
  const vocab = (v[0][0] as unknown[]).length;
  const data = Float32Array.from((v as number[][][]).flat(2));
  if (data.length !== rows * cols * vocab) {
    throw new LabError('PARSE_ERROR', `${field}: ragged [B][T][V] list`, { details: { field } });
  }
  return { data, shape: { rows, cols, vocab } };
}

/** `config.log_ratio` like "log_prob - old_log_prob", evaluated in float32 as torch does. */
function logRatioFrom(inputs: Record<string, unknown>, expr: unknown) {
  const [a, b] = String(expr)
    .split(' - ')
    .map((s) => s.trim());
  const x = matrix(inputs[a ?? ''], a ?? 'log_ratio');
  const y = matrix(inputs[b ?? ''], b ?? 'log_ratio');
  return { data: Float32Array.from(x.data, (v, i) => v - (y.data[i] as number)), shape: x.shape };
}

/** verl's `rollout_is`, `rollout_is_threshold` (default 2.0), `rollout_is_batch_normalize` as IS options. */
function isOptionsFrom(args: Record<string, unknown>): RolloutIsOptions {
  return {
    level: args.rollout_is as RolloutIsLevel,
    threshold: (args.rollout_is_threshold as number | undefined) ?? 2.0,
    normalization: args.rollout_is_batch_normalize ? 'batch-mean' : 'none',
  };
}

/** verl's `rollout_rs`, `rollout_rs_threshold` as rejection rules. */
function rejectionFrom(args: Record<string, unknown>): { rolloutRs: string; threshold: string | number } {
  return { rolloutRs: args.rollout_rs as string, threshold: args.rollout_rs_threshold as string | number };
}

export const lossAdapters: AdapterTable = {
  compute_policy_loss_clip_cov: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { ac, io, clip, common, lossAggMode } = otherLossSetup(inputs, config);
      const pl = (ac.policy_loss ?? {}) as Record<string, number>;
      const r = policyLossClipCov(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        {
          ...clip,
          ...common,
          lossAggMode,
          ...(pl.clip_cov_ratio !== undefined ? { clipCovRatio: pl.clip_cov_ratio } : {}),
          ...(pl.clip_cov_lb !== undefined ? { clipCovLb: pl.clip_cov_lb } : {}),
          ...(pl.clip_cov_ub !== undefined ? { clipCovUb: pl.clip_cov_ub } : {}),
        },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_kl_cov: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { ac, io, common, lossAggMode } = otherLossSetup(inputs, config);
      const pl = (ac.policy_loss ?? {}) as Record<string, number>;
      const r = policyLossKlCov(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        {
          ...common,
          lossAggMode,
          ...(pl.kl_cov_ratio !== undefined ? { klCovRatio: pl.kl_cov_ratio } : {}),
          ...(pl.ppo_kl_coef !== undefined ? { ppoKlCoef: pl.ppo_kl_coef } : {}),
        },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_bypass_mode: {
    configKeys: [...POLICY_LOSS_CONFIG_KEYS, 'policy_loss.rollout_correction'],
    run(inputs, config) {
      const { io, clip, common, lossAggMode } = otherLossSetup(inputs, config);
      const rc = (config['policy_loss.rollout_correction'] ?? {}) as Record<string, unknown>;
      const r = policyLossBypass(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        {
          lossType: (rc.loss_type ?? 'ppo_clip') as 'ppo_clip' | 'reinforce',
          lossAggMode,
          vanilla: { ...clip, agg: common.agg },
          is: rc.rollout_is ? isOptionsFrom(rc) : null,
          rejection: rc.rollout_rs ? rejectionFrom(rc) : null,
        },
      );
      return { pg_loss: r.loss, pg_metrics: { ...actorMetrics({ ...r.metrics }), ...r.rolloutMetrics } };
    },
  },
  'rollout_corr_helper.compute_rollout_correction_weights': {
    configKeys: ['log_ratio'],
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const lr = logRatioFrom(inputs, config.log_ratio);
      const mask = matrix(inputs.response_mask, 'response_mask').data;
      const r = rolloutIsWeights({ logRatio: lr.data, responseMask: mask }, lr.shape, isOptionsFrom(args));
      return { rollout_is_weights: nested(r.weights, lr.shape), metrics: r.metrics };
    },
  },
  'rollout_corr_helper.compute_rollout_rejection_mask': {
    configKeys: ['log_ratio'],
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const lr = logRatioFrom(inputs, config.log_ratio);
      const mask = matrix(inputs.response_mask, 'response_mask').data;
      const r = rolloutRejectionMask(
        { logRatio: lr.data, responseMask: mask },
        lr.shape,
        rejectionFrom(args),
      );
      return { modified_response_mask: nested(r.mask, lr.shape), metrics: r.metrics };
    },
  },
  'rollout_corr_helper.compute_rollout_correction_and_rejection_mask': {
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const old = matrix(inputs.old_log_prob, 'old_log_prob');
      const rollout = matrix(inputs.rollout_log_prob, 'rollout_log_prob').data;
      const mask = matrix(inputs.response_mask, 'response_mask').data;
      const r = rolloutCorrection(
        { oldLogProb: old.data, rolloutLogProb: rollout, responseMask: mask },
        old.shape,
        {
          is: args.rollout_is ? isOptionsFrom(args) : null,
          rejection: args.rollout_rs ? rejectionFrom(args) : null,
        },
      );
      return {
        rollout_is_weights: r.weights ? nested(r.weights, old.shape) : null,
        modified_response_mask: nested(r.mask, old.shape),
        metrics: r.metrics,
      };
    },
  },
  kl_penalty: {
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const lp = matrix(inputs.logprob, 'logprob');
      const ref = matrix(inputs.ref_logprob, 'ref_logprob');
      const kl = klPenalty({ logprob: lp.data, refLogprob: ref.data }, args.kl_penalty as KlPenaltyName, {
        shape: lp.shape,
      });
      return { kl: nested(kl, lp.shape) };
    },
  },
  'AdaptiveKLController / FixedKLController': {
    configKeys: ['kl_ctrl', 'updates(current_kl, n_steps)'],
    run(_inputs, config) {
      const k = config.kl_ctrl as { kl_coef: number; target_kl: number; horizon: number };
      const updates = config['updates(current_kl, n_steps)'] as [number, number][];
      const adaptive = createKlController({
        type: 'adaptive',
        klCoef: k.kl_coef,
        targetKl: k.target_kl,
        horizon: k.horizon,
      });
      const fixed = createKlController({ type: 'fixed', klCoef: k.kl_coef });
      const values: number[] = [];
      for (const [kl, n] of updates) {
        adaptive.update(kl, n);
        fixed.update(kl, n);
        values.push(adaptive.value);
      }
      return { adaptive_values_after_each_update: values, fixed_value_after_update: fixed.value };
    },
  },
  'entropy_from_logits / compute_entropy_loss': {
    run(inputs) {
      const logits = tensor3(inputs.logits, 'logits');
      const mask = matrix(inputs.response_mask, 'response_mask').data;
      const out: Record<string, unknown> = {
        entropy_from_logits: nested(entropyFromLogits(logits.data, logits.shape), logits.shape),
      };
      for (const mode of LOSS_AGG_MODES) {
        out[`compute_entropy_loss_${mode}`] = computeEntropyLoss(
          { logits: logits.data, responseMask: mask },
          logits.shape,
          mode,
        );
      }
      return out;
    },
  },
  compute_value_loss: {
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const vpreds = matrix(inputs.vpreds, 'vpreds');
      const r = valueLoss(
        {
          vpreds: vpreds.data,
          returns: matrix(inputs.returns, 'returns').data,
          values: matrix(inputs.values, 'values').data,
          responseMask: matrix(inputs.response_mask, 'response_mask').data,
        },
        vpreds.shape,
        args.cliprange_value as number,
        args.loss_agg_mode as LossAggMode,
      );
      return { vf_loss: r.loss, vf_clipfrac: r.clipfrac };
    },
  },
  compute_policy_loss_gspo: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { io, clip, common } = otherLossSetup(inputs, config);
      const r = policyLossGspo(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        { ...clip, ...common },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_sapo: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { ac, io, common } = otherLossSetup(inputs, config);
      const r = policyLossSapo(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        {
          ...common,
          ...(typeof ac.tau_pos === 'number' ? { tauPos: ac.tau_pos } : {}),
          ...(typeof ac.tau_neg === 'number' ? { tauNeg: ac.tau_neg } : {}),
        },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_cispo: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { io, clip, common, lossAggMode } = otherLossSetup(inputs, config);
      const r = policyLossCispo(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        {
          ...clip,
          ...common,
          lossAggMode,
        },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_geo_mean: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { io, clip, common } = otherLossSetup(inputs, config);
      const r = policyLossGeoMean(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        {
          ...clip,
          rolloutIsWeights: common.rolloutIsWeights,
        },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_gpg: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { io, common, lossAggMode } = otherLossSetup(inputs, config);
      const r = policyLossGpg(
        { oldLogProb: io.old, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        { ...common, lossAggMode },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  compute_policy_loss_reinforce: {
    configKeys: POLICY_LOSS_CONFIG_KEYS,
    run(inputs, config) {
      const { io, common, lossAggMode } = otherLossSetup(inputs, config);
      const rollout = matrix(inputs.rollout_log_prob, 'rollout_log_prob').data;
      const r = policyLossReinforce(
        { rolloutLogProb: rollout, logProb: io.lp, advantages: io.adv, responseMask: io.mask },
        io.shape,
        { ...common, lossAggMode },
      );
      return { pg_loss: r.loss, pg_metrics: actorMetrics({ ...r.metrics }) };
    },
  },
  agg_loss: {
    maskArg: 'loss_mask',
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const x = matrix(inputs.loss_mat, 'loss_mat');
      const m = matrix(inputs.loss_mask, 'loss_mask');
      return {
        loss: aggLoss(
          { lossMat: x.data, lossMask: m.data },
          x.shape,
          args.loss_agg_mode as LossAggMode,
          aggOptionsFrom(args),
        ),
      };
    },
  },
  compute_policy_loss_vanilla: { configKeys: POLICY_LOSS_CONFIG_KEYS, run: vanillaRun },
  'compute_policy_loss (deprecated)': {
    run(inputs, config) {
      const args = (config.args ?? {}) as Record<string, unknown>;
      const { old, lp, adv, mask, shape } = policyInputs(inputs);
      const options: VanillaLossOptions = {
        clipRatio: args.cliprange as number,
        clipRatioLow: num(args.cliprange_low),
        clipRatioHigh: num(args.cliprange_high),
        lossAggMode: (args.loss_agg_mode ?? 'token-mean') as LossAggMode,
      };
      if (typeof args.clip_ratio_c === 'number') options.clipRatioC = args.clip_ratio_c;
      const r = policyLossVanilla(
        { oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask },
        shape,
        options,
      );
      return {
        pg_loss: r.loss,
        pg_clipfrac: r.metrics.pg_clipfrac,
        ppo_kl: r.metrics.ppo_kl,
        pg_clipfrac_lower: r.metrics.pg_clipfrac_lower,
      };
    },
  },
};
