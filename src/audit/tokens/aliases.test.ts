/**
 * The framework aliases of the token audit, each recomputed here the way the cited code computes it
 * (torch ops spelled out in plain loops) on a small dump with two sequences, one with a prompt and
 * a tool-output gap (mask 0) that must not count:
 *  - NeMo-RL nemo_rl/algorithms/loss/loss_functions.py ClippedPGLossFn.__call__ (commit 7ea279ab):
 *    `lp_error = abs(generation_logprobs - prev_logprobs)`, `mult_prob_error = masked_mean(exp(lp_error * mask), mask)`;
 *    `gen_kl_error = masked_mean(calculate_kl(logprobs=generation, logprobs_reference=prev, kl_type='k3'))`
 *    with nemo_rl/algorithms/utils.py `logr = logprobs_reference - logprobs; kl = exp(logr) - 1 - logr`;
 *    `policy_kl_error` the same with the roles swapped; grpo.py compute_and_apply_seq_logprob_error_masking:
 *    per-sequence `(exp(lp_error*mask)*mask).sum(-1) / mask.sum(-1).clamp(min=1)`, then max/mean/min.
 *  - prime-rl src/prime_rl/trainer/rl/loss.py compute_importance_ratio_and_mismatch_kl:
 *    `log_importance_ratio = trainer - inference; mismatch_kl = exp(lir) - lir - 1`.
 *  - TRL trl/trainer/grpo_trainer.py (commit f2cd5771): `delta = abs(old - sampling)[mask]`, mean and
 *    max; default `vllm_importance_sampling_mode="sequence_mask"`, `clip_max=3.0`: per sequence
 *    `exp(sum(old - sampling))`, set to 0 above 3, then min/mean/max over sequences.
 *  - OpenRLHF openrlhf/models/loss.py PolicyLoss.forward: `vllm_kl = masked_mean(rollout_log_probs - old_log_probs, action_mask, dim=None)`.
 *  - slime slime/backends/megatron_utils/loss.py: `sum_of_sample_mean((old - rollout).abs())`, here per sample mean then averaged.
 *  - SkyRL skyrl/train/trainer.py: `(rollout - action)[loss_mask > 0].abs()` mean, std (unbiased), max, min.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runTokenAudit } from './tokenAudit.js';

const SEQS = [
  // prompt (mask 0), two response tokens, tool output (mask 0), two response tokens
  {
    old: [-9, -0.2, -1.3, -9, -0.05, -2.5],
    roll: [0, -0.25, -1.1, 0, -0.05, -2.0],
    mask: [0, 1, 1, 0, 1, 1],
  },
  { old: [-9, -0.7], roll: [0, -0.69], mask: [0, 1] },
];

function dump(): string {
  const dir = mkdtempSync(join(tmpdir(), 'labs-alias-'));
  const lines = SEQS.map((s) =>
    JSON.stringify({
      step: 1,
      task: 't',
      trainer_logprobs: s.old,
      rollout_logprobs: s.roll,
      loss_mask: s.mask,
    }),
  );
  writeFileSync(join(dir, 'd.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}

const near = (a: unknown, b: number) => expect(a as number).toBeCloseTo(b, 12);

describe('framework aliases, each as its code computes it', () => {
  it('NeMo-RL, prime-rl, TRL, OpenRLHF, slime, SkyRL', async () => {
    const r = await runTokenAudit(dump(), { preset: 'generic-tokens' });
    const m = r.metrics;
    const tok: { prev: number; gen: number; seq: number }[] = [];
    SEQS.forEach((s, b) => {
      s.mask.forEach((k, t) => {
        if (k) tok.push({ prev: s.old[t] as number, gen: s.roll[t] as number, seq: b });
      });
    });
    const n = tok.length;
    const mean = (f: (x: (typeof tok)[number]) => number) => tok.reduce((a, x) => a + f(x), 0) / n;
    // NeMo-RL's masked_mean: Σ(values·mask) / (Σ mask + 1e-8)
    const nemoMean = (f: (x: (typeof tok)[number]) => number) =>
      tok.reduce((a, x) => a + f(x), 0) / (n + 1e-8);
    near(
      m['nemo_rl/token_mult_prob_error'],
      nemoMean((x) => Math.exp(Math.abs(x.gen - x.prev))),
    );
    const k3 = (logr: number) => Math.exp(logr) - 1 - logr;
    near(
      m['nemo_rl/gen_kl_error'],
      nemoMean((x) => k3(x.prev - x.gen)),
    );
    near(
      m['nemo_rl/policy_kl_error'],
      nemoMean((x) => k3(x.gen - x.prev)),
    );
    const seqMult = SEQS.map((_, b) => {
      const ts = tok.filter((x) => x.seq === b);
      return ts.reduce((a, x) => a + Math.exp(Math.abs(x.gen - x.prev)), 0) / Math.max(ts.length, 1);
    });
    near(m['nemo_rl/max_seq_mult_prob_error'], Math.max(...seqMult));
    near(m['nemo_rl/min_seq_mult_prob_error'], Math.min(...seqMult));
    near(m['nemo_rl/mean_seq_mult_prob_error'], seqMult.reduce((a, v) => a + v, 0) / seqMult.length);
    // prime-rl
    const mk = tok.map((x) => Math.exp(x.prev - x.gen) - (x.prev - x.gen) - 1).sort((a, b) => a - b);
    near(m['prime_rl/mismatch_kl/all/mean'], mk.reduce((a, v) => a + v, 0) / n);
    near(m['prime_rl/mismatch_kl/all/median'], mk[Math.floor((n - 1) / 2)] as number);
    near(m['prime_rl/mismatch_kl/all/min'], mk[0] as number);
    near(m['prime_rl/mismatch_kl/all/max'], mk[n - 1] as number);
    const mkMean = mk.reduce((a, v) => a + v, 0) / n;
    near(
      m['prime_rl/mismatch_kl/all/std'],
      Math.sqrt(mk.reduce((a, v) => a + (v - mkMean) ** 2, 0) / (n - 1)),
    );
    // TRL
    near(
      m['trl/sampling/sampling_logp_difference/mean'],
      mean((x) => Math.abs(x.prev - x.gen)),
    );
    near(
      m['trl/sampling/sampling_logp_difference/max'],
      Math.max(...tok.map((x) => Math.abs(x.prev - x.gen))),
    );
    const seqIs = SEQS.map((_, b) => {
      const v = Math.exp(tok.filter((x) => x.seq === b).reduce((a, x) => a + (x.prev - x.gen), 0));
      return v > 3 ? 0 : v;
    });
    near(m['trl/sampling/importance_sampling_ratio/min'], Math.min(...seqIs));
    near(
      m['trl/sampling/importance_sampling_ratio/mean'],
      (seqIs[0] as number) / 2 + (seqIs[1] as number) / 2,
    );
    near(m['trl/sampling/importance_sampling_ratio/max'], Math.max(...seqIs));
    // OpenRLHF
    near(
      m['openrlhf/vllm_kl'],
      mean((x) => x.gen - x.prev),
    );
    // slime: per-sample mean |old − rollout|, averaged over samples
    const perSample = SEQS.map((_, b) => {
      const ts = tok.filter((x) => x.seq === b);
      return ts.reduce((a, x) => a + Math.abs(x.prev - x.gen), 0) / ts.length;
    });
    near(
      m['slime/train/train_rollout_logprob_abs_diff'],
      (perSample[0] as number) / 2 + (perSample[1] as number) / 2,
    );
    // SkyRL
    const abs = tok.map((x) => Math.abs(x.gen - x.prev));
    const absMean = abs.reduce((a, v) => a + v, 0) / n;
    near(m['skyrl/policy/rollout_train_logprobs_abs_diff_mean'], absMean);
    near(
      m['skyrl/policy/rollout_train_logprobs_abs_diff_std'],
      Math.sqrt(abs.reduce((a, v) => a + (v - absMean) ** 2, 0) / (n - 1)),
    );
    near(m['skyrl/policy/rollout_train_logprobs_abs_diff_max'], Math.max(...abs));
    near(m['skyrl/policy/rollout_train_logprobs_abs_diff_min'], Math.min(...abs));
    // the gap before the second round is a new round
    expect(r.tables.mismatch_by_round?.map((x) => x.tokens)).toEqual([3, 2]);
  });
});
