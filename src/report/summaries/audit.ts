/**
 * Terminal summary of a `labs audit` record: group kinds, the per-step trend, the tasks that waste
 * the most samples, group sizes, rewards, lengths of correct vs incorrect samples, truncation,
 * token denominators and the logged-advantage check (each section only when the dump has the data).
 */
import { type Cell, formatNumber, table } from '../../experiments/text.js';
import type { JsonValue, RunRecord } from '../../experiments/types.js';
import { formatStalenessAudit, formatTokenAudit } from './tokenAudit.js';

const MAX_STEPS_SHOWN = 12;
const MAX_TASKS_SHOWN = 15;

function n(v: JsonValue | undefined): number {
  return typeof v === 'number' ? v : Number.NaN;
}

function pct(v: JsonValue | undefined): string {
  const x = n(v);
  return Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-';
}

/** Long prompts are shown by their end, where the actual question usually is. */
function shortTask(task: string, width = 60): string {
  const flat = task.replace(/\s+/g, ' ').trim();
  return flat.length <= width ? flat : `…${flat.slice(flat.length - width + 1)}`;
}

/** At most `max` rows, evenly spread and always including the first and last. */
function spread<T>(rows: readonly T[], max: number): T[] {
  if (rows.length <= max) return [...rows];
  const out: T[] = [];
  for (let i = 0; i < max; i++) out.push(rows[Math.round((i * (rows.length - 1)) / (max - 1))] as T);
  return out;
}

/**
 * The terminal summary of an audit record. Why one function: it writes the sections in the order
 * they appear on the terminal (headline, per-step and per-task tables, group sizes, rewards, lengths,
 * denominators, logged advantages, notes), each a block of `lines.push` shown only when the record
 * has it, so read top to bottom it is the output.
 */
