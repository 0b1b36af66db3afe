// The same-statistics DuckDB SQL bound for `labs audit --preset verl` (bench/audit.bench.ts runs it
// as a child process): one read_json of the verl dump with typed columns and no validation, and
// one statement that returns what the audit reports: group kinds, the per-step table, the per-task
// table, group sizes, the reward distribution and response length by correctness (count, mean,
// median, p90). It is written the fastest way we know: the rows are grouped per (step, prompt) and
// per (score, length) in one scan (GROUPING SETS), and the length quantiles are read off the
// cumulative counts of the (score, length) histogram instead of sorting every row.
//
// `node bench/audit-bound.mjs DIR counts` runs the earlier, smaller query instead (group kinds and
// the number of steps and tasks). Its response lengths are never used, so DuckDB does not even read
// the `output` field: it is a floor for a narrower job, kept to compare with earlier measurements.
import { DuckDBInstance } from '@duckdb/node-api';

const dir = process.argv[2];
const variant = process.argv[3] ?? 'same-statistics';
const read = `read_json('${dir}/*.jsonl', format='newline_delimited',
  columns={'step': 'BIGINT', 'input': 'VARCHAR', 'score': 'DOUBLE', 'output': 'VARCHAR'})`;
const kind = `CASE WHEN n = 1 THEN 'singleton' WHEN lo <> hi THEN 'mixed' WHEN lo <= 0 THEN 'all_wrong'
                   WHEN lo >= 1 THEN 'all_right' ELSE 'all_equal_other' END`;
const counts = `
  WITH rows AS (SELECT step, input, score, length(output) AS len FROM ${read}),
  groups AS (
    SELECT step, input, count(*) AS n, min(score) AS lo, max(score) AS hi, sum(score) AS s,
           count(*) FILTER (WHERE score >= 1) AS correct, sum(len) AS len
    FROM rows GROUP BY step, input),
  kinds AS (SELECT *, ${kind} AS kind FROM groups)
  SELECT (SELECT count(*) FROM kinds) AS groups,
         (SELECT list(struct_pack(kind, c)) FROM (SELECT kind, count(*) AS c FROM kinds GROUP BY kind)) AS kinds,
         (SELECT count(*) FROM (SELECT step, count(*) FILTER (WHERE kind <> 'mixed') FROM kinds GROUP BY step)) AS steps,
         (SELECT count(*) FROM (SELECT input, sum(n), sum(s), count(*) FILTER (WHERE kind <> 'mixed')
                                FROM kinds GROUP BY input)) AS tasks`;
const zv = "kind IN ('all_wrong', 'all_right', 'all_equal_other')";
const kindCounts = `groups := count(*), all_wrong := count(*) FILTER (WHERE kind = 'all_wrong'),
  all_right := count(*) FILTER (WHERE kind = 'all_right'), all_equal_other := count(*) FILTER (WHERE kind = 'all_equal_other'),
  mixed := count(*) FILTER (WHERE kind = 'mixed'), singleton := count(*) FILTER (WHERE kind = 'singleton')`;
const at = (pos) => `max(len) FILTER (WHERE first <= ${pos} AND ${pos} < first + c)`;
const interpolate = (h, lo, hi) =>
  `CASE WHEN floor(${h}) = ceil(${h}) THEN ${lo} ELSE ${lo} * (1 - (${h} - floor(${h}))) + ${hi} * (${h} - floor(${h})) END`;
const sameStatistics = `
  WITH agg AS MATERIALIZED (
    SELECT GROUPING(step) = 1 AS hist, step, input, score, len, count(*) AS n, min(score) AS lo, max(score) AS hi,
           sum(score) AS s, count(*) FILTER (WHERE score >= 1) AS correct
    FROM (SELECT step, input, score, CAST(length(output) AS DOUBLE) AS len FROM ${read})
    GROUP BY GROUPING SETS ((step, input), (score, len))),
  kinds AS MATERIALIZED (SELECT *, ${kind} AS kind FROM agg WHERE NOT hist),
  hist AS (SELECT score, len, n FROM agg WHERE hist),
  cum AS (
    SELECT correct, len, c, sum(c) OVER (PARTITION BY correct ORDER BY len ROWS UNBOUNDED PRECEDING) - c AS first,
           sum(c) OVER (PARTITION BY correct) AS total,
           CAST(sum(c) OVER (PARTITION BY correct) - 1 AS DOUBLE) * 0.5 AS h50,
           CAST(sum(c) OVER (PARTITION BY correct) - 1 AS DOUBLE) * 0.9 AS h90
    FROM (SELECT score >= 1 AS correct, len, sum(n) AS c FROM hist GROUP BY 1, 2)),
  lengths AS (
    SELECT correct, any_value(total) AS samples, sum(len * c) / any_value(total) AS mean,
           any_value(h50) AS h50, ${at('floor(h50)')} AS lo50, ${at('ceil(h50)')} AS hi50,
           any_value(h90) AS h90, ${at('floor(h90)')} AS lo90, ${at('ceil(h90)')} AS hi90
    FROM cum GROUP BY correct)
  SELECT
    (SELECT struct_pack(rows := sum(n), mean_reward := sum(s) / sum(n), correct := sum(correct) / sum(n), ${kindCounts}) FROM kinds) AS totals,
    (SELECT list(x ORDER BY step) FROM (
       SELECT step, struct_pack(step, rows := sum(n), mean_reward := sum(s) / sum(n), correct := sum(correct) / sum(n), ${kindCounts}) AS x
       FROM kinds GROUP BY step)) AS steps,
    (SELECT list(x ORDER BY wasted DESC, input) FROM (
       SELECT input, coalesce(sum(n) FILTER (WHERE ${zv}), 0) AS wasted,
              struct_pack(input, samples := sum(n), mean_reward := sum(s) / sum(n), solve_rate := sum(correct) / sum(n),
                          wasted := coalesce(sum(n) FILTER (WHERE ${zv}), 0), first_step := min(step), last_step := max(step), ${kindCounts}) AS x
       FROM kinds GROUP BY input)) AS tasks,
    (SELECT list(struct_pack(size := n, groups := g) ORDER BY n) FROM (SELECT n, count(*) AS g FROM kinds GROUP BY n)) AS sizes,
    (SELECT list(struct_pack(score, samples) ORDER BY score) FROM (SELECT score, sum(n) AS samples FROM hist GROUP BY score)) AS rewards,
    (SELECT list(struct_pack(correct, samples, mean, median := ${interpolate('h50', 'lo50', 'hi50')},
                             p90 := ${interpolate('h90', 'lo90', 'hi90')}) ORDER BY correct DESC) FROM lengths) AS lengths`;

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const reader = await con.runAndReadAll(variant === 'counts' ? counts : sameStatistics);
process.stdout.write(`${JSON.stringify(reader.getRowObjectsJson())}\n`);
con.closeSync();
db.closeSync();
