/**
 * Length anatomy of a dump, per step (over all tasks) and per task (over all steps): how long the
 * correct and the incorrect responses are, how many samples were cut at the length limit and got
 * no reward, how repetitive the responses are, and (when the dump has token entropy) the entropy of
 * correct, incorrect and truncated responses. The course's second diagnostic (after the zero-variance
 * share): a run whose wrong answers grow long and repetitive and hit the cap is spending its budget
 * on degenerate text.
 *
 * Definitions (correct = reward >= pass value; lengths in tokens when the dump has them, else in
 * characters of the response text):
 *  - truncated = the `truncated` column, or token length >= the length limit given
 *    (`--max-response-length` / `--max-completion-length`); truncated_zero_reward_share = share of
 *    samples that are truncated with reward <= fail value;
 *  - repetition_rate = mean over responses of rep-4 = 1 − |distinct word 4-grams| / |word 4-grams|
 *    (words split on whitespace; responses under 4 words count 0), the rep-n of Welleck et al.,
 *    "Neural Text Generation with Unlikelihood Training" (ICLR 2020);
 *  - slime_repetition_frac = slime's `rollout/repetition_frac` (slime/observability/metric_utils.py
 *    `has_repetition`, commit 624b824a): share of responses longer than 10000 characters whose last
 *    10000 characters compress more than 10× with zlib level 9;
 *  - entropy_{correct,incorrect,truncated} = mean over those samples of their mean token entropy.
 */
import { deflateSync } from 'node:zlib';
import type { JsonValue } from '../../experiments/types.js';
import type { DumpRow } from './dumpRows.js';

/** rep-n of one text: 1 − distinct n-grams / n-grams over whitespace words (0 below n words). */
export function repN(text: string, n = 4): number {
  const words = text.split(/\s+/).filter((w) => w !== '');
  const total = words.length - n + 1;
  if (total <= 0) return 0;
  const seen = new Set<string>();
  for (let i = 0; i < total; i++) seen.add(words.slice(i, i + n).join('\u0000'));
  return 1 - seen.size / total;
}

/** slime's `has_repetition`: len(text) > 10000 and zlib-9 compression ratio of text[-10000:] > 10. */
export function slimeHasRepetition(text: string): boolean {
  const chars = Array.from(text); // Python counts code points
  if (chars.length <= 10000) return false;
  const tail = Buffer.from(chars.slice(-10000).join(''), 'utf8');
  return tail.length / deflateSync(tail, { level: 9 }).length > 10;
}

/** What the anatomy needs of a response text: its length in characters (code points), rep-4, slime's flag. */
export interface TextFeatures {
  chars: number;
  rep: number;
  slime: boolean;
}

export function textFeatures(text: string): TextFeatures {
  return { chars: Array.from(text).length, rep: repN(text), slime: slimeHasRepetition(text) };
}

export interface AnatomySettings {
  passValue: number;
  failValue: number;
  /** The run's length limit in tokens, when given. */
  maxLength: number | null;
}

function mean(xs: readonly number[]): number | null {
  return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
}

interface Prepared {
  row: DumpRow;
  length: number | null;
  truncated: boolean | null;
  rep: number | null;
  slime: boolean | null;
}

function summarize(part: readonly Prepared[], s: AnatomySettings): Record<string, JsonValue> {
  const correct = part.filter((p) => p.row.reward >= s.passValue);
  const incorrect = part.filter((p) => !(p.row.reward >= s.passValue));
  const lens = (ps: readonly Prepared[]) =>
    mean(ps.map((p) => p.length).filter((x): x is number => x !== null));
  const truncKnown = part.every((p) => p.truncated !== null);
  const texts = part.filter((p) => p.rep !== null);
  const ent = (ps: readonly Prepared[]) =>
    mean(ps.map((p) => p.row.entropy).filter((x): x is number => x !== null));
  return {
    samples: part.length,
    correct_samples: correct.length,
    mean_length_correct: lens(correct),
    mean_length_incorrect: lens(incorrect),
    truncated_share: truncKnown ? part.filter((p) => p.truncated).length / part.length : null,
    truncated_zero_reward_share: truncKnown
      ? part.filter((p) => p.truncated && p.row.reward <= s.failValue).length / part.length
      : null,
    repetition_rate: texts.length > 0 ? mean(texts.map((p) => p.rep as number)) : null,
    slime_repetition_frac: texts.length > 0 ? texts.filter((p) => p.slime).length / texts.length : null,
    entropy_correct: ent(correct),
    entropy_incorrect: ent(incorrect),
    entropy_truncated: truncKnown ? ent(part.filter((p) => p.truncated)) : null,
  };
}

/**
 * The anatomy table: one row per step (task `(all)`), then one per task (step null), tasks in
 * first-seen order. `unit` is `tokens` or `characters`.
 */
export function lengthAnatomy(
  rows: readonly DumpRow[],
  s: AnatomySettings,
): { table: Record<string, JsonValue>[]; unit: 'tokens' | 'characters' | null } {
  const tokensKnown = rows.length > 0 && rows.every((r) => r.tokens !== null);
  const unit = tokensKnown ? 'tokens' : rows.some((r) => r.text !== null) ? 'characters' : null;
  const prepared: Prepared[] = rows.map((row) => {
    const length = tokensKnown ? row.tokens : row.text !== null ? row.text.chars : null;
    const truncated =
      row.truncated ?? (tokensKnown && s.maxLength !== null ? (row.tokens as number) >= s.maxLength : null);
    return {
      row,
      length,
      truncated,
      rep: row.text === null ? null : row.text.rep,
      slime: row.text === null ? null : row.text.slime,
    };
  });
  const table: Record<string, JsonValue>[] = [];
  const bySteps = new Map<number, Prepared[]>();
  const byTask = new Map<string, Prepared[]>();
  for (const p of prepared) {
    const a = bySteps.get(p.row.step);
    if (a) a.push(p);
    else bySteps.set(p.row.step, [p]);
    const b = byTask.get(p.row.task);
    if (b) b.push(p);
    else byTask.set(p.row.task, [p]);
  }
  for (const step of [...bySteps.keys()].sort((a, b) => a - b)) {
    table.push({ step, task: '(all)', ...summarize(bySteps.get(step) as Prepared[], s), unit });
  }
  for (const [task, part] of byTask) table.push({ step: null, task, ...summarize(part, s), unit });
  return { table, unit };
}
