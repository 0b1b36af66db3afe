/**
 * Where the loss puts its weight: each token's aggregation weight (∂agg/∂loss_tok of verl's
 * `agg_loss`) accumulated by transcript length ({@link accumulateWeights}, the length bias of a
 * `loss_agg_mode`) and the per-trajectory accounting of one group ({@link groupAccounting}).
 */
import type { ArmEpisode } from './armEpisode.js';

/** Accumulated per-token weight by transcript length bucket (all updates of an arm). */
export interface WeightBucket {
  lo: number;
  hi: number;
  trajectories: number;
  failedTrajectories: number;
  tokens: number;
  /** Σ normalised per-token weight over loss tokens in this bucket. */
  weightSum: number;
  /** Σ raw aggregation weight ∂agg/∂loss_tok (the loss scale each mode applies). */
  rawWeightSum: number;
  failedTokens: number;
  failedWeightSum: number;
}

const WEIGHT_BUCKET_WIDTH = 8;

/**
 * Adds this batch's normalised per-token weights to the length buckets; returns the failed
 * long/short per-token weight ratio of the batch (`UpdateRecord.failedLongShortWeightRatio`).
 */
export function accumulateWeights(
  buckets: WeightBucket[],
  rows: readonly ArmEpisode[],
  weights: Float64Array,
  mask: Float32Array,
  cols: number,
  lossTokens: number,
): number {
  let total = 0;
  for (let i = 0; i < weights.length; i++) total += weights[i] as number;
  const norm = lossTokens / total; // mean weight over loss tokens -> 1
  const failed: { len: number; w: number }[] = [];
  rows.forEach((e, b) => {
    const len = e.tokens.length;
    let n = 0;
    let raw = 0;
    for (let t = 0; t < cols; t++) {
      n += mask[b * cols + t] as number;
      raw += weights[b * cols + t] as number;
    }
    const w = raw * norm;
    const k = Math.floor((len - 1) / WEIGHT_BUCKET_WIDTH);
    while (buckets.length <= k) {
      const lo = buckets.length * WEIGHT_BUCKET_WIDTH + 1;
      buckets.push({
        lo,
        hi: lo + WEIGHT_BUCKET_WIDTH - 1,
        trajectories: 0,
        failedTrajectories: 0,
        tokens: 0,
        weightSum: 0,
        rawWeightSum: 0,
        failedTokens: 0,
        failedWeightSum: 0,
      });
    }
    const bucket = buckets[k] as WeightBucket;
    bucket.trajectories++;
    bucket.tokens += n;
    bucket.weightSum += w;
    bucket.rawWeightSum += raw;
    if (e.status !== 'success') {
      bucket.failedTrajectories++;
      bucket.failedTokens += n;
      bucket.failedWeightSum += w;
      if (n > 0) failed.push({ len, w: w / n });
    }
  });
  if (failed.length < 2) return Number.NaN;
  const lens = failed.map((f) => f.len).sort((a, b) => a - b);
  const median = lens[Math.floor((lens.length - 1) / 2)] as number;
  const long = failed.filter((f) => f.len > median);
  const short = failed.filter((f) => f.len <= median);
  if (long.length === 0 || short.length === 0) return Number.NaN;
  const mean = (xs: { w: number }[]) => xs.reduce((s, x) => s + x.w, 0) / xs.length;
  return mean(long) / mean(short);
}

/** The per-trajectory accounting of the first group of a batch: action/env/loss tokens, advantage, weight. */
export function groupAccounting(
  rows: readonly ArmEpisode[],
  index: readonly number[],
  scores: readonly number[],
  adv: Float32Array,
  mask: Float32Array,
  weights: Float64Array,
  cols: number,
): Record<string, number | string>[] {
  const first = index[0];
  const out: Record<string, number | string>[] = [];
  rows.forEach((e, b) => {
    if (index[b] !== first) return;
    let lossTokens = 0;
    let weight = 0;
    let a = 0;
    for (let t = 0; t < cols; t++) {
      const m = mask[b * cols + t] as number;
      lossTokens += m;
      weight += weights[b * cols + t] as number;
      if (m !== 0) a = adv[b * cols + t] as number;
    }
    out.push({
      status: e.status,
      length: e.tokens.length,
      action_tokens: e.modelTokens,
      env_tokens: e.envTokens,
      loss_tokens: lossTokens,
      score: scores[b] as number,
      advantage: a,
      weight_per_token: lossTokens > 0 ? weight / lossTokens : 0,
      total_weight: weight,
    });
  });
  return out;
}
