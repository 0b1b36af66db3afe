/**
 * `labs audit DIR --preset nemo-rl | prime-rl | generic-tokens`: the training–inference mismatch
 * of a run, measured offline from its token-level dump (docs/audit.md, "Token-level dumps").
 *
 * Pipeline (one read of the JSON): DuckDB reads the files in batches, unnests each line, keeps the
 * loss tokens and groups them by sequence in the same statement (`loadSequences`): one row per line
 * in the temp table `mm_seq` with its step, task, first problem, sufficient statistics
 * (core/sequenceMismatchStats.ts), the what-ifs' aggregates and the list of its Δ; prompt, tool-output and
 * padding tokens never leave the scan. The sequences are then streamed into float64 accumulators
 * (core/mismatchFold.ts, whatIf.ts, frameworkWhatIf.ts) overall, per step and per task; the exact
 * quantiles (p99 |Δ|, prime-rl's median of mismatch_kl) and, with `byRound`, the per-round table
 * read the lists. DuckDB keeps `mm_seq` within `memoryLimit` and spills the rest to a temporary
 * directory.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { MismatchAccumulator } from '../../core/mismatchFold.js';
import {
  DEFAULT_PROB_EDGES,
  featureSql,
  sequenceStatSql,
  sequenceStatsFromRow,
} from '../../core/sequenceMismatchStats.js';
import type { JsonValue, RunRecord } from '../../experiments/types.js';
import { VERSION } from '../../experiments/version.js';
import { type DuckSession, openDuckSession } from '../duckdb.js';
import { runArealAudit } from './arealAudit.js';
import {
  GENERIC_TOKEN_COLUMNS,
  listTokenDump,
  type TokenColumns,
  type TokenDump,
  type TokenPresetName,
  tokenSql,
} from './tokenLayouts.js';
import { buildCorrection, type Correction, parseWhatIf, type WhatIfSpec } from './whatIf.js';

export interface TokenAuditOptions {
  preset: TokenPresetName;
  /** generic-tokens column names (defaults GENERIC_TOKEN_COLUMNS). */
  columns: Partial<TokenColumns>;
  skipBadRows: boolean;
  /** `--what-if` specs, in the order given. */
  whatIf: string[];
  /** Rollout-probability bin edges (ascending, from 0 to 1). */
  probEdges: readonly number[];
  /** DuckDB memory limit; the loss tokens beyond it spill to disk. Default '1GB'. */
  memoryLimit?: string;
  /**
   * `--by-round`: the per-round table (a round = a run of consecutive loss tokens). Off by default:
   * it sorts every loss token by sequence and position, which costs about as much as the rest.
   */
  byRound?: boolean;
  /** Files per DuckDB read (each file is one UNION ALL branch). */
  filesPerBatch?: number;
  onProgress?: (done: number, total: number) => void;
  /** Called after each phase with its wall time (profiling; the bench reads it). */
  onPhase?: (phase: string, ms: number) => void;
}

/** The exponent clamp of verl's sequence-level IS (`SAFETY_BOUND = 20`). */
export const SEQUENCE_IS_CLAMP = 20;

interface Slice {
  acc: MismatchAccumulator;
  corrections: Correction[];
}

/** A located bad line or token. */
export interface TokenBadRow {
  file: string;
  line: number;
  problem: string;
}

function newSlice(specs: readonly WhatIfSpec[], bins: number): Slice {
  return { acc: new MismatchAccumulator(bins), corrections: specs.map((s) => buildCorrection(s)) };
}

function checkEdges(edges: readonly number[]): void {
  const ok =
    edges.length >= 2 &&
    edges[0] === 0 &&
    edges[edges.length - 1] === 1 &&
    edges.every((e, i) => Number.isFinite(e) && (i === 0 || e > (edges[i - 1] as number)));
  if (!ok) {
    throw new LabError(
      'BAD_ARGUMENT',
      `--prob-bins: expected ascending edges from 0 to 1 (e.g. 0,0.01,0.1,0.5,0.9,1), got ${edges.join(',')}`,
      { details: { field: '--prob-bins' } },
    );
  }
}

