/**
 * Readers for rollout dumps: JSONL and Parquet through DuckDB, mapped onto the canonical audit row
 * (see presets.ts) and validated row by row in SQL, in one read of the files that keeps only
 * aggregates (the temp table `audit_all`, seen through these views):
 *
 *   audit_parts  one row per (group key k0, k1; task; status pattern of the row's fields): the step
 *                (st), rows n, min/max/sum of the reward (lo, hi, rs; rs_s the sum scaled by
 *                2^-600, see REWARD_SUM_SCALE), correct rows, token and
 *                truncation sums, and, for the checks that need rows, the values as lists
 *   audit_good   the parts of the good rows
 *   audit_hist   the good rows' (reward, length) histogram, with counts n; length is tokens when
 *                token counts are known, else characters of the response, else NULL
 *
 * A malformed row (bad JSON line, a line that is not UTF-8, missing field, non-numeric or non-finite
 * reward, step that is not an integer within ±2^53, mask that is not 0/1) is a LabError naming the
 * file and the line (JSONL, 1-based physical line) or row (Parquet, 0-based row number); with
 * `skipBadRows` it is dropped and counted instead.
 */
import { readdir, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { LabError } from '../core/errors.js';
import { type DuckSession, duckError, sqlIdent, sqlString } from './duckdb.js';
import { type AuditColumn, type AuditPreset, type DumpFormat, TRL_NON_REWARD_COLUMNS } from './presets.js';

export interface DumpFiles {
  files: string[];
  format: DumpFormat;
}

/** Where a bad row is: `line` (JSONL, 1-based physical line) or `row` (Parquet, 0-based). */
export interface BadRow {
  file: string;
  line?: number;
  row?: number;
  problem: string;
  /** The line is not a readable JSON object (malformed, not an object, a duplicated key...). */
  unreadable?: boolean;
}

export interface LoadedDump {
  files: string[];
  format: DumpFormat;
  /** Effective source column of each canonical column that is present. */
  columns: Partial<Record<AuditColumn, string>>;
  /** Canonical columns the dump actually has (required ones always). */
  present: AuditColumn[];
  /** TRL: the reward columns that were summed (or the one chosen). */
  rewardColumns: string[];
  rowsRead: number;
  rowsKept: number;
  badRows: number;
  /** Up to five located bad rows (first files first). */
  badExamples: BadRow[];
  /** Unit of the lengths in `audit_hist`. */
  lengthUnit: 'tokens' | 'characters' | null;
  grouping: GroupingUsed;
  /**
   * Each group has exactly one good part (its label column is its task column: verl, trl), so a
   * part is a group and the group-level statistics need no second grouping.
   */
  onePartPerGroup: boolean;
  /** The parts carry each group's rewards and lengths as lists (`rws`, `lens`). */
  rewardLists: boolean;
}

export interface LoadOptions {
  skipBadRows: boolean;
  /**
   * How rows form groups. `label`: a group is (step, group label). `contiguous`: TRL's layout, where
   * a group is a block of `size` consecutive rows of a file (`rewards.view(-1, num_generations)`),
   * whatever the prompts say; `size` null infers it as the greatest common divisor of the lengths of
   * the runs of equal (step, prompt) in each file.
   */
  grouping: { kind: 'label' } | { kind: 'contiguous'; size: number | null };
  /** TRL `reward_weights`, in the order of the reward columns; null: all 1. */
  rewardWeights: readonly number[] | null;
  /** A sample with reward >= passValue is correct. */
  passValue: number;
  /** Keep the logged advantages (as lists per part) for the recomputation check. */
  keepAdvantages: boolean;
  /** The ranker audit's columns (`--quality COL`, `--independent COL`); required when given. */
  rankColumns: { quality: string; independent: string } | null;
  /** Keep each part's rewards as a list (`--zero-std-tol`: a group's population std). */
  keepRewardLists: boolean;
}

/** The grouping an audit used, for the record. */
export type GroupingUsed = { kind: 'label' } | { kind: 'contiguous'; size: number; inferred: boolean };

const FORMAT_OF_EXT: Record<string, DumpFormat> = {
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
  '.json': 'jsonl',
  '.parquet': 'parquet',
};

/** First integer in a file name (`12.jsonl`, `completions_00012.parquet`), for step order. */
function stepOfName(name: string): number {
  const m = /\d+/.exec(name);
  return m ? Number(m[0]) : Number.POSITIVE_INFINITY;
}

/**
 * The dump's files: `path` itself if it is a file, else the directory's entries that match the
 * preset's pattern, ordered by the first number in the name (the step), then by name.
 */
export async function listDumpFiles(path: string, preset: AuditPreset): Promise<DumpFiles> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(path);
  } catch (e) {
    throw new LabError('IO_ERROR', `${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? e})`, {
      cause: e,
      details: { file: path },
    });
  }
  let files: string[];
  if (info.isDirectory()) {
    const names = (await readdir(path)).filter((n) => preset.filePattern.test(n));
    names.sort((a, b) => stepOfName(a) - stepOfName(b) || (a < b ? -1 : a > b ? 1 : 0));
    files = names.map((n) => join(path, n));
    if (files.length === 0) {
      throw new LabError(
        'IO_ERROR',
        `${path}: no dump files for preset '${preset.name}' (expected names matching ${preset.filePattern})`,
        { details: { file: path } },
      );
    }
  } else {
    files = [path];
  }
  const formats = new Set(files.map((f) => FORMAT_OF_EXT[extname(f).toLowerCase()]));
  if (formats.has(undefined)) {
    const odd = files.find((f) => FORMAT_OF_EXT[extname(f).toLowerCase()] === undefined) as string;
    throw new LabError('BAD_ARGUMENT', `${odd}: unknown file type (expected .jsonl or .parquet)`, {
      details: { file: odd },
    });
  }
  if (formats.size > 1) {
    throw new LabError(
      'BAD_ARGUMENT',
      `${path}: mixes JSONL and Parquet files; point the audit at one format at a time`,
      { details: { file: path } },
    );
  }
  const format = [...formats][0] as DumpFormat;
  if (preset.format !== 'by-extension' && preset.format !== format) {
    throw new LabError(
      'BAD_ARGUMENT',
      `${files[0]}: preset '${preset.name}' reads ${preset.format} files, this is ${format}`,
      { details: { file: files[0] } },
    );
  }
  return { files, format };
}

