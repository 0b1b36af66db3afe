// The same-overall-statistics DuckDB SQL bound for `labs audit --preset nemo-rl` (bench/
// audit-tokens.bench.ts runs it as a child process): one read_json of the NeMo-RL dump with typed
// columns and no validation, the loss tokens unnested (token_loss_mask · sample_loss_mask, position
// >= 1), and one statement returning the overall statistics the audit reports: token count, verl's
// kl, k3_kl, chi2_token, chi2_seq, the per-sequence perplexities, mean/max/p99 |Δ| and NeMo-RL's
// token_mult_prob_error. It is the query a user would write by hand, written the fastest way we know.
import { DuckDBInstance } from '@duckdb/node-api';

const dir = process.argv[2];
const read = `read_json('${dir}/train_data_step*.jsonl', format='newline_delimited',
  columns={prev_logprobs: 'DOUBLE[][]', generation_logprobs: 'DOUBLE[][]', token_loss_mask: 'DOUBLE[][]', sample_loss_mask: 'DOUBLE[]'})`;
const sql = `
  WITH lines AS (SELECT row_number() OVER () AS seq, prev_logprobs[1] AS o, generation_logprobs[1] AS r,
                        token_loss_mask[1] AS m, sample_loss_mask[1] AS sm FROM ${read}),
  tok AS (SELECT seq, unnest(o) AS old, unnest(r) AS roll, unnest(m) AS m, sm, generate_subscripts(o, 1) AS t FROM lines),
  loss AS (SELECT seq, old, roll, old - roll AS l FROM tok WHERE m * sm <> 0 AND t > 1),
  per_seq AS (SELECT seq, count(*) AS n, sum(old) AS so, sum(roll) AS sr, sum(l) AS sl FROM loss GROUP BY seq),
  overall AS (SELECT count(*) AS n, avg(-l) AS kl, avg(exp(l) - l - 1) AS k3, avg(pow(exp(least(greatest(l, -20), 20)), 2)) - 1 AS chi2_token,
                     avg(abs(l)) AS mean_abs, max(abs(l)) AS max_abs, quantile_cont(abs(l), 0.99) AS p99,
                     avg(exp(abs(l))) AS mult_prob FROM loss)
  SELECT overall.*, (SELECT avg(exp(-so / n)) FROM per_seq) AS training_ppl, (SELECT avg(exp(-sr / n)) FROM per_seq) AS rollout_ppl,
         (SELECT avg(exp(2 * least(greatest(sl, -20), 20))) - 1 FROM per_seq) AS chi2_seq
  FROM overall`;
const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
const reader = await connection.runAndReadAll(sql);
process.stdout.write(
  `${JSON.stringify(reader.getRowObjectsJS(), (_, v) => (typeof v === 'bigint' ? Number(v) : v))}\n`,
);
connection.closeSync();
instance.closeSync();