/** Runs the token-level audit of `path` and returns its record (experiment `audit`, `config.kind` 'tokens').
 *
 * Why it is long: it is the audit's one pipeline, read top to bottom (validate the what-ifs, list
 * the dump, open DuckDB with its spill directory, the reading pass, the fold of the sequences
 * overall / per step / per task, the quantile and round passes, the record), and every phase shares
 * the session and the temporary directory that the `finally` removes.
 */
export async function runTokenAudit(
  path: string,
  options: Partial<TokenAuditOptions> & { preset: TokenPresetName },
): Promise<RunRecord> {
  if (options.preset === 'areal') {
    if ((options.whatIf ?? []).length > 0 || options.byRound || options.probEdges) {
      throw new LabError(
        'BAD_CLI',
        '--what-if, --by-round and --prob-bins need per-token log-probs; an AReaL dump has none (it has policy versions)',
        { details: { field: '--preset' } },
      );
    }
    return runArealAudit(path, {
      skipBadRows: options.skipBadRows ?? false,
      ...(options.memoryLimit === undefined ? {} : { memoryLimit: options.memoryLimit }),
    });
  }
  const started = performance.now();
  const edges = options.probEdges ?? DEFAULT_PROB_EDGES;
  checkEdges(edges);
  const cols: TokenColumns = { ...GENERIC_TOKEN_COLUMNS, ...options.columns };
  const specs = (options.whatIf ?? []).map(parseWhatIf);
  // Build once to validate every spec before reading anything.
  for (const s of specs) buildCorrection(s);
  const skip = options.skipBadRows ?? false;
  const dump = await listTokenDump(path, options.preset, skip);
  const tempDir = await mkdtemp(join(tmpdir(), 'labs-audit-'));
  const db = await openDuckSession({ memoryLimit: options.memoryLimit ?? '1GB' });
  try {
    await db.exec(`SET temp_directory = '${tempDir.replaceAll("'", "''")}'`);
    await db.exec('SET preserve_insertion_order = false');
    let mark = performance.now();
    const phase = (name: string) => {
      const now = performance.now();
      options.onPhase?.(name, now - mark);
      mark = now;
    };
    const bins = edges.length - 1;
    const overall = newSlice(specs, bins);
    const statCols = sequenceStatSql(edges);
    const whatIfCols = overall.corrections.flatMap((c, i) => c.sql(`w${i}`));
    const tailCols = RATIO_TAIL_TAUS.flatMap((tau, i) => [
      `count(*) FILTER (WHERE l > ln(${tau}))::DOUBLE AS tail_h${i}`,
      `count(*) FILTER (WHERE l < -ln(${tau}))::DOUBLE AS tail_l${i}`,
    ]);
    await loadSequences(db, dump, options.preset, cols, [...statCols, ...whatIfCols, ...tailCols], {
      perBatch: options.filesPerBatch ?? 16,
      byRound: options.byRound ?? false,
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    phase('load');
    const bad = await badRows(db, dump);
    if (bad.count > 0 && !skip) {
      const first = bad.examples[0] as TokenBadRow;
      throw new LabError(
        'BAD_VALUE',
        `${first.file} line ${first.line}: ${first.problem}${bad.count > 1 ? ` (${bad.count} bad lines in all)` : ''}; use --skip-bad-rows to skip and count them`,
        { details: { file: first.file, line: first.line, badRows: bad.count } },
      );
    }
    const steps = new Map<number, Slice>();
    const tasks = new Map<string, Slice>();
    const linesRead = Number((await db.all('SELECT count(*) AS n FROM mm_seq'))[0]?.n ?? 0);
    const tailSums = new Float64Array(2 * RATIO_TAIL_TAUS.length);
    phase('sequences');
    // One chunk of sequences at a time (JavaScript never holds them all: 100M loss tokens are about
    // 340k rows of ~100 columns), in a fixed order (file, line) so the float64 sums do not depend
    // on DuckDB's thread scheduling.
    await db.streamRows(
      'SELECT * EXCLUDE (ls, ts) FROM mm_seq WHERE problem IS NULL AND n > 0 ORDER BY f, line',
      (rows) => {
        for (const row of rows) {
          const s = sequenceStatsFromRow(row, bins);
          const step = Number(row.step);
          const task = row.task === null || row.task === undefined ? '(none)' : String(row.task);
          for (let i = 0; i < RATIO_TAIL_TAUS.length; i++) {
            tailSums[2 * i] = (tailSums[2 * i] as number) + Number(row[`tail_h${i}`]);
            tailSums[2 * i + 1] = (tailSums[2 * i + 1] as number) + Number(row[`tail_l${i}`]);
          }
          let st = steps.get(step);
          if (!st) {
            st = newSlice(specs, bins);
            steps.set(step, st);
          }
          let tk = tasks.get(task);
          if (!tk) {
            tk = newSlice(specs, bins);
            tasks.set(task, tk);
          }
          for (const slice of [overall, st, tk]) {
            slice.acc.add(s);
            for (const [i, c] of slice.corrections.entries()) c.add(s, row, `w${i}`);
          }
        }
      },
    );
    if (overall.acc.tokens === 0) {
      throw new LabError(
        'EMPTY_MASK',
        `${path}: the dump has no loss-mask token${bad.count > 0 ? ` in its good lines (${bad.count} bad line(s) skipped)` : ''}, so there is no training–inference mismatch to measure`,
        { details: { file: path } },
      );
    }
    phase('fold');
    const quantiles = await quantileRows(db);
    phase('quantiles');
    const tails = ratioTails(tailSums, overall.acc.tokens);
    const rounds = options.byRound ? await roundRows(db) : [];
    phase('rounds');
    return buildTokenRecord({
      path,
      options,
      dump,
      edges,
      specs,
      overall,
      steps,
      tasks,
      quantiles,
      rounds,
      tails,
      bad,
      linesRead,
      wallMs: performance.now() - started,
    });
  } finally {
    db.close();
    await rm(tempDir, { recursive: true, force: true });
  }
}

/**
 * The one read of the files: per batch of files, the loss-token relation (tokenLayouts.ts) grouped
 * by sequence into `mm_seq`, one row per line: its step and task, its first problem (NULL for a
 * good line), the sufficient statistics and the what-if aggregates, and the list of its Δ (`ls`,
 * 8 bytes per loss token; the exact quantiles read it) and, with `byRound`, of its positions (`ts`).
 * Non-loss rows (each line's position-1 row, which carries the task) enter with NULL log-probs, so
 * no aggregate counts them.
 */
async function loadSequences(
  db: DuckSession,
  dump: TokenDump,
  preset: TokenPresetName,
  cols: TokenColumns,
  aggregates: readonly string[],
  o: { perBatch: number; byRound: boolean; onProgress?: (done: number, total: number) => void },
): Promise<void> {
  const files = dump.files;
  const features = `SELECT f, line, step, task, problem, t,
      CASE WHEN loss AND problem IS NULL THEN old END AS old, CASE WHEN loss AND problem IS NULL THEN roll END AS roll`;
  for (let i = 0; i < files.length; i += o.perBatch) {
    const batch = files.slice(i, i + o.perBatch);
    const sql = `SELECT f, line, any_value(step) AS step, any_value(task) AS task,
        arg_min(problem, coalesce(t, 0)) FILTER (WHERE problem IS NOT NULL) AS problem,
        ${aggregates.join(',\n        ')},
        list(l ${o.byRound ? 'ORDER BY t' : ''}) FILTER (WHERE l IS NOT NULL) AS ls,
        ${o.byRound ? 'list(t ORDER BY t) FILTER (WHERE l IS NOT NULL)' : 'NULL::INTEGER[]'} AS ts
      FROM (${featureSql(`${features} FROM (${tokenSql(preset, batch, i, cols)})`)})
      GROUP BY f, line`;
    try {
      await db.exec(i === 0 ? `CREATE TEMP TABLE mm_seq AS ${sql}` : `INSERT INTO mm_seq ${sql}`);
    } catch (e) {
      // DuckDB's out-of-memory is already an OUT_OF_MEMORY LabError naming --memory-limit (the
      // session's guard): the file may be fine, so it is not reported as a parse error.
      if (e instanceof LabError) throw e;
      const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
      throw new LabError(
        'PARSE_ERROR',
        `${batch[0]?.path}${batch.length > 1 ? ` (or one of the next ${batch.length - 1} files)` : ''}: ${message}`,
        { cause: e, details: { file: batch[0]?.path } },
      );
    }
    o.onProgress?.(Math.min(i + o.perBatch, files.length), files.length);
  }
  // the loss tokens of the good lines, for the quantiles and the rounds
  await db.exec(`CREATE TEMP VIEW mm_good AS SELECT step, unnest(ls) AS l FROM mm_seq WHERE problem IS NULL`);
}

async function badRows(
  db: DuckSession,
  dump: TokenDump,
): Promise<{ count: number; examples: TokenBadRow[] }> {
  const count = Number(
    (await db.all('SELECT count(*) AS n FROM mm_seq WHERE problem IS NOT NULL'))[0]?.n ?? 0,
  );
  if (count === 0) return { count, examples: [] };
  const rows = await db.all(
    'SELECT f, line, problem FROM mm_seq WHERE problem IS NOT NULL ORDER BY f, line LIMIT 5',
  );
  return {
    count,
    examples: rows.map((r) => ({
      file: dump.files[Number(r.f)]?.path ?? '?',
      line: Number(r.line),
      problem: String(r.problem),
    })),
  };
}

interface QuantileRow {
  step: number | null;
  n: number;
  p99Linear: number;
  p99NearestRank: number;
  mismatchKlMedian: number;
}

/**
 * p99 of |Δ| (linear interpolation, numpy's default, and the nearest rank ⌈0.99 n⌉-th smallest) and
 * the lower median of the per-token k3 (torch.median), overall and per step, exact, in two scans of
 * the loss tokens and without sorting them: the first counts the values per (step, bucket) on a
 * fine monotone log grid (`BUCKET_SQL`, 64 buckets per octave), the second fetches only the values
 * of the buckets that hold a wanted rank, which are sorted here. Memory: the bucket counts and a
 * few buckets' values, whatever the dump's size.
 */
async function quantileRows(db: DuckSession): Promise<QuantileRow[]> {
  const values = 'SELECT step, abs(l) AS a, (exp(l) - l - 1) AS k FROM mm_good';
  const grouped = await db.all(`SELECT step, GROUPING(ba) AS for_k, ba, bk, count(*) AS n
    FROM (SELECT step, ${bucketSql('a')} AS ba, ${bucketSql('k')} AS bk FROM (${values}))
    GROUP BY GROUPING SETS ((step, ba), (step, bk))`);
  const counts = {
    a: grouped.filter((r) => Number(r.for_k) === 0),
    k: grouped.filter((r) => Number(r.for_k) === 1),
  };
  // per step (and null = all): sorted bucket counts of a and of k
  const hist = (col: 'ba' | 'bk') => {
    const m = new Map<number | null, Map<number, number>>();
    for (const r of counts[col === 'ba' ? 'a' : 'k']) {
      for (const key of [Number(r.step), null]) {
        let h = m.get(key);
        if (!h) {
          h = new Map();
          m.set(key, h);
        }
        h.set(Number(r[col]), (h.get(Number(r[col])) ?? 0) + Number(r.n));
      }
    }
    return m;
  };
  const ha = hist('ba');
  const hk = hist('bk');
  /** The bucket holding 0-based rank `r` and the rank's position inside it. */
  const locate = (h: Map<number, number>, r: number): { bucket: number; offset: number } => {
    let below = 0;
    for (const b of [...h.keys()].sort((x, y) => x - y)) {
      const c = h.get(b) as number;
      if (r < below + c) return { bucket: b, offset: r - below };
      below += c;
    }
    throw new Error(`rank ${r} beyond ${below} values`);
  };
  const keys = [...ha.keys()];
  const wanted: { key: number | null; col: 'a' | 'k'; rank: number }[] = [];
  for (const key of keys) {
    const n = [...(ha.get(key) as Map<number, number>).values()].reduce((x, y) => x + y, 0);
    const h = 0.99 * (n - 1);
    wanted.push({ key, col: 'a', rank: Math.floor(h) }, { key, col: 'a', rank: Math.ceil(h) });
    wanted.push(
      { key, col: 'a', rank: Math.ceil(0.99 * n) - 1 },
      { key, col: 'k', rank: Math.floor((n - 1) / 2) },
    );
  }
  const located = wanted.map((w) => ({
    ...w,
    ...locate((w.col === 'a' ? ha : hk).get(w.key) as Map<number, number>, w.rank),
  }));
  // The wanted order statistics, by DuckDB over the few buckets that hold them (a bucket of many
  // tied values is sorted by DuckDB, which spills, never brought into JavaScript).
  const targets = located.map(
    (w) => `('${w.col}', ${w.bucket}, ${w.key === null ? 'NULL::BIGINT' : w.key}, ${w.offset + 1})`,
  );
  const inBuckets = (col: 'a' | 'k') => {
    const bs = [...new Set(located.filter((w) => w.col === col).map((w) => w.bucket))];
    return bs.length > 0 ? `b${col} IN (${bs.join(', ')})` : 'false';
  };
  const ranked = (col: 'a' | 'k', byStep: boolean) =>
    `SELECT '${col}' AS col, b${col} AS b, ${byStep ? 'step' : 'NULL::BIGINT'} AS key, ${col} AS v,
       row_number() OVER (PARTITION BY b${col}${byStep ? ', step' : ''} ORDER BY ${col}) AS rn FROM sub WHERE ${inBuckets(col)}`;
  const picked = await db.all(`WITH sub AS (
      SELECT step, a, k, ${bucketSql('a')} AS ba, ${bucketSql('k')} AS bk FROM (${values})
      WHERE ${inBuckets('a').replaceAll('ba', bucketSql('a'))} OR ${inBuckets('k').replaceAll('bk', bucketSql('k'))}),
    targets(col, b, key, rn) AS (VALUES ${targets.join(', ')})
    SELECT r.col, r.b, r.key, r.rn, r.v FROM (
      ${ranked('a', true)} UNION ALL ${ranked('a', false)} UNION ALL ${ranked('k', true)} UNION ALL ${ranked('k', false)}) r
    JOIN targets t ON r.col = t.col AND r.b = t.b AND r.key IS NOT DISTINCT FROM t.key AND r.rn = t.rn`);
  const valueAt = (w: (typeof located)[number]): number => {
    const hit = picked.find(
      (r) =>
        r.col === w.col &&
        Number(r.b) === w.bucket &&
        (r.key === null ? w.key === null : Number(r.key) === w.key) &&
        Number(r.rn) === w.offset + 1,
    );
    return hit ? Number(hit.v) : Number.NaN;
  };
  const quantiles = keys.map((key) => {
    const mine = located.filter((w) => w.key === key);
    const [lo, hi, near, med] = mine.map(valueAt) as [number, number, number, number];
    const n = [...(ha.get(key) as Map<number, number>).values()].reduce((x, y) => x + y, 0);
    const frac = 0.99 * (n - 1) - Math.floor(0.99 * (n - 1));
    // numpy's _lerp: a + (b − a)·t, or b − (b − a)·(1 − t) when t >= 0.5
    const p99 = frac >= 0.5 ? hi - (hi - lo) * (1 - frac) : lo + (hi - lo) * frac;
    return { step: key, n, p99Linear: p99, p99NearestRank: near, mismatchKlMedian: med };
  });
  return quantiles;
}

/**
 * A monotone integer bucket of a double: 0 for 0, ±(200000 + ⌊64·log2|x|⌋) by sign, so the buckets
 * sort as the values do and each spans 1/64 of an octave.
 */
function bucketSql(col: string): string {
  return `CASE WHEN ${col} > 0 THEN 200000 + floor(64 * log2(${col})) WHEN ${col} < 0 THEN -(200000 + floor(64 * log2(-${col}))) ELSE 0 END`;
}

/** The thresholds of the ratio's tail table (ρ = exp(Δ) above τ, below 1/τ). */
export const RATIO_TAIL_TAUS: readonly number[] = Object.freeze([
  1.001, 1.01, 1.05, 1.1, 1.25, 1.5, 2, 3, 5, 10, 100,
]);

/**
 * The ratio's tail, overall: for each τ, the fraction of loss tokens with ρ > τ, with ρ < 1/τ, and
 * either (AReaL's two-sided F(τ)); a complementary CDF of |Δ| at Δ = ln τ.
 */
function ratioTails(sums: Float64Array, n: number): Record<string, JsonValue>[] {
  return RATIO_TAIL_TAUS.map((tau, i) => {
    const h = sums[2 * i] as number;
    const l = sums[2 * i + 1] as number;
    return {
      tau,
      log10_tau: Math.log10(tau),
      fraction_high: h / n,
      fraction_low: l / n,
      fraction_two_sided: (h + l) / n,
    };
  });
}

interface RoundRow {
  round: number;
  sequences: number;
  tokens: number;
  mean_abs_delta: number;
  k3_kl: number;
}

/**
 * Per multi-turn round: a round is a maximal run of consecutive loss tokens of a sequence (a gap,
 * such as tool output, starts the next round). Derivable from the loss mask alone.
 */
async function roundRows(db: DuckSession): Promise<RoundRow[]> {
  const rows = await db.all(`SELECT round, count(DISTINCT (f, line)) AS sequences, count(*) AS tokens,
      avg(abs(l)) AS mean_abs_delta, avg(exp(l) - l - 1) AS k3_kl
    FROM (SELECT f, line, l, sum(CASE WHEN t = prev_t + 1 THEN 0 ELSE 1 END) OVER w2 AS round
      FROM (SELECT f, line, t, l, lag(t) OVER (PARTITION BY f, line ORDER BY t) AS prev_t
            FROM (SELECT f, line, unnest(ts) AS t, unnest(ls) AS l FROM mm_seq WHERE problem IS NULL))
      WINDOW w2 AS (PARTITION BY f, line ORDER BY t ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW))
    GROUP BY round ORDER BY round`);
  return rows.map((r) => ({
    round: Number(r.round),
    sequences: Number(r.sequences),
    tokens: Number(r.tokens),
    mean_abs_delta: Number(r.mean_abs_delta),
    k3_kl: Number(r.k3_kl),
  }));
}

interface RecordInput {
  path: string;
  options: Partial<TokenAuditOptions> & { preset: TokenPresetName };
  dump: TokenDump;
  edges: readonly number[];
  specs: WhatIfSpec[];
  overall: Slice;
  steps: Map<number, Slice>;
  tasks: Map<string, Slice>;
  quantiles: QuantileRow[];
  rounds: RoundRow[];
  tails: Record<string, JsonValue>[];
  bad: { count: number; examples: TokenBadRow[] };
  linesRead: number;
  wallMs: number;
}

const prefixed = (m: Record<string, number>) =>
  Object.fromEntries(Object.entries(m).map(([k, v]) => [`rollout_corr/${k}`, v]));

/** Non-finite values never reach a record: null instead (the record's JSON would say "NaN"). */
function finite(v: number): JsonValue {
  return Number.isFinite(v) ? v : null;
}

function sliceMetrics(slice: Slice, q: QuantileRow | undefined): Record<string, JsonValue> {
  const m: Record<string, JsonValue> = {};
  for (const [k, v] of Object.entries({
    ...prefixed(slice.acc.offPolicy()),
    ...slice.acc.deltaStats(),
    ...slice.acc.aliases(),
  }))
    m[k] = finite(v);
  if (q) {
    m.p99_abs_delta = finite(q.p99Linear);
    m.p99_abs_delta_nearest_rank = finite(q.p99NearestRank);
    m['prime_rl/mismatch_kl/all/median'] = finite(q.mismatchKlMedian);
  }
  return m;
}

/** The literature's warning: sequence-level IS weights exp(Σ Δ) degenerate once length × KL nears the clamp. */
export function sequenceIsNote(acc: MismatchAccumulator): string {
  const worst = acc.lengthTimesKl();
  const typical = acc.meanLengthTimesKl();
  const where =
    worst >= SEQUENCE_IS_CLAMP
      ? 'at or beyond'
      : worst >= SEQUENCE_IS_CLAMP / 4
        ? 'within a factor 4 of'
        : 'well below';
  return `sequence-level IS: longest sequence × mean token KL (k3) = ${worst.toPrecision(3)} (mean length × KL = ${typical.toPrecision(3)}), ${where} verl's clamp ${SEQUENCE_IS_CLAMP} on Σ log-ratio: ${worst >= SEQUENCE_IS_CLAMP / 4 ? 'sequence weights will be dominated by a few sequences or clamped; prefer token-level or geometric-mean (seq_mean) corrections' : 'sequence weights stay informative at this length and mismatch'}`;
}

/**
 * The record of a token audit from its folded accumulators. Why it is long: it only lays out the
 * record's many named fields (verl's names, each framework's aliases, the tables), one after
 * another, so that every key a user looks up is spelled in one place.
 */
function buildTokenRecord(x: RecordInput): RunRecord {
  const { overall, edges } = x;
  const qAll = x.quantiles.find((q) => q.step === null);
  const metrics: Record<string, JsonValue> = {
    files: x.dump.files.length,
    lines_read: x.linesRead,
    bad_rows_skipped: x.bad.count,
    unstable_steps_skipped: x.dump.unstableSteps.length,
    steps: x.steps.size,
    tasks: x.tasks.size,
    ...sliceMetrics(overall, qAll),
    sequence_is_length_times_kl: finite(overall.acc.lengthTimesKl()),
  };
  const tail2 = x.tails.find((r) => r.tau === 2);
  if (tail2) {
    metrics.ratio_fraction_above_2 = tail2.fraction_high as number;
    metrics.ratio_fraction_below_half = tail2.fraction_low as number;
  }
  const stepKeys = [...x.steps.keys()].sort((a, b) => a - b);
  const byStep: Record<string, JsonValue>[] = stepKeys.map((step) => ({
    step,
    ...sliceMetrics(
      x.steps.get(step) as Slice,
      x.quantiles.find((q) => q.step === step),
    ),
  }));
  const byTask = [...x.tasks.entries()]
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([task, s]) => ({ task, ...sliceMetrics(s, undefined) }));
  const byProb = edges.slice(0, -1).map((lo, k) => {
    const n = overall.acc.binN[k] as number;
    return {
      lo,
      hi: edges[k + 1] as number,
      hi_inclusive: k === edges.length - 2,
      tokens: n,
      mean_abs_delta: n > 0 ? (overall.acc.binAbs[k] as number) / n : null,
    };
  });
  const corrections = x.specs.map((spec, i) => {
    const m = (overall.corrections[i] as Correction).finish(overall.acc);
    return {
      what_if: spec.text,
      family: spec.family,
      ...Object.fromEntries(Object.entries(m).map(([k, v]) => [k, finite(v)])),
    };
  });
  const correctionsByStep = stepKeys.flatMap((step) => {
    const slice = x.steps.get(step) as Slice;
    return x.specs.map((spec, i) => {
      const m = (slice.corrections[i] as Correction).finish(slice.acc);
      return {
        step,
        what_if: spec.text,
        ...Object.fromEntries(Object.entries(m).map(([k, v]) => [k, finite(v)])),
      };
    });
  });
  const notes: string[] = [];
  if (x.bad.count > 0) {
    notes.push(`skipped ${x.bad.count} bad line(s) (--skip-bad-rows); first ones:`);
    for (const b of x.bad.examples) notes.push(`  ${b.file} line ${b.line}: ${b.problem}`);
  }
  for (const d of x.dump.unstableSteps)
    notes.push(`skipped ${d}: no STABLE marker (the step may be incomplete)`);
  notes.push(sequenceIsNote(overall.acc));
  const curves: Record<string, number[]> = {
    update: stepKeys,
    'mismatch.k3_kl': byStep.map((r) => r['rollout_corr/k3_kl'] as number),
    'mismatch.mean_abs_delta': byStep.map((r) => r.mean_abs_delta as number),
    'mismatch.p99_abs_delta': byStep.map((r) => (r.p99_abs_delta ?? Number.NaN) as number),
  };
  return {
    experiment: 'audit',
    seed: 0,
    version: VERSION,
    config: {
      kind: 'tokens',
      path: x.path,
      preset: x.options.preset,
      columns:
        x.options.preset === 'generic-tokens'
          ? ({ ...GENERIC_TOKEN_COLUMNS, ...x.options.columns } as unknown as JsonValue)
          : null,
      skip_bad_rows: x.options.skipBadRows ?? false,
      what_if: x.specs.map((s) => s.text),
      prob_bins: [...edges],
      loss_mask:
        x.options.preset === 'nemo-rl'
          ? 'token_loss_mask * sample_loss_mask, positions >= 1'
          : x.options.preset === 'prime-rl'
            ? 'loss_mask'
            : `${x.options.columns?.mask ?? GENERIC_TOKEN_COLUMNS.mask}`,
      delta: 'trainer log-prob - rollout (inference) log-prob',
    },
    metrics,
    curves,
    tables: {
      mismatch_by_step: byStep,
      mismatch_by_probability: byProb,
      mismatch_by_task: byTask,
      mismatch_by_round: x.rounds as unknown as Record<string, JsonValue>[],
      ratio_ccdf: x.tails,
      corrections,
      corrections_by_step: correctionsByStep,
      bad_rows: x.bad.examples.map((b) => ({ file: b.file, line: b.line, problem: b.problem })),
    },
    notes,
    plots: {
      mismatch: { title: 'Training–inference mismatch per step', y: 'k3 KL / |Δ log-prob|', x: 'step' },
      by_probability: {
        title: '|Δ log-prob| by rollout token probability',
        y: 'mean |Δ|',
        x: 'bin lower edge',
        kind: 'bar',
        table: 'mismatch_by_probability',
        xField: 'lo',
        yFields: ['mean_abs_delta'],
      },
      ratio_tail: {
        title: 'Tail of the ratio ρ = exp(Δ): fraction of loss tokens beyond τ',
        y: 'fraction of loss tokens',
        x: 'log10 τ',
        kind: 'line',
        table: 'ratio_ccdf',
        xField: 'log10_tau',
        yFields: ['fraction_high', 'fraction_low', 'fraction_two_sided'],
      },
    },
    timing: { wall_ms: x.wallMs },
  };
}