const RAW: Record<AuditColumn, string> = {
  step: 'r_step',
  group: 'r_group',
  task: 'r_task',
  reward: 'r_reward',
  response: 'r_response',
  action_tokens: 'r_action',
  env_tokens: 'r_env',
  truncated: 'r_truncated',
  mask: 'r_mask',
  advantage: 'r_advantage',
  quality: 'r_quality',
  independent: 'r_independent',
};

interface SourcePlan {
  files: string[];
  format: DumpFormat;
  /** Canonical column -> source column, for the columns that exist in the files. */
  columns: Partial<Record<AuditColumn, string>>;
  rewardRule: AuditPreset['reward'];
  rewardColumns: string[];
  /**
   * JSONL only: read the files as physical lines and parse each in SQL (`rawLinesSql`) instead of
   * DuckDB's `read_json`. Slower, but every row knows its physical line, and malformed lines, lines
   * that are not objects and objects with a duplicated mapped key become bad rows instead of errors.
   * Used with `--skip-bad-rows` once the fast reader has met such a line, and to locate them.
   */
  rawLines: boolean;
  /**
   * With `rawLines`: read the files as bytes (`read_blob`) and decode each line on its own, so that
   * a line that is not valid UTF-8 is a bad row at its line (`read_text` refuses the whole file).
   * Slower; set when `read_text` has refused a file (`withBytesFallback`).
   */
  bytes: boolean;
  /** TRL `reward_weights`: one weight per reward column (null: all 1). */
  rewardWeights: readonly number[] | null;
}

function fileList(files: readonly string[]): string {
  return `[${files.map(sqlString).join(', ')}]`;
}

/** The raw relation: `__file`, `__pos` and one `r_*` column per mapped canonical column. */
function sourceSql(plan: SourcePlan, files: readonly string[], withPosition: boolean): string {
  const sources = new Set<string>(Object.values(plan.columns));
  for (const c of plan.rewardColumns) sources.add(c);
  const select = (Object.entries(plan.columns) as [AuditColumn, string][]).map(
    ([canon, src]) => `${sqlIdent(src)} AS ${RAW[canon]}`,
  );
  for (const [i, c] of plan.rewardColumns.entries()) select.push(`${sqlIdent(c)} AS r_rew_${i}`);
  if (plan.format === 'jsonl' && plan.rawLines) return rawLinesSql(plan, files, select);
  if (plan.format === 'jsonl') {
    const maskSource = plan.columns.mask;
    const declared = [...sources]
      .map((s) => `${sqlString(s)}: ${s === maskSource ? "'JSON'" : "'VARCHAR'"}`)
      .join(', ');
    // No file name column: JSONL groups by label, and a bad line is located file by file.
    return `SELECT NULL::VARCHAR AS __file, ${withPosition ? 'ordinality' : 'NULL'} AS __pos, NULL::VARCHAR AS r_json_problem, ${select.join(', ')}
      FROM read_json(${fileList(files)}, format='newline_delimited',
        columns={${declared}}, ignore_errors=false)
      ${withPosition ? 'WITH ORDINALITY' : ''}`;
  }
  return `SELECT __file, file_row_number AS __pos, NULL::VARCHAR AS r_json_problem, ${select.join(', ')}
    FROM read_parquet(${fileList(files)}, filename='__file', file_row_number=true, union_by_name=true)`;
}

/**
 * The raw relation of JSONL files read line by line: `__pos` is the 1-based physical line (blank
 * lines are counted and dropped, a trailing `\r` is ignored), `r_json_problem` names what makes a
 * line unreadable (malformed JSON, not an object, a mapped key given twice; its value would be
 * ambiguous: DuckDB keeps the first, Python's json the last), and the mapped fields are extracted
 * as text (the mask as JSON), as `read_json` with VARCHAR columns would give them.
 */
function rawLinesSql(plan: SourcePlan, files: readonly string[], select: readonly string[]): string {
  const sources = new Set<string>(Object.values(plan.columns));
  for (const c of plan.rewardColumns) sources.add(c);
  const keyList = `[${[...sources].map(sqlString).join(', ')}]::VARCHAR[]`;
  const pointer = (key: string) => sqlString(`/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`);
  const extracted = [...sources].map(
    (src) =>
      `CASE WHEN r_json_problem IS NULL THEN ${src === plan.columns.mask ? 'json_extract' : 'json_extract_string'}(line, ${pointer(src)}) END AS ${sqlIdent(src)}`,
  );
  return `SELECT __file, __pos, r_json_problem, ${select.join(', ')} FROM (
    SELECT __file, __pos, line, r_json_problem, ${extracted.join(', ')} FROM (
      SELECT __file, __pos, line,
        CASE WHEN line IS NULL THEN 'not valid UTF-8 text'
             WHEN NOT json_valid(line) THEN 'malformed JSON'
             WHEN json_type(line) <> 'OBJECT' THEN 'not a JSON object'
             WHEN len(dups) > 0 THEN 'duplicate key ' || array_to_string(list_sort(dups), ', ') || ' (its value is ambiguous)'
        END AS r_json_problem
      FROM (
        SELECT __file, __pos, line,
          CASE WHEN json_valid(line) AND json_type(line) = 'OBJECT' THEN
            list_distinct(list_filter(list_filter(json_keys(line), k -> list_contains(${keyList}, k)),
              (k, i) -> list_position(list_filter(json_keys(line), k2 -> list_contains(${keyList}, k2)), k) <> i))
          ELSE []::VARCHAR[] END AS dups
        FROM (
          SELECT __file, __pos, rtrim(line, chr(13)) AS line FROM (${physicalLinesSql(plan, files)})
          WHERE line IS NULL OR trim(rtrim(line, chr(13))) <> ''))))`;
}

/**
 * The files' physical lines (`__file`, `__pos` 1-based, `line`), a byte order mark at the start of
 * a file skipped. As text (`read_text`, which refuses a file that is not valid UTF-8), or with
 * `plan.bytes` as bytes: DuckDB's BLOB-to-VARCHAR cast writes every byte that is not printable
 * ASCII, the newline, the quote and the backslash included, as `\xNN`, so the escaped text splits on
 * the four characters `\x0A` exactly where the bytes split on a newline, and casting a piece back to
 * BLOB restores its bytes; `try(decode(...))` then gives the line's text, or NULL when it is not
 * valid UTF-8.
 */
