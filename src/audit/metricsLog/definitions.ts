/**
 * The logged metrics the audit can recompute from a dump, under each framework's own names, each
 * with the framework's own definition (read from its code) and the bug signatures known for it
 * (/work/shared/formats.md "Known metric bug signatures"; docs/audit.md "--metrics").
 *
 * verl (verl/trainer/ppo/metric_utils.py `compute_data_metrics`, commit b178a3cd):
 *  - `critic/score/mean` = mean of the sequence scores (token_level_scores.sum(-1), the dump's
 *    `score`) over the non-aborted samples (response length > 0; all rows when lengths are unknown);
 *  - `response_length/mean` = mean response token count (response_mask.sum(-1));
 *  - `response_length/clip_ratio` = mean(response_length == max_response_length), the padded width
 *    `responses.shape[-1]` = `data.max_response_length` (`--max-response-length`); from a
 *    `truncated` column when the dump has one.
 * TRL (trl/trainer/grpo_trainer.py, commit f2cd5771, `_generate_and_score_completions`):
 *  - `reward` = nanmean(rewards), `reward_std` = nanstd(rewards) (Bessel-corrected, trl/trainer/utils.py
 *    `nanstd`), rewards = Σ_i w_i·reward_i with NaN skipped (the audit's TRL reward);
 *  - `frac_reward_zero_std` = mean over samples of isclose(std_rewards, 0) where std_rewards is the
 *    group's nanstd for scale_rewards "group"/"none" and the whole batch's for "batch" (so 0 or 1);
 *  - `completions/mean_length` = mean completion token count; `completions/clipped_ratio` = share of
 *    completions whose last token is not EOS/pad; from a `truncated` column, or approximated by
 *    length >= `--max-completion-length` (TRL's max_completion_length).
 *  TRL metrics may carry the Trainer's `train/` prefix in W&B and TensorBoard; it is ignored.
 * prime-rl (src/prime_rl/orchestrator/metrics.py `solve_rates`, commit 559b4477): per group of rollouts
 *  of one example, `solved_all` = share of groups whose rewards all == 1.0, `solved_none` = share of
 *  groups whose reward sum == 0 (older versions: `solve_all`, `solve_none`). Logged under prefixes
 *  (`train/agg/all/<agent>/solved_all`); matched by the last path segment.
 */
import type { DumpRow } from './dumpRows.js';

export type Framework = 'verl' | 'trl' | 'prime-rl';

/** Settings the dump lacks, named as the frameworks name them. */
export interface RunSettings {
  /** verl `data.max_response_length`. */
  maxResponseLength: number | null;
  /** TRL `max_completion_length`. */
  maxCompletionLength: number | null;
  /** TRL `scale_rewards`. */
  scaleRewards: 'group' | 'batch' | 'none';
}

export interface Recomputation {
  /** Null: not recomputable from this dump (then `why`). */
  value: number | null;
  why?: string;
  /** Known buggy definitions: when the logged value matches one of these and not `value`, its signature. */
  alternatives?: { value: number; signature: string }[];
  /** A signature that applies whatever the logged value: the definition itself misleads on this data. */
  caveat?: string;
}

export interface MetricDef {
  /** The framework's metric name (as in its code, without prefixes). */
  name: string;
  framework: Framework;
  /** Clip ratios: a log that is constant 0 or 1 while the dump differs is a known bug signature. */
  clipRatio?: boolean;
  compute(rows: readonly DumpRow[], s: RunSettings): Recomputation;
}

export const SIGNATURES = {
  clipConstant:
    'clip ratio constant while the dump shows otherwise (verl #7823 / PR #7821: never 0 on the V1 trainer, 0 when max_model_len is the cap; slime PR #203: always zero; ms-swift #4950: completions/clipped_ratio stuck at 1.0)',
  trlBatchZeroStd:
    'frac_reward_zero_std is batch-level (TRL scale_rewards="batch": one std for the whole batch, so 0 or 1; TRL PR #6365 / PR #7068 reviews)',
  primeNonBinary:
    'solve rates on non-binary rewards (prime-rl #3566: solved_all counts only rewards == 1.0, solved_none groups whose rewards sum to 0)',
} as const;

const NO_TOKENS =
  'the dump has no token lengths (map --col-action-tokens or --col-mask, or log a response_length reward extra)';

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** torch.nanmean over the finite-or-NaN rewards. */
function nanmean(xs: readonly number[]): number | null {
  return mean(xs.filter((x) => !Number.isNaN(x)));
}

/** TRL's nanstd: Bessel-corrected std of the non-NaN values (NaN below 2 values). */
export function nanstd(xs: readonly number[]): number {
  const v = xs.filter((x) => !Number.isNaN(x));
  if (v.length < 2) return Number.NaN;
  const m = v.reduce((a, b) => a + b, 0) / v.length;
  return Math.sqrt(v.reduce((a, b) => a + (b - m) ** 2, 0) / (v.length - 1));
}

/** torch.isclose(x, 0) with its defaults (atol 1e-8, rtol 1e-5 of 0). NaN is not close. */
function isZero(x: number): boolean {
  return Math.abs(x) <= 1e-8;
}

