/**
 * Shared terminal layout of the token-lab experiments (`mask`, `aggregation`, `truncation`): a
 * header with the training setup, the `tables.arms` table with chosen columns, an optional second
 * table, then the notes, the first of which is the experiment's measured conclusion.
 */
import { type Cell, formatNumber, table } from './text.js';
import type { JsonValue, RunRecord } from './types.js';

const cell = (v: JsonValue | undefined): Cell =>
  v === undefined || v === null || typeof v === 'object' ? null : (v as Cell);

/** Renders `rows` with the given columns (header = column key). */
export function rowsTable(rows: readonly Record<string, JsonValue>[], columns: readonly string[]): string {
  return table(
    [...columns],
    rows.map((r) => columns.map((c) => cell(r[c]))),
  );
}

/**
 * The token-lab layout: a seed/time line, `title`, the training setup from the record's config,
 * `tables.arms` with `columns`, the optional `extra` table, the caveat notes, and last the first note
 * (the measured conclusion).
 */
export function formatArmsRecord(
  record: RunRecord,
  title: string,
  columns: readonly string[],
  extra?: { name: string; columns: readonly string[] },
): string {
  const c = record.config;
  const lines: string[] = [];
  lines.push(`${record.experiment}  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`);
  lines.push(title);
  // policy=neural trains a GRU with neural_lr (lr is the tabular policy's step size)
  const neural = c.policy === 'neural';
  const policy = neural
    ? `policy neural (GRU d_model ${c.d_model}, ${record.tables.policy?.[0]?.parameters ?? '?'} parameters, grad_clip ${c.grad_clip}), ${c.optimizer} lr=${c.neural_lr}`
    : `${c.optimizer} lr=${c.lr}`;
  lines.push(
    `training: ${c.updates} updates x ${c.tasks_per_update} tasks x ${c.group_size} samples, ${c.ppo_epochs} PPO epochs, ${policy}, clip ${c.clip_ratio}, GRPO std=${c.std}; budget ${c.budget} tokens, tool error rate ${c.tool_error_rate}`,
  );
  lines.push('', rowsTable(record.tables.arms ?? [], columns));
  if (extra) {
    const rows = record.tables[extra.name] ?? [];
    if (rows.length) lines.push('', `${extra.name}:`, rowsTable(rows, extra.columns));
  }
  // neural policy: held-out success per level (tool calls a task needs), before RL when warm-started
  const levels = record.tables.levels ?? [];
  if (levels.length) {
    const arms = (record.tables.arms ?? []).map((r) => String(r.arm));
    const warm = 'pretrained' in (levels[0] ?? {});
    lines.push(
      '',
      `held-out success by level${warm ? ' (pretrained = the warm start before RL; then each arm after RL)' : ''}:`,
      rowsTable(levels, ['level', 'tasks', ...(warm ? ['pretrained'] : []), ...arms]),
    );
  }
  const [conclusion, ...rest] = record.notes ?? [];
  for (const note of rest) lines.push(`note: ${note}`);
  if (conclusion) lines.push('', conclusion);
  return lines.join('\n');
}