function physicalLinesSql(plan: SourcePlan, files: readonly string[]): string {
  if (!plan.bytes) {
    return `SELECT filename AS __file, generate_subscripts(lines, 1) AS __pos, unnest(lines) AS line
      FROM (SELECT filename, string_split(${stripBom('content')}, chr(10)) AS lines FROM read_text(${fileList(files)}))`;
  }
  const escaped = 'CAST(content AS VARCHAR)';
  const bom = "'\\xEF\\xBB\\xBF'";
  return `SELECT __file, __pos, try(decode(CAST(piece AS BLOB))) AS line FROM (
      SELECT filename AS __file, generate_subscripts(pieces, 1) AS __pos, unnest(pieces) AS piece
      FROM (SELECT filename, string_split(CASE WHEN starts_with(${escaped}, ${bom}) THEN substr(${escaped}, 13) ELSE ${escaped} END, '\\x0A') AS pieces
            FROM read_blob(${fileList(files)})))`;
}

/**
 * A file's text without the UTF-8 byte order mark some Windows tools write at its start (U+FEFF;
 * Python's json, which verl and TRL write with, never does, and `json.loads` would refuse it on a
 * line). Only the start of the file: a BOM on a later line stays part of that line, which is then
 * malformed.
 */
function stripBom(content: string): string {
  return `CASE WHEN starts_with(${content}, chr(65279)) THEN substr(${content}, 2) ELSE ${content} END`;
}

/** DuckDB's read_text refusing a file that is not valid UTF-8 (or read_json a string in it). */
function isUtf8Error(e: unknown): boolean {
  return /(valid|invalid) UTF-8/i.test(e instanceof Error ? e.message : String(e));
}

/**
 * Runs `run` (a read of `plan`'s files line by line); if DuckDB refuses a file as text that is not
 * valid UTF-8, switches `plan` to reading bytes (`plan.bytes`), where such a line is a bad row at
 * its line, and runs it again.
 */
async function withBytesFallback<T>(plan: SourcePlan, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (plan.bytes || !isUtf8Error(e)) throw e;
    plan.bytes = true;
    return await run();
  }
}

/** DuckDB's read_json refusing a file that starts with a byte order mark. */
function isBomError(e: unknown): boolean {
  return /byte order mark/i.test(e instanceof Error ? e.message : String(e));
}

/**
 * SQL: the DOUBLE `typed` is an integer within ±2^53, the integers a float64 (and so the record's
 * JSON numbers) holds exactly; beyond it a value such as 1e23 would not even fit the BIGINT the
 * step and the token counts are cast to. NULL and non-finite values are not.
 */
function exactInteger(typed: string): string {
  return `coalesce(isfinite(${typed}) AND ${typed} = floor(${typed}) AND abs(${typed}) <= 9007199254740992, false)`;
}

/** Typed canonical columns plus `problem` (NULL for a good row), over the raw relation. */
function typedSql(plan: SourcePlan, source: string): string {
  const has = (c: AuditColumn) => plan.columns[c] !== undefined;
  const name = (c: AuditColumn) => JSON.stringify(plan.columns[c]);
  const shown = (raw: string) => `left(CAST(${raw} AS VARCHAR), 40)`;
  const checks: string[] = [];
  const rawCols = [
    ...(Object.keys(plan.columns) as AuditColumn[]).map((c) => RAW[c]),
    ...plan.rewardColumns.map((_, i) => `r_rew_${i}`),
  ];
  checks.push('WHEN r_json_problem IS NOT NULL THEN r_json_problem');
  checks.push(`WHEN ${rawCols.map((c) => `${c} IS NULL`).join(' AND ')} THEN 'none of the expected fields'`);
  checks.push(`WHEN r_step IS NULL THEN 'missing step (field ${name('step')})'`);
  checks.push(
    `WHEN NOT (${exactInteger('step_d')}) THEN 'step is not an integer within ±2^53: ' || ${shown('r_step')}`,
  );
  checks.push(`WHEN r_group IS NULL THEN 'missing group label (field ${name('group')})'`);
  checks.push(`WHEN r_task IS NULL THEN 'missing task (field ${name('task')})'`);
  if (plan.rewardRule === 'column') {
    checks.push(`WHEN r_reward IS NULL THEN 'missing reward (field ${name('reward')})'`);
    checks.push(`WHEN reward IS NULL THEN 'reward is not a number: ' || ${shown('r_reward')}`);
  } else {
    checks.push(`WHEN reward IS NULL THEN 'no reward column has a value (${plan.rewardColumns.join(', ')})'`);
  }
  checks.push(`WHEN NOT isfinite(reward) THEN 'reward is not finite: ' || CAST(reward AS VARCHAR)`);
  const countCheck = (c: AuditColumn, raw: string, typed: string) => {
    if (!has(c)) return;
    checks.push(`WHEN ${raw} IS NULL THEN 'missing ${c} (field ${name(c)})'`);
    checks.push(
      `WHEN NOT (${exactInteger(typed)}) OR ${typed} < 0 THEN '${c} is not a non-negative integer within 2^53: ' || ${shown(raw)}`,
    );
  };
  countCheck('action_tokens', 'r_action', 'action_d');
  countCheck('env_tokens', 'r_env', 'env_d');
  if (has('truncated')) {
    checks.push(`WHEN r_truncated IS NULL THEN 'missing truncated (field ${name('truncated')})'`);
    checks.push(`WHEN truncated IS NULL THEN 'truncated is not a boolean: ' || ${shown('r_truncated')}`);
  }
  if (has('mask')) {
    checks.push(`WHEN r_mask IS NULL THEN 'missing mask (field ${name('mask')})'`);
    checks.push(
      `WHEN mask_l IS NULL OR len(list_filter(mask_l, x -> x IS NULL OR (x <> 0 AND x <> 1))) > 0 THEN 'mask is not an array of 0/1: ' || ${shown('r_mask')}`,
    );
  }
  if (has('advantage')) {
    checks.push(`WHEN r_advantage IS NULL THEN 'missing advantage (field ${name('advantage')})'`);
    checks.push(
      `WHEN advantage IS NULL OR NOT isfinite(advantage) THEN 'advantage is not a finite number: ' || ${shown('r_advantage')}`,
    );
  }
  if (has('response')) {
    checks.push(`WHEN r_response IS NULL THEN 'missing response (field ${name('response')})'`);
  }
  for (const c of ['quality', 'independent'] as const) {
    if (!has(c)) continue;
    checks.push(`WHEN ${RAW[c]} IS NULL THEN 'missing ${c} (field ${name(c)})'`);
    checks.push(
      `WHEN ${c} IS NULL OR NOT isfinite(${c}) THEN '${c} is not a finite number: ' || ${shown(RAW[c])}`,
    );
  }
  return `SELECT *, CASE ${checks.join('\n      ')} ELSE NULL END AS problem FROM (${typedInnerSql(plan, source)})`;
}

