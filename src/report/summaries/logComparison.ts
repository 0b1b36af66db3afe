/**
 * Terminal summary of an audit's logged-vs-recomputed comparison (`labs audit --metrics`) and its
 * length anatomy: the disagreements (and rows with a known bug signature), the metric names that
 * match nothing, and the per-step lengths of correct vs incorrect responses. Empty when the record
 * has neither table.
 */
import { type Cell, formatNumber, table } from '../../experiments/text.js';
import type { JsonValue, RunRecord } from '../../experiments/types.js';

const MAX_ROWS = 25;
const MAX_NAMES = 20;

function cell(v: JsonValue | undefined): Cell {
  return typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean' || v === null ? v : null;
}

export function formatLogComparison(record: RunRecord): string {
  const lines: string[] = [];
  const anatomy = record.tables.length_anatomy ?? [];
  const steps = anatomy.filter((r) => r.task === '(all)');
  if (steps.length > 0) {
    lines.push('');
    lines.push(`length anatomy per step (${String(record.metrics.length_anatomy_unit ?? 'no lengths')}):`);
    const shown = steps.length <= 12 ? steps : [...steps.slice(0, 6), ...steps.slice(-6)];
    lines.push(
      table(
        ['step', 'len correct', 'len incorrect', 'truncated & 0 reward', 'rep-4', 'entropy c/i'],
        shown.map((r) => [
          cell(r.step),
          cell(r.mean_length_correct),
          cell(r.mean_length_incorrect),
          cell(r.truncated_zero_reward_share),
          cell(r.repetition_rate),
          r.entropy_correct === null && r.entropy_incorrect === null
            ? null
            : `${formatNumber(cell(r.entropy_correct))}/${formatNumber(cell(r.entropy_incorrect))}`,
        ]),
      ),
    );
  }
  const rows = record.tables.logged_vs_recomputed;
  if (rows === undefined) return lines.join('\n');
  const m = record.metrics;
  lines.push('');
  lines.push(
    `logged vs recomputed (${String((record.config.metrics_log_formats as string[] | undefined)?.join(', ') ?? '')}): ${m.logged_values_compared} value(s) compared, ${m.logged_values_disagreeing} disagree (tolerance ${m.logged_agree_atol} + ${m.logged_agree_rtol}·|x|), ${m.logged_values_with_signature} with a known bug signature`,
  );
  const flagged = rows.filter((r) => r.agrees === false || r.signature !== null);
  if (flagged.length > 0) {
    lines.push(
      table(
        ['step', 'metric', 'logged', 'recomputed', 'agrees'],
        flagged
          .slice(0, MAX_ROWS)
          .map((r) => [cell(r.step), cell(r.metric), cell(r.logged), cell(r.recomputed), cell(r.agrees)]),
        6,
      ),
    );
    if (flagged.length > MAX_ROWS)
      lines.push(`… ${flagged.length - MAX_ROWS} more in tables.logged_vs_recomputed`);
    const sigs = [
      ...new Set(flagged.map((r) => r.signature).filter((s): s is string => typeof s === 'string')),
    ];
    for (const s of sigs) lines.push(`signature: ${s}`);
  }
  const notRecomputed = [
    ...new Set(rows.filter((r) => r.recomputed === null).map((r) => `${r.metric}: ${r.note}`)),
  ];
  for (const n of notRecomputed) lines.push(`not recomputed: ${n}`);
  const unmatched = record.tables.logged_metrics_unmatched ?? [];
  if (unmatched.length > 0) {
    const names = unmatched.slice(0, MAX_NAMES).map((u) => String(u.metric));
    lines.push(
      `${unmatched.length} logged metric name(s) match nothing recomputable: ${names.join(', ')}${unmatched.length > MAX_NAMES ? ', …' : ''}`,
    );
  }
  return lines.join('\n');
}