function tokenLengths(rows: readonly DumpRow[]): number[] | null {
  const t = rows.map((r) => r.tokens);
  return t.every((x): x is number => x !== null) ? t : null;
}

function groupsOf(rows: readonly DumpRow[]): DumpRow[][] {
  const m = new Map<string, DumpRow[]>();
  for (const r of rows) {
    const g = m.get(r.group);
    if (g) g.push(r);
    else m.set(r.group, [r]);
  }
  return [...m.values()];
}

function clipRatio(rows: readonly DumpRow[], max: number | null, flag: string): Recomputation {
  const trunc = rows.map((r) => r.truncated);
  if (trunc.every((x): x is boolean => x !== null))
    return { value: trunc.filter(Boolean).length / rows.length };
  const t = tokenLengths(rows);
  if (t === null) return { value: null, why: NO_TOKENS };
  if (max === null) return { value: null, why: `needs ${flag} (the run's setting; the dump lacks it)` };
  return { value: t.filter((x) => x >= max).length / t.length };
}

function nonBinary(rows: readonly DumpRow[]): boolean {
  return rows.some((r) => r.reward !== 0 && r.reward !== 1);
}

function solveRate(kind: 'all' | 'none'): MetricDef['compute'] {
  return (rows) => {
    const groups = groupsOf(rows);
    const hit = groups.filter((g) =>
      kind === 'all' ? g.every((r) => r.reward === 1) : g.reduce((a, r) => a + r.reward, 0) === 0,
    ).length;
    return {
      value: groups.length === 0 ? null : hit / groups.length,
      ...(nonBinary(rows) ? { caveat: SIGNATURES.primeNonBinary } : {}),
    };
  };
}

export const METRIC_DEFS: readonly MetricDef[] = [
  {
    name: 'critic/score/mean',
    framework: 'verl',
    compute(rows) {
      const t = tokenLengths(rows);
      const kept = t === null ? rows : rows.filter((r) => (r.tokens as number) > 0);
      return { value: mean(kept.map((r) => r.reward)) };
    },
  },
  {
    name: 'response_length/mean',
    framework: 'verl',
    compute(rows) {
      const t = tokenLengths(rows);
      return t === null ? { value: null, why: NO_TOKENS } : { value: mean(t) };
    },
  },
  {
    name: 'response_length/clip_ratio',
    framework: 'verl',
    clipRatio: true,
    compute: (rows, s) =>
      clipRatio(rows, s.maxResponseLength, '--max-response-length (verl data.max_response_length)'),
  },
  { name: 'reward', framework: 'trl', compute: (rows) => ({ value: nanmean(rows.map((r) => r.reward)) }) },
  {
    name: 'reward_std',
    framework: 'trl',
    compute(rows) {
      const v = nanstd(rows.map((r) => r.reward));
      return Number.isNaN(v) ? { value: null, why: 'fewer than 2 scored samples' } : { value: v };
    },
  },
  {
    name: 'frac_reward_zero_std',
    framework: 'trl',
    compute(rows, s) {
      const groups = groupsOf(rows);
      let zero = 0;
      for (const g of groups) {
        if (g.length > 1 && isZero(nanstd(g.map((r) => r.reward)))) zero += g.length;
        else if (g.length === 1) zero += 1; // TRL: num_generations == 1 → std_rewards = 0
      }
      const perGroup = zero / rows.length;
      const batch = rows.length > 1 && isZero(nanstd(rows.map((r) => r.reward))) ? 1 : 0;
      if (s.scaleRewards === 'batch') {
        return {
          value: batch,
          caveat: `${SIGNATURES.trlBatchZeroStd}; the per-group fraction is ${perGroup.toFixed(4)}`,
        };
      }
      return { value: perGroup, alternatives: [{ value: batch, signature: SIGNATURES.trlBatchZeroStd }] };
    },
  },
  {
    name: 'completions/mean_length',
    framework: 'trl',
    compute(rows) {
      const t = tokenLengths(rows);
      return t === null ? { value: null, why: NO_TOKENS } : { value: mean(t) };
    },
  },
  {
    name: 'completions/clipped_ratio',
    framework: 'trl',
    clipRatio: true,
    compute: (rows, s) =>
      clipRatio(rows, s.maxCompletionLength, '--max-completion-length (TRL max_completion_length)'),
  },
  { name: 'solved_all', framework: 'prime-rl', compute: solveRate('all') },
  { name: 'solved_none', framework: 'prime-rl', compute: solveRate('none') },
];

const PRIME_ALIASES: Record<string, string> = {
  solve_all: 'solved_all',
  solved_all: 'solved_all',
  solve_none: 'solved_none',
  solved_none: 'solved_none',
};

/** The definition a logged metric name refers to, or null. */
export function metricDefOf(logged: string): MetricDef | null {
  const bare = logged.startsWith('train/') ? logged.slice('train/'.length) : logged;
  const exact = METRIC_DEFS.find((d) => d.framework !== 'prime-rl' && d.name === bare);
  if (exact) return exact;
  const last = logged.slice(logged.lastIndexOf('/') + 1);
  const prime = PRIME_ALIASES[last];
  return prime ? (METRIC_DEFS.find((d) => d.name === prime) ?? null) : null;
}
