/**
 * prime-rl's per-environment token metrics, recomputed from its token export and compared with its
 * metrics log: `entropy/{scope}/mean` and `mismatch_kl/{scope}/mean`, scope `all` or an env name
 * (older logs: `entropy/mean`, `mismatch_kl/mean` for all).
 *
 * What prime-rl logs (src/prime_rl/trainer/rl/train.py at 559b4477, since PR #2478 "add per-env
 * trainer metrics"): per micro-batch, `entropy[loss_mask]` is appended to `entropy/all` and its
 * tokens of each env to `entropy/{env}`; `mismatch_kl` likewise under the mismatch mask
 * (`loss_mask`, narrowed to tokens with `rl_weights != 0` or `ref_kl_weights != 0` when either
 * stream is present). `Tensors.compute_stats` concatenates every key's tokens over micro-steps and
 * ranks and logs `{key}/mean`: each value is a **token mean**, the `/all` one over every env's tokens.
 *
 * The known bug signature (the PR's review: an `/all` value that is a mean of per-env sample means
 * beside per-env token means): the logged `/all` mean disagrees with the token mean over all envs and
 * agrees with the mean of the per-env means or with the mean of the per-sequence means. Then the
 * `/all` curve is not comparable with the per-env curves (an env with few long sequences weighs as
 * much as one with many short ones).
 *
 * The token export (src/prime_rl/trainer/rl/token_export.py, schema_version 1) holds one line per
 * sequence with any loss-mask token, with per-token `loss_mask`, `entropy`, `mismatch_kl`,
 * `rl_weights`, `ref_kl_weights` and the sequence's `env_name`: every token the trainer's metrics
 * saw. Non-finite values are written as null; a null under the mask is not counted and a note says so.
 */
import type { ComparisonRow } from './compare.js';
import { agrees } from './compare.js';
import type { ScalarLog } from './types.js';

export const ENV_MEAN_SIGNATURE =
  'mean of per-env (or per-sample) means reported as a token mean (prime-rl PR #2478: the /all value weighs each env or sequence equally, while the per-env values are token means)';

/** The two token metrics prime-rl logs per env. */
export const ENV_TOKEN_METRICS = ['entropy', 'mismatch_kl'] as const;
export type EnvTokenMetric = (typeof ENV_TOKEN_METRICS)[number];

/** One exported sequence (one line of `rank_R.jsonl`). */
export interface ExportedSequence {
  step: number;
  env: string;
  lossMask: readonly boolean[];
  entropy: readonly (number | null)[] | null;
  mismatchKl: readonly (number | null)[] | null;
  rlWeights: readonly (number | null)[] | null;
  refKlWeights: readonly (number | null)[] | null;
}

interface Sums {
  tokenSum: number;
  tokens: number;
  /** Sum over sequences with >= 1 counted token of their own token mean, and their number. */
  seqMeanSum: number;
  seqs: number;
}

const zero = (): Sums => ({ tokenSum: 0, tokens: 0, seqMeanSum: 0, seqs: 0 });

/** One recomputed value: per (step, metric, scope). */
export interface EnvMeanRow {
  step: number;
  metric: EnvTokenMetric;
  /** `all` or the env name. */
  scope: string;
  tokenMean: number | null;
  /** `all` only: the mean of the per-env token means, and of the per-sequence means. */
  meanOfEnvMeans: number | null;
  meanOfSequenceMeans: number | null;
  tokens: number;
}

/** Accumulates the export's sequences (in any order) into per-(step, metric, env) sums. */
export class EnvMeanAccumulator {
  /** `${step}\u0000${metric}` → env → sums. */
  private readonly sums = new Map<string, Map<string, Sums>>();
  /** Tokens under the mask whose value was null (non-finite), per metric. */
  readonly nullTokens: Record<EnvTokenMetric, number> = { entropy: 0, mismatch_kl: 0 };

