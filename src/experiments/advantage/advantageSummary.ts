/**
 * Terminal summary of an `advantage` run: per group the predicted / verl / teaching / other preset
 * advantages (one line per distinct reward, `*` where a column differs from verl) with the formula and
 * the one-line reasons; the mis-indexed batch; the mask flip under the four aggregation modes; per-task
 * zero-variance accounting and the batch's token denominators; the headline last.
 */
import { type Cell, formatNumber, numberOf, table } from '../text.js';
import type { JsonValue, RunRecord } from '../types.js';

type Row = Record<string, JsonValue>;
const num = numberOf;
const PRESET_COLUMNS = ['teaching', 'trl', 'openrlhf', 'nemo-rl'] as const;

/** A preset's value for member j, marked `*` when it differs from verl's by more than 1e-7. */
function cell(values: JsonValue | undefined, j: number, verl: number): Cell {
  if (values === null || values === undefined) return 'refused';
  const v = num((values as JsonValue[])[j]);
  const text = formatNumber(v, 6);
  return Math.abs(v - verl) > 1e-7 ? `${text}*` : text;
}

function groupLines(groups: Row[]): string[] {
  const lines: string[] = [];
  const rows: Cell[][] = [];
  for (const g of groups) {
    const rewards = g.rewards as number[];
    const verl = g.verl as number[];
    const seen = new Set<number>();
    rewards.forEach((r, j) => {
      if (seen.has(r)) return;
      seen.add(r);
      const v = verl[j] as number;
      rows.push([
        seen.size === 1 ? `${g.group}${g.batch === 'mis_indexed' ? ' (mis-indexed)' : ''}` : '',
        seen.size === 1 ? String(g.kind) : '',
        seen.size === 1 ? rewards.length : '',
        r,
        formatNumber(num((g.predicted as JsonValue[])[j]), 6),
        formatNumber(v, 6),
        ...PRESET_COLUMNS.map((p) => cell(g[p], j, v)),
      ]);
    });
  }
  lines.push(
    table(
      ['group', 'kind', 'n', 'reward', 'predicted', 'verl', 'teaching', 'trl', 'openrlhf', 'nemo-rl'],
      rows,
    ),
  );
  lines.push('(* differs from verl; refused = the convention does not accept a group of one)');
  for (const g of groups) {
    lines.push(`${g.group}${g.batch === 'mis_indexed' ? ' (mis-indexed)' : ''}: verl ${String(g.formula)}`);
    for (const d of g.differences as string[]) lines.push(`    ${d}`);
  }
  return lines;
}

export function formatAdvantage(record: RunRecord): string {
  const m = record.metrics;
  const t = record.tables;
  const lines: string[] = [];
  lines.push(`advantage  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`);
  lines.push(
    `batch: ${m.rows} trajectories padded to T=${m.padded_length}: ${m.action_tokens} model tokens, ${m.env_tokens} tool-output tokens, ${m.padding_tokens} padding; groups: ${m.all_wrong_groups} all-wrong, ${m.all_right_groups} all-right, ${m.mixed_groups} mixed, ${m.singleton_groups} singleton`,
  );
  lines.push(
    '',
    'Advantage per group: hand prediction (closed form) vs verl GRPO kernel vs other conventions',
  );
  lines.push(...groupLines((t.groups ?? []) as Row[]));

  const mis = (t.misindexed ?? []) as Row[];
  if (mis.length) {
    lines.push('', `Mis-indexed batch: ${mis.length} rows of two tasks under one group label`);
    lines.push(
      table(
        ['row', 'task', 'label', 'used', 'reward', 'A correct', 'A mis-indexed'],
        mis.map((r) => [
          num(r.row),
          String(r.task),
          String(r.label_correct),
          String(r.label_used),
          num(r.reward),
          num(r.advantage_correct),
          num(r.advantage_misindexed),
        ]),
        6,
      ),
    );
  }

  const flip = (t.mask_flip ?? []) as Row[];
  lines.push('', 'Mask flip: tool-output tokens masked 1 (policy loss, verl vanilla PPO)');
  lines.push(
    table(
      ['mode', 'loss (mask ok)', 'loss (flipped)', 'change', 'denominator ok', 'flipped', 'formula'],
      flip.map((r) => [
        String(r.mode),
        num(r.loss_correct_mask),
        num(r.loss_flipped_mask),
        num(r.loss_change),
        num(r.denominator_correct_mask),
        num(r.denominator_flipped_mask),
        String(r.denominator_formula),
      ]),
      6,
    ),
  );
  lines.push(
    `tool-output tokens with gradient: ${m.tool_tokens_with_gradient_correct_mask} with the correct mask, ${num(m.tool_tokens_with_gradient_correct_mask) + num(m.tool_tokens_newly_with_gradient)} with the flipped one (token-mean; every tool token of a row with A != 0 whose ratio is not clipped)`,
  );

  const perTask = ((t.per_task ?? []) as Row[]).filter((r) => r.batch === 'exercise');
  lines.push('', 'Per task (exercise batch)');
  lines.push(
    table(
      ['task', 'groups', 'samples', 'all-wrong', 'all-right', 'singleton', 'zero-var groups', 'fraction'],
      perTask.map((r) => [
        String(r.task),
        num(r.groups),
        num(r.samples),
        num(r.all_wrong_groups),
        num(r.all_right_groups),
        num(r.singleton_groups),
        num(r.zero_variance_groups),
        num(r.zero_variance_fraction),
      ]),
    ),
  );
  const d = (m.denominators ?? {}) as Row;
  lines.push(
    '',
    `Per batch: ${m.action_tokens} action tokens, ${m.env_tokens} environment tokens, ${m.padding_tokens} padding; ${m.zero_advantage_tokens_in_denominator} action tokens (${formatNumber(100 * num(m.zero_advantage_token_fraction), 3)}%) have advantage 0 yet sit in the token-mean denominator`,
  );
  lines.push(
    `effective denominators: token-mean ${d['token-mean']}, seq-mean-token-sum ${d['seq-mean-token-sum']}, seq-mean-token-mean ${d['seq-mean-token-mean']}, seq-mean-token-sum-norm ${d['seq-mean-token-sum-norm']} (per-trajectory weights in tables.trajectories)`,
  );
  for (const note of record.notes ?? []) if (!note.startsWith('presets:')) lines.push(`note: ${note}`);
  lines.push(
    '',
    `headline: verl's kernel = hand prediction to ${formatNumber(num(m.max_abs_verl_minus_predicted), 2)}; ${m.misindexed_rows_zero_to_nonzero} zero-advantage rows get |A| > 0 when two tasks share a label; flipping the tool mask gives ${m.tool_tokens_newly_with_gradient} environment tokens gradient and moves the token-mean denominator ${d['token-mean']} -> ${num((m.denominators_flipped as Row | undefined)?.['token-mean'])}`,
  );
  return lines.join('\n');
}
