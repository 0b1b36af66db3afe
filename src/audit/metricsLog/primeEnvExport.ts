/**
 * Reads prime-rl's token export (`token_exports/step_N/rank_R.jsonl`, src/audit/tokens/tokenLayouts.ts
 * lists the files) into an {@link EnvMeanAccumulator}: one JSON line per sequence, streamed line by
 * line (a line is a whole sequence, never the whole file). A line whose fields do not fit (per-token
 * arrays of other lengths than `loss_mask`, a missing `env_name`) is an error naming `file:line`.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { LabError } from '../../core/errors.js';
import type { JsonValue, RunRecord } from '../../experiments/types.js';
import { listTokenDump } from '../tokens/tokenLayouts.js';
import { AGREE_ATOL, AGREE_RTOL, stepRanges } from './compare.js';
import {
  compareEnvMeans,
  ENV_TOKEN_METRICS,
  EnvMeanAccumulator,
  type ExportedSequence,
} from './primeEnvMeans.js';
import { readMetricsLog } from './read.js';

function bad(file: string, line: number, problem: string): LabError {
  return new LabError('BAD_VALUE', `${file}:${line}: ${problem}`, { details: { file, line } });
}

function numbers(v: unknown, n: number, field: string, file: string, line: number): (number | null)[] | null {
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.length !== n || !v.every((x) => x === null || typeof x === 'number')) {
    throw bad(
      file,
      line,
      `${field}: expected ${n} numbers (one per token, null for non-finite), like loss_mask`,
    );
  }
  // a column of nulls only is how the exporter writes an absent stream (_optional_tensor_to_floats)
  return v.every((x) => x === null) ? null : (v as (number | null)[]);
}

/** One export line to a sequence (exported for tests). */
export function parseExportLine(
  text: string,
  file: string,
  line: number,
  dirStep: number | null,
): ExportedSequence {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw bad(file, line, `not JSON (${(e as Error).message})`);
  }
  const mask = o.loss_mask;
  if (!Array.isArray(mask) || !mask.every((x) => typeof x === 'boolean')) {
    throw bad(file, line, 'loss_mask: expected an array of booleans');
  }
  const step = typeof o.step === 'number' ? o.step : dirStep;
  if (step === null || !Number.isInteger(step)) throw bad(file, line, 'step: expected an integer');
  if (typeof o.env_name !== 'string' || o.env_name === '') throw bad(file, line, 'env_name: expected a name');
  const n = mask.length;
  return {
    step,
    env: o.env_name,
    lossMask: mask as boolean[],
    entropy: numbers(o.entropy, n, 'entropy', file, line),
    mismatchKl: numbers(o.mismatch_kl, n, 'mismatch_kl', file, line),
    rlWeights: numbers(o.rl_weights, n, 'rl_weights', file, line),
    refKlWeights: numbers(o.ref_kl_weights, n, 'ref_kl_weights', file, line),
  };
}

/** Every sequence of the prime-rl token export at `path`, accumulated. */
export async function readPrimeEnvMeans(path: string, skipBad: boolean): Promise<EnvMeanAccumulator> {
  const dump = await listTokenDump(path, 'prime-rl', skipBad);
  const acc = new EnvMeanAccumulator();
  for (const file of dump.files) {
    const lines = createInterface({ input: createReadStream(file.path, 'utf8'), crlfDelay: Infinity });
    let line = 0;
    for await (const text of lines) {
      line += 1;
      if (text.trim() === '') continue;
      acc.add(parseExportLine(text, file.path, line, file.step));
    }
  }
  return acc;
}

/**
 * `labs audit token_exports --preset prime-rl --metrics LOG`: adds to the token audit's `record` the
 * per-env comparison (`tables.logged_vs_recomputed`, same columns as the reward presets',
 * `tables.logged_metrics_unmatched`, the `logged_*` metrics and notes on steps missing either side).
 */
export async function addPrimeEnvLogAudit(
  record: RunRecord,
  exportPath: string,
  metricsPath: string,
  skipBad: boolean,
): Promise<void> {
  const log = await readMetricsLog(metricsPath);
  const acc = await readPrimeEnvMeans(exportPath, skipBad);
  const rows = compareEnvMeans(acc.rows(), log);
  const matchedNames = new Set(rows.filter((r) => r.logged !== null).map((r) => r.metric));
  const stepsOf = new Map<string, number>();
  for (const r of log.rows) stepsOf.set(r.metric, (stepsOf.get(r.metric) ?? 0) + 1);
  const unmatched = [...stepsOf]
    .filter(([m]) => !matchedNames.has(m))
    .map(([metric, steps]) => ({ metric, steps }))
    .sort((a, b) => (a.metric < b.metric ? -1 : 1));
  const notes = log.notes.map((n) => `metrics log: ${n}`);
  const exportSteps = [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b);
  const logSteps = new Set(log.rows.filter((r) => matchedNames.has(r.metric)).map((r) => r.step));
  const notLogged = exportSteps.filter((s) => !logSteps.has(s));
  if (notLogged.length > 0)
    notes.push(`export step(s) without a logged entropy/mismatch_kl mean: ${stepRanges(notLogged)}`);
  const exportSet = new Set(exportSteps);
  const logOnly = [...new Set(log.rows.map((r) => r.step))]
    .filter((s) => !exportSet.has(s))
    .sort((a, b) => a - b);
  if (logOnly.length > 0) notes.push(`log step(s) not in the token export: ${stepRanges(logOnly)}`);
  for (const metric of ENV_TOKEN_METRICS) {
    if (acc.nullTokens[metric] > 0)
      notes.push(
        `${acc.nullTokens[metric]} masked token(s) with a null (non-finite) ${metric} were not counted`,
      );
  }
  const compared = rows.filter((r) => r.agrees !== null);
  record.tables.logged_vs_recomputed = rows.map((r) => ({ ...r }) as Record<string, JsonValue>);
  record.tables.logged_metrics_unmatched = unmatched;
  Object.assign(record.metrics, {
    logged_metrics: stepsOf.size,
    logged_metrics_matched: matchedNames.size,
    logged_metrics_unmatched: unmatched.length,
    logged_values_compared: compared.length,
    logged_values_disagreeing: compared.filter((r) => r.agrees === false).length,
    logged_values_with_signature: rows.filter((r) => r.signature !== null).length,
    logged_agree_atol: AGREE_ATOL,
    logged_agree_rtol: AGREE_RTOL,
  });
  record.config.metrics_log = metricsPath;
  record.config.metrics_log_files = log.files;
  record.config.metrics_log_formats = log.formats;
  record.notes = [...(record.notes ?? []), ...notes];
}
