/**
 * Token-level dump layouts (`labs audit --preset nemo-rl | prime-rl | generic-tokens`): which files
 * belong to a dump, and a SQL relation per file with one row per physical line (`line`, 1-based;
 * Parquet: `line` is the 0-based row) holding the step, the task, the two log-prob streams and the
 * loss mask as lists, and `problem`, the reason a line cannot be used (NULL for a good line).
 *
 * - `nemo-rl`: NeMo-RL GRPO's training-data dump `<log_dir>/train_data_step{N}.jsonl`, written by
 *   nemo_rl/algorithms/grpo.py (`log_data` with `agent_ref`, `content`, `rewards`,
 *   `filtered_rewards`, `input_lengths`, `token_ids`, `token_loss_mask`, `sample_loss_mask`,
 *   `advantages`, `generation_logprobs`, `prev_logprobs`) through nemo_rl/utils/logger.py
 *   `log_batched_dict_as_jsonl`, which iterates `make_microbatch_iterator(1)`: every field is a
 *   one-element list (one batch row per line) and `idx` is the line index. The step is the file
 *   name's N. Arrays cover prompt and response, position t holds the log-prob of token t; the loss
 *   mask is `token_loss_mask · sample_loss_mask` and, as NeMo-RL's ClippedPGLossFn slices
 *   `[:, 1:]` (nemo_rl/algorithms/loss/loss_functions.py), position 0 never counts. The task is
 *   `agent_ref[0].name` when present. Python's json.dumps writes a non-finite value as NaN.
 * - `prime-rl`: prime-rl's trainer token export `token_exports/step_{N}/rank_{R}.jsonl`
 *   (src/prime_rl/trainer/rl/token_export.py `TokenExporter`, schema_version 1): one compact line
 *   per sequence with aligned per-token `token_ids`, `loss_mask` (booleans),
 *   `inference_logprobs`, `trainer_logprobs`, ... and `env_name` (the task). Non-finite floats are
 *   written as null (`_json_float`). A `STABLE` file marks a step every rank has flushed
 *   (`mark_stable`); a step without it may be incomplete. The step is the directory's N (the
 *   exporter's `export_step`).
 * - `generic-tokens`: JSONL or Parquet, one row per sequence, per-token arrays named by flags
 *   (defaults `trainer_logprobs`, `rollout_logprobs`, `loss_mask`, `step`, `task`).
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { LabError } from '../../core/errors.js';
import { sqlIdent, sqlString } from '../duckdb.js';

import type { TokenPresetName } from './presetNames.js';

export type { TokenPresetName } from './presetNames.js';

/** Column names for generic-tokens (`--trainer-logprobs`, `--rollout-logprobs`, `--loss-mask`, `--col-step`, `--col-task`). */
export interface TokenColumns {
  trainer: string;
  rollout: string;
  mask: string;
  step: string;
  task: string | null;
}

export const GENERIC_TOKEN_COLUMNS: Readonly<TokenColumns> = Object.freeze({
  trainer: 'trainer_logprobs',
  rollout: 'rollout_logprobs',
  mask: 'loss_mask',
  step: 'step',
  task: 'task',
});

/** One file of the dump with its step (from the path) when the layout puts it there. */
export interface TokenFile {
  path: string;
  step: number | null;
  format: 'jsonl' | 'parquet';
}

export interface TokenDump {
  files: TokenFile[];
  /** prime-rl: step directories skipped because they have no STABLE marker (with --skip-bad-rows). */
  unstableSteps: string[];
}

function ioError(path: string, e: unknown): LabError {
  return new LabError('IO_ERROR', `${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? e})`, {
    cause: e,
    details: { file: path },
  });
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (e) {
    throw ioError(path, e);
  }
}