/** The raw relation with typed columns added (step_d, grp, task, reward, resp_len, action_d, ...). */
function typedInnerSql(plan: SourcePlan, source: string): string {
  const has = (c: AuditColumn) => plan.columns[c] !== undefined;
  const rewardExpr =
    plan.rewardRule === 'column'
      ? 'TRY_CAST(r_reward AS DOUBLE)'
      : `list_sum(list_filter([${plan.rewardColumns.map((_, i) => `${plan.rewardWeights ? `${plan.rewardWeights[i]} * ` : ''}TRY_CAST(r_rew_${i} AS DOUBLE)`).join(', ')}]::DOUBLE[], x -> x IS NOT NULL AND NOT isnan(x)))`;
  const opt = (c: AuditColumn, expr: string, type: string) => (has(c) ? expr : `NULL::${type}`);
  return `
    SELECT *,
      TRY_CAST(r_step AS DOUBLE) AS step_d,
      CAST(r_group AS VARCHAR) AS grp,
      CAST(r_task AS VARCHAR) AS task,
      ${rewardExpr} AS reward,
      ${opt('response', 'length(CAST(r_response AS VARCHAR))', 'BIGINT')} AS resp_len,
      ${opt('action_tokens', 'TRY_CAST(r_action AS DOUBLE)', 'DOUBLE')} AS action_d,
      ${opt('env_tokens', 'TRY_CAST(r_env AS DOUBLE)', 'DOUBLE')} AS env_d,
      ${opt('truncated', 'TRY_CAST(r_truncated AS BOOLEAN)', 'BOOLEAN')} AS truncated,
      ${opt('mask', 'TRY_CAST(r_mask AS DOUBLE[])', 'DOUBLE[]')} AS mask_l,
      ${opt('advantage', 'TRY_CAST(r_advantage AS DOUBLE)', 'DOUBLE')} AS advantage,
      ${opt('quality', 'TRY_CAST(r_quality AS DOUBLE)', 'DOUBLE')} AS quality,
      ${opt('independent', 'TRY_CAST(r_independent AS DOUBLE)', 'DOUBLE')} AS independent
    FROM (${source})`;
}

/**
 * Per mapped column, when its value is missing and when it is present but invalid (null: it cannot
 * be; the same tests as the checks of `typedSql`, which words the message of a located bad row).
 */
interface ColumnStatus {
  missing: string;
  invalid: string | null;
}

function statusSql(plan: SourcePlan): Partial<Record<AuditColumn, ColumnStatus>> {
  const out: Partial<Record<AuditColumn, ColumnStatus>> = {};
  const has = (c: AuditColumn) => plan.columns[c] !== undefined;
  const st = (missing: string, invalid: string | null): ColumnStatus => ({ missing, invalid });
  const count = (typed: string) => `NOT (${exactInteger(typed)}) OR ${typed} < 0`;
  out.step = st('r_step IS NULL', `NOT (${exactInteger('step_d')})`);
  out.group = st('r_group IS NULL', null);
  out.task = st('r_task IS NULL', null);
  out.reward =
    plan.rewardRule === 'column'
      ? st('r_reward IS NULL', 'reward IS NULL OR NOT isfinite(reward)')
      : st('false', 'reward IS NULL OR NOT isfinite(reward)');
  if (has('action_tokens')) out.action_tokens = st('r_action IS NULL', count('action_d'));
  if (has('env_tokens')) out.env_tokens = st('r_env IS NULL', count('env_d'));
  if (has('truncated')) out.truncated = st('r_truncated IS NULL', 'truncated IS NULL');
  if (has('mask'))
    out.mask = st(
      'r_mask IS NULL',
      'mask_l IS NULL OR len(list_filter(mask_l, x -> x IS NULL OR (x <> 0 AND x <> 1))) > 0',
    );
  if (has('advantage'))
    out.advantage = st('r_advantage IS NULL', 'advantage IS NULL OR NOT isfinite(advantage)');
  if (has('response')) out.response = st('r_response IS NULL', null);
  for (const c of ['quality', 'independent'] as const) {
    if (has(c)) out[c] = st(`${RAW[c]} IS NULL`, `${c} IS NULL OR NOT isfinite(${c})`);
  }
  return out;
}

/** Is this DuckDB's "Malformed JSON in file F ..." or "JSON transform error in file F ..."? Returns F. */
function jsonErrorFile(e: unknown): string | null {
  const message = e instanceof Error ? e.message : String(e);
  const m = /(?:Malformed JSON|JSON transform error) in file "(.*?)"/.exec(message);
  return m ? (m[1] as string) : null;
}

/**
 * The error for a JSONL file that DuckDB's reader refused: the first unreadable line of that file,
 * found by reading it line by line (DuckDB's own line number counts records, not physical lines,
 * and is off by one), as a PARSE_ERROR naming file and physical line. Anything else stays DuckDB's
 * message (which names the file).
 */
