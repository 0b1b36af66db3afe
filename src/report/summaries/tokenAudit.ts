/**
 * Terminal summary of a token-level `labs audit` record (config.kind 'tokens'): the overall
 * mismatch, its drift over steps, where it sits by rollout probability, per task, what each
 * `--what-if` correction would mask, and the frameworks' own names for the headline numbers.
 */
import { type Cell, formatNumber, table } from '../../experiments/text.js';
import type { JsonValue, RunRecord } from '../../experiments/types.js';

const MAX_STEPS_SHOWN = 12;

const num = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : Number.NaN);
const cell = (v: JsonValue | undefined): Cell => (typeof v === 'number' ? v : null);
const pct = (v: JsonValue | undefined) => {
  const x = num(v);
  return Number.isFinite(x) ? `${(100 * x).toPrecision(3)}%` : '-';
};

function spread<T>(rows: readonly T[], max: number): T[] {
  if (rows.length <= max) return [...rows];
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(rows[Math.round((i * (rows.length - 1)) / (max - 1))] as T);
  return out;
}

/** One sentence on the drift: first vs last step's k3 KL and the step with the largest one. */
export function driftLine(steps: readonly Record<string, JsonValue>[]): string {
  if (steps.length < 2) return 'drift: one step only';
  const k = (r: Record<string, JsonValue>) => num(r['rollout_corr/k3_kl']);
  const first = steps[0] as Record<string, JsonValue>;
  const last = steps[steps.length - 1] as Record<string, JsonValue>;
  const worst = steps.reduce((a, b) => (k(b) > k(a) ? b : a));
  const ratio = k(last) / k(first);
  const trend = !Number.isFinite(ratio)
    ? 'changed'
    : ratio > 1.5
      ? 'grew'
      : ratio < 1 / 1.5
        ? 'fell'
        : 'stayed about level';
  return `drift: k3 KL ${trend} from ${formatNumber(k(first), 3)} (step ${first.step}) to ${formatNumber(k(last), 3)} (step ${last.step}); largest ${formatNumber(k(worst), 3)} at step ${worst.step}`;
}

/** One sentence on where |Δ| sits: the bin with the largest mean |Δ| against the most confident bin. */
export function gapLine(bins: readonly Record<string, JsonValue>[]): string {
  const filled = bins.filter((b) => typeof b.mean_abs_delta === 'number' && num(b.tokens) > 0);
  if (filled.length === 0) return 'where the gap sits: no token in any bin';
  const worst = filled.reduce((a, b) => (num(b.mean_abs_delta) > num(a.mean_abs_delta) ? b : a));
  const top = filled[filled.length - 1] as Record<string, JsonValue>;
  const times = num(worst.mean_abs_delta) / num(top.mean_abs_delta);
  return `where the gap sits: mean |Δ| is largest for rollout probability in [${worst.lo}, ${worst.hi}) (${formatNumber(num(worst.mean_abs_delta), 3)}, ${formatNumber(num(worst.tokens), 3)} tokens)${worst === top ? '' : `, ${formatNumber(times, 3)}× that of [${top.lo}, ${top.hi}]`}`;
}

/**
 * The terminal summary of a token audit. Why it is long: it prints the summary's sections in order
 * (what was read, the headline mismatch, drift over steps, where the gap sits, each what-if, the
 * notes), each a few lines of formatting with nothing to share between them.
 */