/** The dump's files in step order. */
export async function listTokenDump(
  path: string,
  preset: TokenPresetName,
  skipBad: boolean,
): Promise<TokenDump> {
  const dir = await isDir(path);
  if (preset === 'nemo-rl') {
    const re = /^train_data_step(\d+)\.jsonl$/;
    const names = dir ? (await readdir(path)).filter((n) => re.test(n)) : [basename(path)];
    const files = names
      .map((n) => {
        const m = re.exec(n);
        return { path: dir ? join(path, n) : path, step: m ? Number(m[1]) : null, format: 'jsonl' as const };
      })
      .sort((a, b) => (a.step ?? 0) - (b.step ?? 0));
    if (files.length === 0) {
      throw new LabError(
        'IO_ERROR',
        `${path}: no train_data_step{N}.jsonl files (NeMo-RL's training-data dump)`,
        {
          details: { file: path },
        },
      );
    }
    for (const f of files) {
      if (f.step === null) {
        throw new LabError(
          'BAD_ARGUMENT',
          `${f.path}: not named train_data_step{N}.jsonl, so its step is unknown`,
          {
            details: { file: f.path },
          },
        );
      }
    }
    return { files, unstableSteps: [] };
  }
  if (preset === 'prime-rl') {
    if (!dir) {
      const m = /step_(\d+)[/\\]rank_\d+\.jsonl$/.exec(path);
      return { files: [{ path, step: m ? Number(m[1]) : null, format: 'jsonl' }], unstableSteps: [] };
    }
    // Accept the output directory, its token_exports/ directory, or one step directory.
    let root = path;
    const entries = await readdir(path);
    if (entries.includes('token_exports')) root = join(path, 'token_exports');
    const stepDirs = /^step_\d+$/.test(basename(root))
      ? [basename(root)]
      : (await readdir(root)).filter((n) => /^step_\d+$/.test(n));
    const base = /^step_\d+$/.test(basename(root)) ? join(root, '..') : root;
    stepDirs.sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)));
    const files: TokenFile[] = [];
    const unstable: string[] = [];
    for (const d of stepDirs) {
      const full = join(base, d);
      const names = await readdir(full);
      if (!names.includes('STABLE')) {
        if (!skipBad) {
          throw new LabError(
            'BAD_VALUE',
            `${full}: no STABLE file, so prime-rl may still be writing this step (TokenExporter.mark_stable touches it once every rank has flushed); wait for it, or use --skip-bad-rows to skip and count such steps`,
            { details: { file: full } },
          );
        }
        unstable.push(full);
        continue;
      }
      const ranks = names.filter((n) => /^rank_\d+\.jsonl$/.test(n));
      ranks.sort((a, b) => Number(a.slice(5, -6)) - Number(b.slice(5, -6)));
      for (const r of ranks) files.push({ path: join(full, r), step: Number(d.slice(5)), format: 'jsonl' });
    }
    if (files.length === 0) {
      throw new LabError(
        'IO_ERROR',
        `${path}: no token_exports/step_{N}/rank_{R}.jsonl files with a STABLE marker (prime-rl's token export)`,
        { details: { file: path } },
      );
    }
    return { files, unstableSteps: unstable };
  }
  const re = /\.(jsonl|ndjson|parquet)$/i;
  const names = dir ? (await readdir(path)).filter((n) => re.test(n)).sort() : [basename(path)];
  const files = names.map((n) => {
    const p = dir ? join(path, n) : path;
    return {
      path: p,
      step: null,
      format: extname(p).toLowerCase() === '.parquet' ? 'parquet' : 'jsonl',
    } as TokenFile;
  });
  if (files.length === 0) {
    throw new LabError('IO_ERROR', `${path}: no .jsonl or .parquet files`, { details: { file: path } });
  }
  return { files, unstableSteps: [] };
}

/** Limits for the per-token checks. */
export const POSITIVE_LOGPROB_TOLERANCE = 1e-3;

/**
 * The per-line relation of one file: `f, line, step, task, old_l, roll_l, mask_l, start, problem`.
 * `start` is the first 1-based position that can count (NeMo-RL: 2, its loss skips position 0).
 */
