/**
 * The per-sample rows the logged-vs-recomputed comparison and the length anatomy need, read from the
 * dump the audit has already loaded and checked (reader.ts `loadDump`): the same files, the same
 * column mapping and reward rule. Beyond the audit's canonical columns, two optional keys are read
 * when the dump has them:
 *  - `response_length` (verl: `reward_extra_info` keys whose list length is n are written to the
 *    rollout dump, verl/trainer/ppo/ray_trainer.py `_dump_generations`; a reward function that
 *    returns the response's token count gives the per-row token length verl's metrics use);
 *  - `entropy`: a per-sample mean token entropy (number) or the per-token entropies (list; their
 *    mean is used), as prime-rl's token export writes them (`entropy` per token).
 * Rows whose step or reward is missing or not a number are skipped (the audit has already refused or
 * counted them, per --skip-bad-rows). The rows are streamed from DuckDB chunk by chunk and each
 * response text is reduced to its features at once, so no text is held; what is kept is a few
 * numbers per row (about 100 bytes), which bounds the dumps this suits to some millions of rows.
 */
import type { DuckSession } from '../duckdb.js';
import { duckError, sqlIdent, sqlString } from '../duckdb.js';
import type { LoadedDump } from '../reader.js';
import { type TextFeatures, textFeatures } from './lengthAnatomy.js';

export interface DumpRow {
  step: number;
  /** The group's key: (step, label), or (file, block) for contiguous groups. */
  group: string;
  task: string;
  /** NaN when every reward column was null/NaN (TRL: an unscorable completion). */
  reward: number;
  /** Response token count: action_tokens, Σ mask, or the `response_length` key; null when unknown. */
  tokens: number | null;
  truncated: boolean | null;
  /** The response text's features (lengthAnatomy.ts `textFeatures`); the text itself is not kept. */
  text: TextFeatures | null;
  /** Mean token entropy of the response, when the dump has it. */
  entropy: number | null;
}

export interface DumpRowsResult {
  rows: DumpRow[];
  /** Where the token lengths came from, or null. */
  tokenSource: string | null;
  hasEntropy: boolean;
}

async function existingColumns(db: DuckSession, loaded: LoadedDump): Promise<Set<string>> {
  const files = `[${loaded.files.map(sqlString).join(', ')}]`;
  const from =
    loaded.format === 'parquet'
      ? `read_parquet(${files}, union_by_name=true)`
      : `read_json_auto(${files}, format='newline_delimited', union_by_name=true, ignore_errors=true)`;
  try {
    const d = await db.all(`DESCRIBE SELECT * FROM ${from}`);
    return new Set(d.map((r) => String(r.column_name)));
  } catch (e) {
    throw duckError(e, 'reading the dump columns', 'PARSE_ERROR');
  }
}