export function formatTokenAudit(record: RunRecord): string {
  const m = record.metrics;
  const c = record.config;
  const t = record.tables;
  const lines: string[] = [];
  lines.push(
    `audit  ${String(c.path)}  preset ${String(c.preset)}  (${m.files} file(s), ${m.sequences} sequences, ${m.loss_tokens} loss tokens, ${m.steps} step(s), ${formatNumber(record.timing.wall_ms / 1000, 3)} s)`,
  );
  lines.push(`Δ = trainer − inference log-prob, on loss tokens only (${String(c.loss_mask)})`);
  lines.push('');
  lines.push(
    table(
      ['k3 KL', 'KL (k1)', 'mean |Δ|', 'p99 |Δ|', 'max |Δ|', 'chi2_token', 'chi2_seq', 'ppl_ratio'],
      [
        [
          cell(m['rollout_corr/k3_kl']),
          cell(m['rollout_corr/kl']),
          cell(m.mean_abs_delta),
          cell(m.p99_abs_delta),
          cell(m.max_abs_delta),
          cell(m['rollout_corr/chi2_token']),
          cell(m['rollout_corr/chi2_seq']),
          cell(m['rollout_corr/ppl_ratio']),
        ],
      ],
    ),
  );
  lines.push('');
  const steps = t.mismatch_by_step ?? [];
  lines.push(driftLine(steps));
  lines.push(
    table(
      ['step', 'tokens', 'k3 KL', 'mean |Δ|', 'p99 |Δ|', 'max |Δ|', 'chi2_token'],
      spread(steps, MAX_STEPS_SHOWN).map((r) => [
        cell(r.step),
        cell(r.loss_tokens),
        cell(r['rollout_corr/k3_kl']),
        cell(r.mean_abs_delta),
        cell(r.p99_abs_delta),
        cell(r.max_abs_delta),
        cell(r['rollout_corr/chi2_token']),
      ]),
    ),
  );
  lines.push('');
  const bins = t.mismatch_by_probability ?? [];
  lines.push(gapLine(bins));
  lines.push(
    table(
      ['rollout prob', 'tokens', 'mean |Δ|'],
      bins.map((b) => [
        `[${b.lo}, ${b.hi}${b.hi_inclusive ? ']' : ')'}`,
        cell(b.tokens),
        cell(b.mean_abs_delta),
      ]),
    ),
  );
  const tasks = t.mismatch_by_task ?? [];
  if (tasks.length > 1) {
    lines.push('');
    lines.push(
      table(
        ['task', 'sequences', 'tokens', 'k3 KL', 'mean |Δ|', 'max |Δ|'],
        tasks.map((r) => [
          String(r.task),
          cell(r.sequences),
          cell(r.loss_tokens),
          cell(r['rollout_corr/k3_kl']),
          cell(r.mean_abs_delta),
          cell(r.max_abs_delta),
        ]),
      ),
    );
  }
  const rounds = t.mismatch_by_round ?? [];
  if (rounds.length > 1) {
    lines.push('');
    lines.push('per multi-turn round (a round = a run of consecutive loss tokens):');
    lines.push(
      table(
        ['round', 'sequences', 'tokens', 'k3 KL', 'mean |Δ|'],
        rounds.map((r) => [
          cell(r.round),
          cell(r.sequences),
          cell(r.tokens),
          cell(r.k3_kl),
          cell(r.mean_abs_delta),
        ]),
      ),
    );
  }
  const corr = t.corrections ?? [];
  if (corr.length > 0) {
    lines.push('');
    lines.push('what each correction would do (overall):');
    lines.push(
      table(
        ['what-if', 'masked tokens', 'masked seqs', 'IS mean', 'IS max', 'ESS'],
        corr.map((r) => {
          // verl rows carry rollout_corr/...; TRL and OpenRLHF rows the verl-definition summary
          const masked = r['rollout_corr/rollout_rs_masked_fraction'] ?? r.masked_fraction;
          return [
            String(r.what_if),
            masked === undefined ? '-' : pct(masked),
            masked === undefined ? '-' : `${r.rejected_sequences}`,
            cell(r['rollout_corr/rollout_is_mean'] ?? r.is_mean),
            cell(r['rollout_corr/rollout_is_max'] ?? r.is_max),
            cell(r['rollout_corr/rollout_is_eff_sample_size'] ?? r.eff_sample_size),
          ];
        }),
      ),
    );
  }
  lines.push('');
  lines.push(
    `as the frameworks log it: NeMo-RL token_mult_prob_error ${formatNumber(num(m['nemo_rl/token_mult_prob_error']))}, gen_kl_error ${formatNumber(num(m['nemo_rl/gen_kl_error']))}; prime-rl mismatch_kl mean ${formatNumber(num(m['prime_rl/mismatch_kl/all/mean']))}; TRL sampling_logp_difference mean ${formatNumber(num(m['trl/sampling/sampling_logp_difference/mean']))}; OpenRLHF vllm_kl ${formatNumber(num(m['openrlhf/vllm_kl']))} (all in --json)`,
  );
  for (const note of record.notes ?? []) lines.push(`note: ${note}`);
  return lines.join('\n');
}

/** Terminal summary of an AReaL staleness audit (config.kind 'staleness'). */
export function formatStalenessAudit(record: RunRecord): string {
  const m = record.metrics;
  const lines = [
    `audit  ${String(record.config.path)}  preset areal  (${m.files} file(s), ${m.samples} samples, ${m.completion_tokens} completion tokens)`,
    `version span (tail − head version of a trajectory): mean ${formatNumber(num(m.mean_version_span), 3)} per sample, ${formatNumber(num(m.token_weighted_version_span), 3)} per token, max ${m.max_version_span}; ${pct(m.off_policy_sample_fraction)} of samples span more than one policy`,
    '',
    table(
      ['span', 'samples', 'tokens', 'mean reward'],
      (record.tables.staleness_by_span ?? []).map((r) => [
        cell(r.span),
        cell(r.samples),
        cell(r.tokens),
        cell(r.mean_reward),
      ]),
    ),
  ];
  for (const note of record.notes ?? []) lines.push(`note: ${note}`);
  return lines.join('\n');
}