export function lineSql(preset: TokenPresetName, file: TokenFile, index: number, cols: TokenColumns): string {
  const src = sqlString(file.path);
  if (preset === 'nemo-rl') {
    const one = (c: string) =>
      `WHEN len(${c}) <> 1 THEN '${c} is not a one-element list (NeMo-RL writes one batch row per line): ' || len(${c}) || ' elements'`;
    return `SELECT ${index} AS f, ordinality AS line, ${file.step} AS step,
        json_extract_string(agent_ref, '$[0].name') AS task,
        prev_logprobs[1] AS old_l, generation_logprobs[1] AS roll_l,
        list_transform(token_loss_mask[1], x -> x * sample_loss_mask[1]) AS mask_l, 2 AS start,
        CASE
          WHEN prev_logprobs IS NULL AND generation_logprobs IS NULL AND token_loss_mask IS NULL AND sample_loss_mask IS NULL
            THEN 'unreadable line: malformed JSON, not an object, or a field of the wrong type (NaN written by Python is read; a string or object where numbers belong is not)'
          WHEN prev_logprobs IS NULL AND generation_logprobs IS NULL THEN 'both log-prob streams are missing (prev_logprobs: trainer, generation_logprobs: inference engine)'
          WHEN prev_logprobs IS NULL THEN 'missing prev_logprobs (the trainer log-probs)'
          WHEN generation_logprobs IS NULL THEN 'missing generation_logprobs (the inference-engine log-probs)'
          WHEN token_loss_mask IS NULL THEN 'missing token_loss_mask'
          WHEN sample_loss_mask IS NULL THEN 'missing sample_loss_mask'
          ${one('prev_logprobs')} ${one('generation_logprobs')} ${one('token_loss_mask')} ${one('sample_loss_mask')}
          WHEN prev_logprobs[1] IS NULL OR generation_logprobs[1] IS NULL OR token_loss_mask[1] IS NULL THEN 'a per-token array is null'
          WHEN len(prev_logprobs[1]) <> len(generation_logprobs[1]) OR len(prev_logprobs[1]) <> len(token_loss_mask[1])
            THEN 'arrays of unequal length: prev_logprobs ' || len(prev_logprobs[1]) || ', generation_logprobs ' || len(generation_logprobs[1]) || ', token_loss_mask ' || len(token_loss_mask[1])
          WHEN sample_loss_mask[1] IS NULL OR (sample_loss_mask[1] <> 0 AND sample_loss_mask[1] <> 1) THEN 'sample_loss_mask is not 0 or 1: ' || coalesce(CAST(sample_loss_mask[1] AS VARCHAR), 'null')
          WHEN len(list_filter(token_loss_mask[1], x -> x IS NULL OR (x <> 0 AND x <> 1))) > 0 THEN 'token_loss_mask is not an array of 0/1'
        END AS problem
      FROM read_json(${src}, format='newline_delimited', ignore_errors=true,
        columns={agent_ref: 'JSON', prev_logprobs: 'DOUBLE[][]', generation_logprobs: 'DOUBLE[][]', token_loss_mask: 'DOUBLE[][]', sample_loss_mask: 'DOUBLE[]'})
      WITH ORDINALITY`;
  }
  if (preset === 'prime-rl') {
    return `SELECT ${index} AS f, ordinality AS line, ${file.step ?? 'step'} AS step, env_name AS task,
        trainer_logprobs AS old_l, inference_logprobs AS roll_l,
        list_transform(loss_mask, x -> CASE WHEN x THEN 1.0 ELSE 0.0 END) AS mask_l, 1 AS start,
        CASE
          WHEN trainer_logprobs IS NULL AND inference_logprobs IS NULL AND loss_mask IS NULL
            THEN 'unreadable line: malformed JSON, not an object, both log-prob streams missing, or a field of the wrong type'
          WHEN trainer_logprobs IS NULL AND inference_logprobs IS NULL THEN 'both log-prob streams are missing (trainer_logprobs, inference_logprobs)'
          WHEN trainer_logprobs IS NULL THEN 'missing trainer_logprobs'
          WHEN inference_logprobs IS NULL THEN 'missing inference_logprobs'
          WHEN loss_mask IS NULL THEN 'missing loss_mask'
          WHEN len(trainer_logprobs) <> len(inference_logprobs) OR len(trainer_logprobs) <> len(loss_mask)
            THEN 'arrays of unequal length: trainer_logprobs ' || len(trainer_logprobs) || ', inference_logprobs ' || len(inference_logprobs) || ', loss_mask ' || len(loss_mask)
          WHEN len(list_filter(loss_mask, x -> x IS NULL)) > 0 THEN 'loss_mask holds a null'
          ${file.step === null ? "WHEN step IS NULL THEN 'missing step'" : ''}
        END AS problem
      FROM read_json(${src}, format='newline_delimited', ignore_errors=true,
        columns={step: 'BIGINT', env_name: 'VARCHAR', trainer_logprobs: 'DOUBLE[]', inference_logprobs: 'DOUBLE[]', loss_mask: 'BOOLEAN[]'})
      WITH ORDINALITY`;
  }
  const o = sqlIdent(cols.trainer);
  const r = sqlIdent(cols.rollout);
  const m = sqlIdent(cols.mask);
  const s = sqlIdent(cols.step);
  const t = cols.task === null ? 'NULL::VARCHAR' : `CAST(${sqlIdent(cols.task)} AS VARCHAR)`;
  const from =
    file.format === 'parquet'
      ? `(SELECT *, file_row_number AS ordinality FROM read_parquet(${src}, file_row_number=true))`
      : `read_json(${src}, format='newline_delimited', ignore_errors=true, columns={${[
          `${sqlString(cols.trainer)}: 'DOUBLE[]'`,
          `${sqlString(cols.rollout)}: 'DOUBLE[]'`,
          `${sqlString(cols.mask)}: 'DOUBLE[]'`,
          `${sqlString(cols.step)}: 'DOUBLE'`,
          ...(cols.task === null ? [] : [`${sqlString(cols.task)}: 'VARCHAR'`]),
        ].join(', ')}}) WITH ORDINALITY`;
  const q = (c: string) => c.replaceAll("'", "''");
  return `SELECT ${index} AS f, ordinality AS line, CAST(${s} AS BIGINT) AS step, ${t} AS task,
      CAST(${o} AS DOUBLE[]) AS old_l, CAST(${r} AS DOUBLE[]) AS roll_l,
      list_transform(CAST(${m} AS DOUBLE[]), x -> x) AS mask_l, 1 AS start,
      CASE
        WHEN ${o} IS NULL AND ${r} IS NULL THEN 'both log-prob streams are missing (${q(cols.trainer)}, ${q(cols.rollout)}) or the line is unreadable'
        WHEN ${o} IS NULL THEN 'missing ${q(cols.trainer)} (trainer log-probs)'
        WHEN ${r} IS NULL THEN 'missing ${q(cols.rollout)} (rollout log-probs)'
        WHEN ${m} IS NULL THEN 'missing ${q(cols.mask)} (loss mask)'
        WHEN ${s} IS NULL OR ${s} <> floor(${s}) THEN 'missing or non-integer ${q(cols.step)} (step)'
        WHEN len(${o}) <> len(${r}) OR len(${o}) <> len(${m})
          THEN 'arrays of unequal length: ${q(cols.trainer)} ' || len(${o}) || ', ${q(cols.rollout)} ' || len(${r}) || ', ${q(cols.mask)} ' || len(${m})
        WHEN len(list_filter(CAST(${m} AS DOUBLE[]), x -> x IS NULL OR (x <> 0 AND x <> 1))) > 0 THEN '${q(cols.mask)} is not an array of 0/1'
      END AS problem
    FROM ${from}`;
}