async function jsonReadError(db: DuckSession, plan: SourcePlan, e: unknown): Promise<LabError> {
  const file = jsonErrorFile(e);
  if (file === null || plan.format !== 'jsonl') return duckError(e, 'reading the dump', 'PARSE_ERROR');
  const raw = { ...plan, rawLines: true, bytes: plan.bytes || isUtf8Error(e) };
  let first: Record<string, unknown> | undefined;
  try {
    first = (
      await withBytesFallback(raw, () =>
        db.all(
          `SELECT __pos AS line, r_json_problem AS problem FROM (${sourceSql(raw, [file], true)})
           WHERE r_json_problem IS NOT NULL ORDER BY __pos LIMIT 1`,
        ),
      )
    )[0];
  } catch {
    first = undefined;
  }
  if (!first) return duckError(e, 'reading the dump', 'PARSE_ERROR');
  const line = Number(first.line);
  return new LabError(
    'PARSE_ERROR',
    `${file} line ${line}: ${String(first.problem)}; use --skip-bad-rows to skip and count such lines`,
    { cause: e, details: { file, line } },
  );
}

function describeBad(b: BadRow): string {
  return b.line !== undefined ? `${b.file} line ${b.line}` : `${b.file} row ${b.row}`;
}

/**
 * Reward sums are kept twice: plainly (`rs`) and scaled by 2^-600 (`rs_s`). Finite rewards near
 * ±1.8e308 overflow a plain float64 sum (to ±Infinity, or NaN once both meet) although their mean
 * is finite; the scaled sum cannot overflow, and loses only rewards below ~1e-143 relative to sums
 * that large. `meanReward` (groupStats.ts) takes the plain sum when it is finite, else the scaled one.
 */
const REWARD_SUM_SCALE = 'pow(2.0, -600)';

/**
 * Loads and validates a dump: the views and tables `audit_parts` (per group part sums), `audit_good`
 * (its good parts) and `audit_hist` (the good rows' (reward, length) histogram) that the statistics
 * read. Phases: the source plan (`planSource`), the typed rows view (`sourceViewSql`), the one read of
 * the files (`partsQueries`), which columns the dump has (`checkColumnsPresent`), then the bad rows.
 */
export async function loadDump(
  db: DuckSession,
  dump: DumpFiles,
  preset: AuditPreset,
  mapping: { columns: Partial<Record<AuditColumn, string>>; rewardRule: AuditPreset['reward'] },
  options: LoadOptions,
): Promise<LoadedDump> {
  const plan = await planSource(db, dump, preset, mapping, options);
  const has = (c: AuditColumn) => plan.columns[c] !== undefined;
  const status = statusSql(plan);
  const mapped = Object.keys(status) as AuditColumn[];
  const bit = (c: AuditColumn) => 2 ** mapped.indexOf(c);
  // A view, defined again when the plan switches to the line-by-line reader.
  const defineSource = () => db.exec(sourceViewSql(plan, status, bit));
  await defineSource();
  // Groups: (step, label), or contiguous blocks of a file (the size found by a first pass).
  const grouping = await resolveGrouping(db, plan, options.grouping);
  const parts = partsQueries(plan, grouping, options);
  try {
    await db.exec(parts.table);
  } catch (e) {
    // A line DuckDB's JSON reader refuses: an error at its physical line, or, with --skip-bad-rows,
    // the line-by-line reader, which turns such lines into counted bad rows. A file that starts with
    // a byte order mark (which read_json refuses) is read line by line too, with the mark skipped.
    if (jsonErrorFile(e) === null || (!options.skipBadRows && !isBomError(e))) {
      throw await jsonReadError(db, plan, e);
    }
    plan.rawLines = true;
    plan.bytes = isUtf8Error(e);
    try {
      await withBytesFallback(plan, async () => {
        await defineSource();
        await db.exec(parts.table);
      });
    } catch (e2) {
      throw duckError(e2, 'reading the dump', 'PARSE_ERROR');
    }
  }
  await db.exec(parts.view);
  const rowsRead = await checkColumnsPresent(db, plan, preset, mapped, bit);
  const presentMask = mapped
    .filter((c) => plan.columns[c] !== undefined || c === 'reward')
    .reduce((m, c) => m + bit(c), 0);
  const badExpr = `(s_json OR (missing_bits | invalid_bits) & ${presentMask} <> 0)`;
  const badRows = Number(
    (await db.all(`SELECT coalesce(sum(n) FILTER (WHERE ${badExpr}), 0) AS bad FROM audit_parts`))[0]?.bad ??
      0,
  );
  const badExamples = badRows > 0 ? await locateBadRows(db, plan, 5) : [];
  if (badRows > 0 && !options.skipBadRows) {
    const first = badExamples[0];
    const where = first ? describeBad(first) : (dump.files[0] as string);
    // An unreadable line is a parse error, as when the fast JSON reader meets it (jsonReadError).
    throw new LabError(
      first?.unreadable ? 'PARSE_ERROR' : 'BAD_VALUE',
      `${where}: ${first?.problem ?? 'malformed row'}${badRows > 1 ? ` (${badRows} bad rows in all)` : ''}; use --skip-bad-rows to skip and count them`,
      { details: { file: first?.file, line: first?.line, row: first?.row, badRows } },
    );
  }
  await db.exec(`CREATE OR REPLACE TEMP VIEW audit_good AS SELECT * FROM audit_parts WHERE NOT ${badExpr}`);
  // The (reward, length) histogram of the good rows: from the grouping set, or from the lists.
  await db.exec(
    parts.lists
      ? `CREATE OR REPLACE TEMP TABLE audit_hist AS SELECT reward, length, count(*) AS n FROM (
           SELECT unnest(rws) AS reward, unnest(lens) AS length FROM audit_good) GROUP BY reward, length`
      : `CREATE OR REPLACE TEMP VIEW audit_hist AS SELECT h_reward AS reward, h_length AS length, n
           FROM audit_all WHERE hist AND NOT ${badExpr}`,
  );
  const tokensKnown = (has('action_tokens') || has('mask')) && (has('env_tokens') || has('mask'));
  const kept = [{ n: rowsRead - badRows }];
  const present: AuditColumn[] = (Object.keys(plan.columns) as AuditColumn[]).filter((c) => c !== 'reward');
  present.push('reward');
  return {
    files: dump.files,
    format: dump.format,
    columns: plan.columns,
    present,
    rewardColumns: plan.rewardRule === 'column' ? [plan.columns.reward as string] : plan.rewardColumns,
    rowsRead,
    rowsKept: Number(kept[0]?.n ?? 0),
    badRows,
    badExamples,
    lengthUnit: tokensKnown ? 'tokens' : has('response') ? 'characters' : null,
    grouping,
    onePartPerGroup: plan.columns.group === plan.columns.task,
    rewardLists: parts.lists,
  };
}

