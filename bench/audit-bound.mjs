// The same-statistics DuckDB SQL bound for `labs audit` (bench/audit.bench.ts runs it as a child
// process): one read_json of the verl dump, per-group count/min/max/sum and response length, then
// the group kinds, per-step and per-task tables, as a hand-written query would compute them.
import { DuckDBInstance } from '@duckdb/node-api';

const dir = process.argv[2];
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const sql = `
  WITH rows AS (
    SELECT step, input, score, length(output) AS len
    FROM read_json('${dir}/*.jsonl', format='newline_delimited',
      columns={'step': 'BIGINT', 'input': 'VARCHAR', 'score': 'DOUBLE', 'output': 'VARCHAR'})),
  groups AS (
    SELECT step, input, count(*) AS n, min(score) AS lo, max(score) AS hi, sum(score) AS s,
           count(*) FILTER (WHERE score >= 1) AS correct, sum(len) AS len
    FROM rows GROUP BY step, input),
  kinds AS (
    SELECT *, CASE WHEN n = 1 THEN 'singleton' WHEN lo <> hi THEN 'mixed' WHEN lo <= 0 THEN 'all_wrong'
                   WHEN lo >= 1 THEN 'all_right' ELSE 'all_equal_other' END AS kind FROM groups)
  SELECT (SELECT count(*) FROM kinds) AS groups,
         (SELECT list(struct_pack(kind, c)) FROM (SELECT kind, count(*) AS c FROM kinds GROUP BY kind)) AS kinds,
         (SELECT count(*) FROM (SELECT step, count(*) FILTER (WHERE kind <> 'mixed') FROM kinds GROUP BY step)) AS steps,
         (SELECT count(*) FROM (SELECT input, sum(n), sum(s), count(*) FILTER (WHERE kind <> 'mixed')
                                FROM kinds GROUP BY input)) AS tasks`;
const reader = await con.runAndReadAll(sql);
process.stdout.write(`${JSON.stringify(reader.getRowObjectsJson())}\n`);
con.closeSync();
db.closeSync();