/** Field names of the two streams in a layout, for messages. */
export function streamNames(preset: TokenPresetName, cols: TokenColumns): { old: string; roll: string } {
  if (preset === 'nemo-rl') return { old: 'prev_logprobs', roll: 'generation_logprobs' };
  if (preset === 'prime-rl') return { old: 'trainer_logprobs', roll: 'inference_logprobs' };
  return { old: cols.trainer, roll: cols.rollout };
}

/**
 * The loss-token relation of a batch of files: one row per loss token of a good line, and one row
 * with `problem` set for each bad line or bad loss token (`t` its 1-based position).
 */
export function tokenSql(
  preset: TokenPresetName,
  files: readonly TokenFile[],
  offset: number,
  cols: TokenColumns,
): string {
  const lines = files.map((f, i) => lineSql(preset, f, offset + i, cols)).join('\nUNION ALL\n');
  const names = streamNames(preset, cols);
  const check = (v: string, name: string) =>
    `WHEN ${v} IS NULL THEN '${name} is null at a loss token (token ' || (t - 1) || ')'
     WHEN isnan(${v}) THEN '${name} is NaN at a loss token (token ' || (t - 1) || ')'
     WHEN isinf(${v}) THEN '${name} is ' || CAST(${v} AS VARCHAR) || ' at a loss token (token ' || (t - 1) || ')'
     WHEN ${v} > ${POSITIVE_LOGPROB_TOLERANCE} THEN '${name} is positive (' || CAST(${v} AS VARCHAR) || ') at a loss token (token ' || (t - 1) || '); a log-prob is <= 0'`;
  return `SELECT f, line, step, task, t, old, roll,
      coalesce(problem, CASE ${check('old', names.old)} ${check('roll', names.roll)} END) AS problem
    FROM (
      SELECT f, line, step, task, problem, start,
        unnest(CASE WHEN problem IS NULL THEN range(1, len(old_l) + 1) ELSE [NULL::BIGINT] END) AS t,
        unnest(CASE WHEN problem IS NULL THEN old_l ELSE [NULL::DOUBLE] END) AS old,
        unnest(CASE WHEN problem IS NULL THEN roll_l ELSE [NULL::DOUBLE] END) AS roll,
        unnest(CASE WHEN problem IS NULL THEN mask_l ELSE [NULL::DOUBLE] END) AS m
      FROM (${lines}))
    WHERE problem IS NOT NULL OR (m <> 0 AND t >= start)`;
}