  add(seq: ExportedSequence): void {
    const n = seq.lossMask.length;
    const weighted = seq.rlWeights !== null || seq.refKlWeights !== null;
    for (const metric of ENV_TOKEN_METRICS) {
      const values = metric === 'entropy' ? seq.entropy : seq.mismatchKl;
      if (values === null) continue; // mismatch_kl is null when no token had sampling log-probs
      let sum = 0;
      let count = 0;
      for (let t = 0; t < n; t++) {
        if (!seq.lossMask[t]) continue;
        if (metric === 'mismatch_kl' && weighted) {
          const rl = seq.rlWeights === null ? 1 : (seq.rlWeights[t] ?? 0);
          const ref = seq.refKlWeights === null ? 0 : (seq.refKlWeights[t] ?? 0);
          if (rl === 0 && ref === 0) continue;
        }
        const v = values[t];
        if (v === null || v === undefined) {
          this.nullTokens[metric] += 1;
          continue;
        }
        sum += v;
        count += 1;
      }
      if (count === 0) continue;
      const key = `${seq.step}\u0000${metric}`;
      const byEnv = this.sums.get(key) ?? new Map<string, Sums>();
      this.sums.set(key, byEnv);
      const s = byEnv.get(seq.env) ?? zero();
      byEnv.set(seq.env, s);
      s.tokenSum += sum;
      s.tokens += count;
      s.seqMeanSum += sum / count;
      s.seqs += 1;
    }
  }

  /** Per (step, metric): the `all` row and one per env, sorted by step, metric, scope (`all` first). */
  rows(): EnvMeanRow[] {
    const out: EnvMeanRow[] = [];
    for (const [key, byEnv] of this.sums) {
      const [stepText, metric] = key.split('\u0000') as [string, EnvTokenMetric];
      const step = Number(stepText);
      const all = zero();
      let envMeanSum = 0;
      for (const s of byEnv.values()) {
        all.tokenSum += s.tokenSum;
        all.tokens += s.tokens;
        all.seqMeanSum += s.seqMeanSum;
        all.seqs += s.seqs;
        envMeanSum += s.tokenSum / s.tokens;
      }
      out.push({
        step,
        metric,
        scope: 'all',
        tokenMean: all.tokenSum / all.tokens,
        meanOfEnvMeans: envMeanSum / byEnv.size,
        meanOfSequenceMeans: all.seqMeanSum / all.seqs,
        tokens: all.tokens,
      });
      for (const [env, s] of byEnv) {
        out.push({
          step,
          metric,
          scope: env,
          tokenMean: s.tokenSum / s.tokens,
          meanOfEnvMeans: null,
          meanOfSequenceMeans: null,
          tokens: s.tokens,
        });
      }
    }
    const rank = (r: EnvMeanRow) => (r.scope === 'all' ? '' : r.scope);
    return out.sort(
      (a, b) =>
        a.step - b.step ||
        (a.metric < b.metric ? -1 : a.metric > b.metric ? 1 : 0) ||
        (rank(a) < rank(b) ? -1 : rank(a) > rank(b) ? 1 : 0),
    );
  }
}

/** The logged names of a (metric, scope): `entropy/all/mean` (and the older `entropy/mean` for all). */
function loggedNames(metric: string, scope: string): string[] {
  return scope === 'all' ? [`${metric}/all/mean`, `${metric}/mean`] : [`${metric}/${scope}/mean`];
}

/**
 * One comparison row per recomputed (step, metric, scope) (`metric` as logged, e.g.
 * `entropy/all/mean`); `logged` is null when the log lacks it. The `/all` row carries
 * {@link ENV_MEAN_SIGNATURE} when the logged value disagrees with the token mean and agrees with the
 * mean of per-env means or of per-sequence means (and those differ from the token mean, so the
 * match tells the definitions apart). Tolerance: compare.ts `agrees` (float32 logs).
 */
export function compareEnvMeans(rows: readonly EnvMeanRow[], log: ScalarLog): ComparisonRow[] {
  const logged = new Map<string, number>();
  for (const r of log.rows) logged.set(`${r.step}\u0000${r.metric}`, r.value);
  return rows.map((r) => {
    const names = loggedNames(r.metric, r.scope);
    const name = names.find((m) => logged.has(`${r.step}\u0000${m}`)) ?? (names[0] as string);
    const value = logged.get(`${r.step}\u0000${name}`) ?? null;
    const recomputed = r.tokenMean;
    const ok = value === null || recomputed === null ? null : agrees(value, recomputed);
    let signature: string | null = null;
    if (ok === false && value !== null && r.scope === 'all' && recomputed !== null) {
      const alt = [r.meanOfEnvMeans, r.meanOfSequenceMeans].filter(
        (x): x is number => x !== null && !agrees(x, recomputed),
      );
      if (alt.some((x) => agrees(value, x))) signature = ENV_MEAN_SIGNATURE;
    }
    return {
      step: r.step,
      metric: name,
      framework: 'prime-rl',
      logged: value,
      recomputed,
      agrees: ok,
      signature,
      note: null,
    };
  });
}