/**
 * The source plan of a load: the mapped columns (for Parquet, those its schema has; the TRL reward
 * columns), and the reward weights checked against the reward columns.
 */
async function planSource(
  db: DuckSession,
  dump: DumpFiles,
  preset: AuditPreset,
  mapping: { columns: Partial<Record<AuditColumn, string>>; rewardRule: AuditPreset['reward'] },
  options: LoadOptions,
): Promise<SourcePlan> {
  const plan: SourcePlan = {
    files: dump.files,
    format: dump.format,
    columns: { ...mapping.columns },
    rewardRule: mapping.rewardRule,
    rewardColumns: [],
    rawLines: false,
    bytes: false,
    rewardWeights: options.rewardWeights,
  };
  if (plan.rewardRule === 'sum-of-numeric-columns') delete plan.columns.reward;
  if (options.rankColumns) {
    plan.columns.quality = options.rankColumns.quality;
    plan.columns.independent = options.rankColumns.independent;
  }

  if (dump.format === 'parquet') await planParquetColumns(db, plan, preset);
  if (options.rewardWeights !== null) {
    const columns = plan.rewardRule === 'column' ? [plan.columns.reward as string] : plan.rewardColumns;
    if (options.rewardWeights.length !== columns.length) {
      // A usage error (exit 2) although only the dump tells: the command line gave the wrong count.
      throw new LabError(
        'BAD_CLI',
        `--reward-weights: ${options.rewardWeights.length} weight(s) for ${columns.length} reward column(s) (${columns.join(', ')}, in this order)`,
        { details: { field: '--reward-weights' } },
      );
    }
    if (plan.rewardRule === 'column') plan.rewardWeights = null;
  }
  return plan;
}

/**
 * The typed rows, as a view over the files (`audit_src`): a status per mapped column, the derived
 * numbers (no raw text: the response as its length, the mask as its sums). `bit(c)` is the status
 * bit of column `c`.
 */
function sourceViewSql(
  plan: SourcePlan,
  status: Partial<Record<AuditColumn, ColumnStatus>>,
  bit: (c: AuditColumn) => number,
): string {
  const has = (c: AuditColumn) => plan.columns[c] !== undefined;
  const mapped = Object.keys(status) as AuditColumn[];
  // The status bits as arithmetic on booleans (a row is missing a column, or has it invalid), not
  // a CASE per column: this runs on every row. An invalid test that is NULL counts as valid (as a
  // CASE would take it).
  const missingBits = mapped.map((c) => `CAST(${status[c]?.missing} AS UINTEGER) * ${bit(c)}`);
  const invalidBits = mapped
    .filter((c) => status[c]?.invalid)
    .map(
      (c) =>
        `CAST(NOT (${status[c]?.missing}) AND coalesce(${status[c]?.invalid}, false) AS UINTEGER) * ${bit(c)}`,
    );
  const tokens = has('action_tokens') || has('env_tokens') || has('mask');
  const count = (typed: string) =>
    `CASE WHEN ${exactInteger(typed)} AND ${typed} >= 0 THEN CAST(${typed} AS BIGINT) END`;
  const action = has('mask')
    ? `coalesce(${count('action_d')}, CASE WHEN mask_l IS NOT NULL THEN CAST(coalesce(list_sum(mask_l), 0) AS BIGINT) END)`
    : has('action_tokens')
      ? count('action_d')
      : 'NULL::BIGINT';
  const env = has('mask')
    ? `coalesce(${count('env_d')}, CASE WHEN mask_l IS NOT NULL THEN CAST(len(mask_l) - coalesce(list_sum(mask_l), 0) AS BIGINT) END)`
    : has('env_tokens')
      ? count('env_d')
      : 'NULL::BIGINT';
  return `CREATE OR REPLACE TEMP VIEW audit_src AS
      SELECT __file, __pos, missing_bits, invalid_bits, s_json, step, grp, task, reward, action, env,
        ${tokens ? 'CASE WHEN action IS NOT NULL AND env IS NOT NULL THEN CAST(action + env AS DOUBLE) ELSE CAST(resp_len AS DOUBLE) END' : 'CAST(resp_len AS DOUBLE)'} AS length,
        truncated, advantage, quality, independent
      FROM (
        SELECT __file, __pos, r_json_problem IS NOT NULL AS s_json,
          CAST(${missingBits.join(' + ')} AS UINTEGER) AS missing_bits,
          CAST(${invalidBits.length > 0 ? invalidBits.join(' + ') : '0'} AS UINTEGER) AS invalid_bits,
          CASE WHEN ${exactInteger('step_d')} THEN CAST(step_d AS BIGINT) END AS step,
          grp, task, reward, resp_len, ${action} AS action, ${env} AS env,
          truncated, advantage, quality, independent
        FROM (${typedInnerSql(plan, sourceSql(plan, plan.files, false))}))`;
}

/**
 * The one read of the files: `table` creates `audit_all` (the parts, and the histogram unless lists
 * are kept), `view` defines `audit_parts` over it; `lists`: the parts keep per-group lists of values.
 */