export function formatAudit(record: RunRecord): string {
  if (record.config.kind === 'tokens') return formatTokenAudit(record);
  if (record.config.kind === 'staleness') return formatStalenessAudit(record);
  const m = record.metrics;
  const c = record.config;
  const t = record.tables;
  const lines: string[] = [];
  lines.push(
    `audit  ${String(c.path)}  preset ${String(c.preset)}  (${m.files} file(s), ${m.rows} rows, ${m.groups} groups, ${m.steps} step(s), ${formatNumber(record.timing.wall_ms / 1000, 3)} s)`,
  );
  lines.push(
    `reward: ${(c.reward_columns as string[]).join(' + ')}; correct = reward >= ${m.pass_value}; all_wrong = all equal <= ${m.fail_value}`,
  );
  lines.push('');
  lines.push(
    table(
      ['groups', 'all_wrong', 'all_right', 'all_equal_other', 'mixed', 'singleton', 'zero-variance share'],
      [
        [
          n(m.groups),
          n(m.all_wrong_groups),
          n(m.all_right_groups),
          n(m.all_equal_other_groups),
          n(m.mixed_groups),
          n(m.singleton_groups),
          pct(m.zero_variance_group_fraction),
        ],
      ],
    ),
  );
  lines.push(
    `wasted samples (in zero-variance groups, advantage 0): ${m.wasted_samples} of ${m.rows} (${pct(m.wasted_sample_fraction)})`,
  );
  if (n(m.mixed_task_groups) > 0) {
    lines.push(`WARNING: ${m.mixed_task_groups} group(s) mix different tasks under one group label`);
  }

  const steps = (t.steps ?? []) as Record<string, JsonValue>[];
  if (steps.length > 1) {
    lines.push(
      '',
      `per step (${steps.length} steps${steps.length > MAX_STEPS_SHOWN ? ', evenly sampled' : ''}):`,
    );
    lines.push(
      table(
        ['step', 'groups', 'all_wrong', 'all_right', 'zero-var', 'mean reward'],
        spread(steps, MAX_STEPS_SHOWN).map((s) => [
          n(s.step),
          n(s.groups),
          pct(s.all_wrong_fraction),
          pct(s.all_right_fraction),
          pct(s.zero_variance_fraction),
          n(s.mean_reward),
        ]),
      ),
    );
    if (m.zero_variance_fraction_first_half !== undefined) {
      lines.push(
        `trend: zero-variance share ${pct(m.zero_variance_fraction_first_half)} (first half of steps) -> ${pct(m.zero_variance_fraction_second_half)} (second half); all_right ${pct(m.all_right_fraction_first_half)} -> ${pct(m.all_right_fraction_second_half)}; all_wrong ${pct(m.all_wrong_fraction_first_half)} -> ${pct(m.all_wrong_fraction_second_half)}`,
      );
    }
  }

  const tasks = (t.per_task ?? []) as Record<string, JsonValue>[];
  lines.push(
    '',
    `tasks: ${m.tasks} (always solved ${m.tasks_always_solved}, never solved ${m.tasks_never_solved}, sometimes solved ${m.tasks_sometimes_solved}); top ${Math.min(MAX_TASKS_SHOWN, tasks.length)} by wasted samples:`,
  );
  lines.push(
    table(
      ['task', 'groups', 'samples', 'zero-var groups', 'zero-var share', 'mean reward', 'status'],
      tasks
        .slice(0, MAX_TASKS_SHOWN)
        .map((r) => [
          shortTask(String(r.task)),
          n(r.groups),
          n(r.samples),
          n(r.zero_variance_groups),
          pct(r.zero_variance_fraction),
          n(r.mean_reward),
          String(r.status),
        ]),
    ),
  );

  const sizes = (t.group_sizes ?? []) as Record<string, JsonValue>[];
  lines.push('', `group sizes: ${sizes.map((s) => `${s.size}x${s.groups}`).join(', ')} (size x groups)`);

  const dist = (t.reward_distribution ?? []) as Record<string, JsonValue>[];
  const distText = dist
    .map((d) =>
      d.value !== undefined
        ? `${formatNumber(d.value as Cell)}: ${d.samples}`
        : `[${formatNumber(d.bin_lo as Cell)}, ${formatNumber(d.bin_hi as Cell)}): ${d.samples}`,
    )
    .join(', ');
  lines.push(
    `rewards: mean ${formatNumber(m.mean_reward as Cell)}, correct ${pct(m.correct_fraction)}; ${distText}`,
  );

  const lengths = (t.length_by_correctness ?? []) as Record<string, JsonValue>[];
  if (lengths.length) {
    lines.push('', `response length (${String(m.length_unit)}):`);
    lines.push(
      table(
        ['samples', 'count', 'mean', 'median', 'p90'],
        lengths.map((r) => [
          r.correct ? 'correct' : 'incorrect',
          n(r.samples),
          n(r.mean_length),
          n(r.median_length),
          n(r.p90_length),
        ]),
      ),
    );
  }
  if (m.truncated_fraction !== undefined) {
    lines.push(
      `truncated: ${m.truncated_samples} samples (${pct(m.truncated_fraction)}), ${m.truncated_correct_samples} of them correct, mean reward ${formatNumber(m.truncated_mean_reward as Cell)} (a truncated sample scored as a failure teaches the policy to be short, not to be right)`,
    );
  }
  if (m.denominators && typeof m.denominators === 'object' && !Array.isArray(m.denominators)) {
    const d = m.denominators as Record<string, JsonValue>;
    lines.push('', 'token denominators (whole dump as one batch; per step in tables.steps):');
    lines.push(
      table(
        ['mode', 'denominator', 'counts'],
        [
          ['token-mean', n(d['token-mean']), 'action tokens'],
          ['seq-mean-token-sum', n(d['seq-mean-token-sum']), 'rows with >= 1 action token'],
          ['seq-mean-token-mean', n(d['seq-mean-token-mean']), 'rows with >= 1 action token'],
          ['seq-mean-token-sum-norm', n(d['seq-mean-token-sum-norm']), 'T = longest response seen (tokens)'],
        ],
      ),
    );
    lines.push(
      `action tokens ${m.action_tokens}, env tokens ${m.env_tokens}; ${m.zero_advantage_action_tokens} action tokens (${pct(m.zero_advantage_token_fraction)}) sit in zero-variance groups: advantage 0, yet counted in the token-mean denominator`,
    );
  }
  if (m.logged_advantages_compared !== undefined) {
    lines.push(
      '',
      `logged advantages vs ${String(m.advantage_convention)} convention recomputed: ${m.logged_advantages_differing} of ${m.logged_advantages_compared} differ (max |diff| ${formatNumber(m.logged_advantage_max_abs_diff as Cell)}); ${m.logged_advantages_in_singleton_groups} rows in groups of one not compared`,
    );
  }
  for (const note of record.notes ?? []) lines.push(`note: ${note}`);
  return lines.join('\n');
}