/** Reads the rows of `loaded` (see the module comment); `rewardWeights` as the audit used them. */
export async function readDumpRows(
  db: DuckSession,
  loaded: LoadedDump,
  rewardWeights: readonly number[] | null,
): Promise<DumpRowsResult> {
  const have = await existingColumns(db, loaded);
  const c = loaded.columns;
  const col = (name: string | undefined) => (name !== undefined && have.has(name) ? sqlIdent(name) : null);
  const text = (name: string | undefined) => {
    const x = col(name);
    return x ? `CAST(${x} AS VARCHAR)` : 'NULL::VARCHAR';
  };
  const num = (x: string | null) => (x ? `TRY_CAST(${x} AS DOUBLE)` : 'NULL::DOUBLE');
  const rewardCols = loaded.rewardColumns.map((r) => col(r)).filter((x): x is string => x !== null);
  const reward =
    rewardCols.length === 1 &&
    (rewardWeights === null || rewardWeights.length !== loaded.rewardColumns.length)
      ? num(rewardCols[0] as string)
      : `list_sum(list_filter([${loaded.rewardColumns.map((r, i) => `${rewardWeights ? `${rewardWeights[i]} * ` : ''}${num(col(r))}`).join(', ')}]::DOUBLE[], x -> x IS NOT NULL AND NOT isnan(x)))`;
  let tokens = 'NULL::DOUBLE';
  let tokenSource: string | null = null;
  if (col(c.action_tokens)) {
    tokens = num(col(c.action_tokens));
    tokenSource = `column '${c.action_tokens}'`;
  } else if (col(c.mask)) {
    tokens = `list_sum(TRY_CAST(${col(c.mask)} AS DOUBLE[]))`;
    tokenSource = `Σ of column '${c.mask}'`;
  } else if (have.has('response_length')) {
    tokens = num(sqlIdent('response_length'));
    tokenSource = "key 'response_length' (reward_extra_info)";
  }
  const hasEntropy = have.has('entropy');
  const entropy = hasEntropy ? `CAST(${sqlIdent('entropy')} AS VARCHAR)` : 'NULL::VARCHAR';
  const files = `[${loaded.files.map(sqlString).join(', ')}]`;
  const from =
    loaded.format === 'parquet'
      ? `read_parquet(${files}, filename='__file', file_row_number=true, union_by_name=true)`
      : `(SELECT NULL::VARCHAR AS __file, NULL::BIGINT AS file_row_number, * FROM read_json_auto(${files}, format='newline_delimited', union_by_name=true, ignore_errors=true))`;
  const g = loaded.grouping;
  const groupKey =
    g.kind === 'contiguous'
      ? `__file || ':' || CAST(file_row_number // ${g.size} AS VARCHAR)`
      : `CAST(step AS VARCHAR) || chr(0) || coalesce(grp_label, '')`;
  const sql = `SELECT step, ${groupKey} AS grp, task, reward, tokens, truncated, txt, ent FROM (
      SELECT __file, file_row_number,
        TRY_CAST(${col(c.step) ?? 'NULL'} AS DOUBLE) AS step,
        ${text(c.task)} AS task, ${reward} AS reward, ${tokens} AS tokens,
        ${col(c.truncated) ? `TRY_CAST(${col(c.truncated)} AS BOOLEAN)` : 'NULL::BOOLEAN'} AS truncated,
        ${text(c.response)} AS txt, ${entropy} AS ent, ${text(c.group)} AS grp_label
      FROM ${from})
    WHERE step IS NOT NULL AND step = floor(step)
    ORDER BY step, __file, file_row_number`;
  const rows: DumpRow[] = [];
  try {
    await db.stream(sql, (chunk) => {
      const cols = [0, 1, 2, 3, 4, 5, 6, 7].map((i) => chunk.column(i));
      const at = (c: number, i: number) => cols[c]?.getItem(i) ?? null;
      for (let i = 0; i < chunk.rowCount; i++) {
        const rew = at(3, i);
        const tok = at(4, i) === null ? null : Number(at(4, i));
        const txt = at(6, i);
        rows.push({
          step: Number(at(0, i)),
          group: String(at(1, i)),
          task: at(2, i) === null ? '' : String(at(2, i)),
          reward: rew === null ? Number.NaN : Number(rew),
          tokens: tok !== null && Number.isFinite(tok) ? tok : null,
          truncated: at(5, i) === null ? null : Boolean(at(5, i)),
          text: txt === null ? null : textFeatures(String(txt)),
          entropy: entropyOf(at(7, i)),
        });
      }
    });
  } catch (e) {
    throw duckError(e, 'reading the dump rows for the length anatomy and the log comparison', 'PARSE_ERROR');
  }
  return { rows, tokenSource, hasEntropy };
}

function entropyOf(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const s = String(v).trim();
  if (s.startsWith('[')) {
    try {
      const list = JSON.parse(s) as unknown[];
      const xs = list.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
      return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    } catch {
      return null;
    }
  }
  const x = Number(s);
  return s !== '' && Number.isFinite(x) ? x : null;
}