function partsQueries(
  plan: SourcePlan,
  grouping: GroupingUsed,
  options: LoadOptions,
): { table: string; view: string; lists: boolean } {
  const has = (c: AuditColumn) => plan.columns[c] !== undefined;
  const keys =
    grouping.kind === 'label'
      ? ['step', 'grp']
      : [`list_position(${fileList(plan.files)}, __file)`, `__pos // ${grouping.size}`];
  // The one read of the files, grouped two ways at once (GROUPING SETS: one scan, two hash
  // tables): per (group, task, status pattern) sums, the parts; and per (status pattern, reward,
  // length) counts, the histogram that gives the reward distribution and the length quantiles
  // without keeping every row. When the group label is the task (verl: both are the prompt), one
  // string key, not two. Aggregates of columns the plan does not map are constants, not sums of
  // NULLs. Per-group lists of values are built only for the checks that need rows (the TRL
  // advantage recomputation, the ranker audit, --zero-std-tol); then the histogram is unnested
  // from them instead.
  const taskIsLabel = grouping.kind === 'label' && plan.columns.group === plan.columns.task;
  const tokensMapped = has('action_tokens') || has('env_tokens') || has('mask');
  const truncMapped = has('truncated');
  const lists = options.keepAdvantages || options.rankColumns !== null || options.keepRewardLists;
  const pass = options.passValue;
  // Columns stored per part are aggregates only; constants (the sums of unmapped columns), the step
  // when it is a key and the task when it is the label are added by the audit_parts view, so the
  // table does not hold them once per part.
  const stepIsKey = grouping.kind === 'label';
  const stored: string[] = [
    ...(stepIsKey ? [] : ['any_value(step) AS st']),
    'count(*) AS n',
    'min(reward) AS lo',
    'max(reward) AS hi',
    'sum(reward) AS rs',
    `sum(reward * ${REWARD_SUM_SCALE}) AS rs_s`,
    `count(*) FILTER (WHERE reward >= ${pass}) AS correct`,
  ];
  const viewed: string[] = [stepIsKey ? 'k0 AS st' : 'st', 'n', 'lo', 'hi', 'rs', 'rs_s', 'correct'];
  const sums = (names: string[], aggregates: string[]) => {
    if (aggregates.length > 0) {
      stored.push(...aggregates.map((agg, i) => `${agg} AS ${names[i]}`));
      viewed.push(...names);
    } else viewed.push(...names.map((name) => `0 AS ${name}`));
  };
  sums(
    ['token_rows', 'action', 'env', 'with_action', 'max_len'],
    tokensMapped
      ? [
          'count(*) FILTER (WHERE action IS NOT NULL AND env IS NOT NULL)',
          'coalesce(sum(action) FILTER (WHERE env IS NOT NULL), 0)',
          'coalesce(sum(env) FILTER (WHERE action IS NOT NULL), 0)',
          'count(*) FILTER (WHERE action > 0 AND env IS NOT NULL)',
          'coalesce(max(action + env), 0)',
        ]
      : [],
  );
  sums(
    ['trunc_rows', 'trunc', 'trunc_correct', 'trunc_reward', 'trunc_reward_s'],
    truncMapped
      ? [
          'count(truncated)',
          'count(*) FILTER (WHERE truncated)',
          `count(*) FILTER (WHERE truncated AND reward >= ${pass})`,
          'coalesce(sum(reward) FILTER (WHERE truncated), 0)',
          `coalesce(sum(reward * ${REWARD_SUM_SCALE}) FILTER (WHERE truncated), 0)`,
        ]
      : [],
  );
  if (lists) sums(['rws', 'lens'], ['list(reward)', 'list(length)']);
  if (options.keepAdvantages) sums(['advs'], ['list(advantage)']);
  if (options.rankColumns) sums(['qs', 'inds'], ['list(quality)', 'list(independent)']);
  const statusKeys = 'missing_bits, invalid_bits, s_json';
  const partKeys = `k0, k1, ${taskIsLabel ? '' : 'task, '}${statusKeys}`;
  const table = `CREATE OR REPLACE TEMP TABLE audit_all AS
    SELECT ${lists ? '' : 'GROUPING(k0) = 1 AS hist, reward AS h_reward, length AS h_length, '}${partKeys},
      ${stored.join(',\n      ')}
    FROM (SELECT ${keys[0]} AS k0, ${keys[1]} AS k1, * FROM audit_src)
    GROUP BY ${lists ? partKeys : `GROUPING SETS ((${partKeys}), (${statusKeys}, reward, length))`}`;
  const view = `CREATE OR REPLACE TEMP VIEW audit_parts AS
    SELECT k0, k1, ${taskIsLabel ? 'k1' : 'task'} AS task, ${statusKeys}, ${viewed.join(', ')}
    FROM audit_all ${lists ? '' : 'WHERE NOT hist'}`;
  return { table, view, lists };
}

/**
 * Which mapped columns the dump has (a JSONL key that never appears reads as all NULL): a required
 * column (or a ranker column) missing in every row is an error, an optional one is unmapped from the
 * plan. Returns the rows read (none is an error).
 */
async function checkColumnsPresent(
  db: DuckSession,
  plan: SourcePlan,
  preset: AuditPreset,
  mapped: readonly AuditColumn[],
  bit: (c: AuditColumn) => number,
): Promise<number> {
  const counts =
    (
      await db.all(
        `SELECT sum(n) AS n${mapped.map((c) => `, coalesce(sum(n) FILTER (WHERE missing_bits & ${bit(c)} = 0), 0) AS ${RAW[c]}`).join('')} FROM audit_parts`,
      )
    )[0] ?? {};
  const rowsRead = Number(counts.n ?? 0);
  if (rowsRead === 0) {
    throw new LabError('BAD_VALUE', `${plan.files[0]}: the dump has no rows`, {
      details: { file: plan.files[0] },
    });
  }
  for (const c of preset.required) {
    const src = plan.columns[c];
    if (src !== undefined && Number(counts[RAW[c]] ?? 0) === 0) {
      throw new LabError(
        'MISSING_COLUMN',
        `${plan.files[0]}: column '${src}' (${c}) is missing in every row of ${plan.files.length} file(s); map it with --col-${c.replace(/_/g, '-')} SOURCE`,
        { details: { file: plan.files[0], field: src } },
      );
    }
  }
  for (const c of ['quality', 'independent'] as const) {
    const src = plan.columns[c];
    if (src !== undefined && Number(counts[RAW[c]] ?? 0) === 0) {
      throw new LabError(
        'MISSING_COLUMN',
        `${plan.files[0]}: column '${src}' (--${c}) is missing in every row of ${plan.files.length} file(s)`,
        { details: { file: plan.files[0], field: src } },
      );
    }
  }
  const isRequired = (c: AuditColumn) =>
    (preset.required as readonly AuditColumn[]).includes(c) || c === 'quality' || c === 'independent';
  for (const c of mapped) {
    if (!isRequired(c) && Number(counts[RAW[c]] ?? 0) === 0) delete plan.columns[c];
  }
  return rowsRead;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * The contiguous group size (given, or inferred from the runs of equal (step, prompt) within each
 * file), checked: every block of `size` rows of a file must hold one step and one prompt. Positions
 * are the file's row numbers, so skipped bad rows do not shift the blocks.
 */
async function resolveGrouping(
  db: DuckSession,
  plan: SourcePlan,
  grouping: LoadOptions['grouping'],
): Promise<GroupingUsed> {
  // Rows that can be placed: a step and a prompt (other bad rows keep their place in the file).
  const placed = 'step IS NOT NULL AND grp IS NOT NULL';
  if (grouping.kind === 'label') return grouping;
  let size = grouping.size;
  const inferred = size === null;
  if (size === null) {
    const runs = await db.all(`SELECT DISTINCT count(*) AS len FROM (
        SELECT __file, sum(CASE WHEN grp IS NOT DISTINCT FROM prev_grp AND step IS NOT DISTINCT FROM prev_step
                                AND __pos = prev_pos + 1 THEN 0 ELSE 1 END)
                 OVER (PARTITION BY __file ORDER BY __pos) AS run
        FROM (SELECT __file, __pos, grp, step, lag(grp) OVER w AS prev_grp, lag(step) OVER w AS prev_step,
                     lag(__pos) OVER w AS prev_pos
              FROM audit_src WHERE ${placed} WINDOW w AS (PARTITION BY __file ORDER BY __pos)))
      GROUP BY __file, run`);
    size = runs.map((r) => Number(r.len)).reduce((g, n) => gcd(g, n), 0);
    if (size < 2) {
      throw new LabError(
        'BAD_VALUE',
        `${plan.files[0]}: cannot infer the group size (num_generations) from the runs of equal prompts (their greatest common divisor is ${size}); give it with --group-size N`,
        { details: { file: plan.files[0], field: '--group-size' } },
      );
    }
  }
  const broken = (
    await db.all(`SELECT __file AS file, min(__pos) AS first FROM audit_src WHERE ${placed}
      GROUP BY __file, __pos // ${size} HAVING count(DISTINCT grp) > 1 OR count(DISTINCT step) > 1
      ORDER BY list_position(${fileList(plan.files)}, __file), first LIMIT 1`)
  )[0];
  if (broken) {
    const first = Number(broken.first);
    throw new LabError(
      'BAD_VALUE',
      `${String(broken.file)} rows ${first - (first % size)}-${first - (first % size) + size - 1}: a block of ${size} rows holds more than one prompt or step, so the rows are not contiguous groups of ${size}${inferred ? ' (inferred)' : ''}; give the group size (num_generations) with --group-size N`,
      { details: { file: String(broken.file), row: first, field: '--group-size' } },
    );
  }
  return { kind: 'contiguous', size, inferred };
}

/**
 * Parquet: the union schema decides which mapped columns exist (a missing required column is an
 * error naming the files) and, for TRL, which columns are reward functions.
 */
async function planParquetColumns(db: DuckSession, plan: SourcePlan, preset: AuditPreset): Promise<void> {
  let schema: Record<string, unknown>[];
  try {
    schema = await db.all(`DESCRIBE SELECT * FROM read_parquet(${fileList(plan.files)}, union_by_name=true)`);
  } catch (e) {
    throw duckError(e, `${plan.files[0]}: cannot read Parquet`, 'PARSE_ERROR');
  }
  const types = new Map(schema.map((r) => [String(r.column_name), String(r.column_type)]));
  for (const [canon, src] of Object.entries(plan.columns) as [AuditColumn, string][]) {
    if (types.has(src)) continue;
    const rank = canon === 'quality' || canon === 'independent';
    if (rank || (preset.required as readonly AuditColumn[]).includes(canon)) {
      throw new LabError(
        'MISSING_COLUMN',
        `${plan.files[0]}: column '${src}' (${canon}) not found in the Parquet schema (columns: ${[...types.keys()].join(', ')}); ${rank ? `name another with --${canon} COL` : `map it with --col-${canon.replace(/_/g, '-')} SOURCE`}`,
        { details: { file: plan.files[0], field: src } },
      );
    }
    delete plan.columns[canon];
  }
  if (plan.rewardRule === 'sum-of-numeric-columns') {
    const mapped = new Set(Object.values(plan.columns));
    const numeric =
      /^(DOUBLE|FLOAT|REAL|DECIMAL|TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT)/;
    plan.rewardColumns = [...types.entries()]
      .filter(([n, t]) => !TRL_NON_REWARD_COLUMNS.has(n) && !mapped.has(n) && numeric.test(t))
      .map(([n]) => n);
    if (plan.rewardColumns.length === 0) {
      throw new LabError(
        'MISSING_COLUMN',
        `${plan.files[0]}: no numeric reward columns besides step/advantage (columns: ${[...types.keys()].join(', ')}); name one with --reward COL`,
        { details: { file: plan.files[0], field: 'reward' } },
      );
    }
  }
}

/** The first `limit` bad rows, in file order, with their JSONL line or Parquet row. */
async function locateBadRows(db: DuckSession, plan: SourcePlan, limit: number): Promise<BadRow[]> {
  // Bad rows are rare: the files are searched in order (line by line for JSONL) until `limit`
  // bad rows are found.
  const out: BadRow[] = [];
  for (const file of plan.files) {
    if (out.length >= limit) break;
    // JSONL: the line-by-line reader, whose position is the physical line.
    const located = { ...plan, rawLines: plan.format === 'jsonl' };
    const rows = await withBytesFallback(located, () =>
      db.all(
        `SELECT __pos AS pos, problem, r_json_problem IS NOT NULL AS unreadable
         FROM (${typedSql(located, sourceSql(located, [file], true))})
         WHERE problem IS NOT NULL ORDER BY __pos LIMIT ${limit - out.length}`,
      ),
    );
    for (const r of rows) {
      const problem = String(r.problem);
      if (plan.format === 'parquet') out.push({ file, row: Number(r.pos), problem });
      else if (r.unreadable === true) out.push({ file, line: Number(r.pos), problem, unreadable: true });
      else out.push({ file, line: Number(r.pos), problem });
    }
  }
  return out;
}

/** One line per located bad row, for warnings. */
export function formatBadRows(rows: readonly BadRow[]): string[] {
  return rows.map((b) => `${describeBad(b)}: ${b.problem}`);
}
