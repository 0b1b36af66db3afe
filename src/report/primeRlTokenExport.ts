/**
 * Writes rollouts in prime-rl's trainer token-export layout (schema_version 1), so a run of the lab
 * leaves a dump that tools reading prime-rl's exports (and `labs audit`) can read:
 *
 *   DIR/token_exports/step_{N}/rank_{R}.jsonl      one compact JSON line per sequence
 *   DIR/token_exports/step_{N}/STABLE              empty; the step is complete
 *
 * Read from prime-rl's writer, `TokenExporter` in src/prime_rl/trainer/rl/token_export.py at
 * PrimeIntellect-ai/prime-rl@559b44772e471d1538537b8805cc77f3824a5e64 (PRs #2592, #2596):
 * - A line is `{schema_version: 1, step, rank, micro_step, micro_sequence_idx, export_sequence_idx,
 *   env_name, token_ids, position_ids, loss_mask, advantages, inference_logprobs, trainer_logprobs,
 *   entropy, mismatch_kl, log_importance_ratio, importance_ratio, prob_delta, is_masked,
 *   is_masked_high, is_masked_low, rl_weights, ce_weights, ref_kl_weights}` in this key order, written
 *   by `json.dumps(record, separators=(",", ":"), allow_nan=False)` (no spaces, ASCII only).
 * - Per-token arrays are aligned with `token_ids` (prompt included). Position t holds the log-prob of
 *   token t given the tokens before it; `inference_logprobs` is 0.0 where the engine did not sample
 *   the token (prompt, tool output). Float columns go through float32 (`_tensor_to_floats`:
 *   `.to(torch.float32).tolist()`), so a value is written as Python's `repr` of the float32 value
 *   widened to a double (`0.7833478450775146`, `6.581720754184062e-06`, `0.0`); a non-finite value
 *   becomes `null` (`_json_float`).
 * - Computed columns (`_compute_export_tensors`, `compute_importance_ratio_and_mismatch_kl` in
 *   trainer/rl/loss.py), per token, in float32:
 *   `log_importance_ratio = trainer − inference`, `importance_ratio = exp(log_importance_ratio)`,
 *   `mismatch_kl = importance_ratio − log_importance_ratio − 1` (k3), `prob_delta = exp(trainer) −
 *   exp(inference)`; with the default loss (`DefaultLossConfig`, DPPO masks `dppo_mask_low` =
 *   `dppo_mask_high` = 0.2): `is_masked = loss_mask ∧ (A > 0 ? prob_delta > high : prob_delta < −low)`,
 *   `is_masked_high = loss_mask ∧ A > 0 ∧ prob_delta > high`, `is_masked_low = loss_mask ∧ A < 0 ∧
 *   prob_delta < −low`; another loss writes the three mask columns as nulls (`dppoMask: null` here).
 * - `rl_weights`, `ce_weights`, `ref_kl_weights` are all-null columns (the defaults: rl weight 1 on the
 *   loss mask, no CE or reference-KL component).
 * - `micro_sequence_idx` counts the sequences of a micro batch, skipped ones included;
 *   `export_sequence_idx` counts the lines of the (step, rank) file. A sequence without any loss
 *   token is not written (`if end > start and any(loss_mask[start:end])`).
 * - `env_name` is the first non-empty environment name of the sequence's tokens (null if none).
 * - `STABLE` is touched after every rank has written the step (`mark_stable` after a barrier).
 *
 * Differences, by design: prime-rl appends to the rank file micro step by micro step; here a whole
 * step is written at once, to a temporary file renamed into place, then STABLE, so a reader that waits
 * for STABLE never sees a partial step and an interrupted run leaves no half-written file. Existing
 * files are never overwritten (prime-rl opens the rank file with mode "w"): writing a step whose
 * rank file or STABLE already exists is an error. `exp` is the platform's (float64, then rounded to
 * float32), so computed columns can differ from torch's float32 `exp` by one float32 ulp.
 */
import { linkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LabError } from '../core/errors.js';
import type { SequenceBatch } from '../policy/sequenceModel.js';
import { makeDirs } from './records.js';

/** prime-rl's `SCHEMA_VERSION`. */
export const PRIME_RL_TOKEN_EXPORT_SCHEMA_VERSION = 1;

/** The keys of a line, in the order prime-rl writes them. */
export const PRIME_RL_TOKEN_EXPORT_KEYS = Object.freeze([
  'schema_version',
  'step',
  'rank',
  'micro_step',
  'micro_sequence_idx',
  'export_sequence_idx',
  'env_name',
  'token_ids',
  'position_ids',
  'loss_mask',
  'advantages',
  'inference_logprobs',
  'trainer_logprobs',
  'entropy',
  'mismatch_kl',
  'log_importance_ratio',
  'importance_ratio',
  'prob_delta',
  'is_masked',
  'is_masked_high',
  'is_masked_low',
  'rl_weights',
  'ce_weights',
  'ref_kl_weights',
] as const);

/** One sequence (prompt and completion, one entry per token), as the trainer saw it. */
export interface TokenExportSequence {
  /** Token ids, integers ≥ 0 (length n). */
  tokenIds: ArrayLike<number>;
  /** Position ids (length n); default 0..n−1. */
  positionIds?: ArrayLike<number>;
  /** 1/true where the token is trained on (length n). */
  lossMask: ArrayLike<number | boolean>;
  /** Advantage per token (length n; 0 outside the loss mask in prime-rl's batches). */
  advantages: ArrayLike<number>;
  /** Behaviour (inference engine) log-prob per token, 0 where the engine did not sample it (length n). */
  inferenceLogprobs: ArrayLike<number>;
  /** The trainer's log-prob per token (length n). */
  trainerLogprobs: ArrayLike<number>;
  /** The trainer's entropy per position (length n). */
  entropy: ArrayLike<number>;
  /** Environment name of the sequence; default null. */
  envName?: string | null;
}

/** Options of the writer. */
export interface TokenExportOptions {
  /** Trainer rank R of `rank_{R}.jsonl`; default 0. */
  rank?: number;
  /**
   * prime-rl's DPPO mask thresholds (`loss.dppo_mask_low`, `loss.dppo_mask_high`, both 0.2 by
   * default); `null` writes the three `is_masked*` columns as nulls (a loss other than the default).
   */
  dppoMask?: { low: number; high: number } | null;
}

const DEFAULT_DPPO_MASK = Object.freeze({ low: 0.2, high: 0.2 });

/**
 * A number as Python's `repr(float)` writes it (what `json.dumps` writes for a float): the shortest
 * digits that round-trip (as JavaScript's), in fixed notation with a `.0` for integral values when
 * 1e−4 ≤ |x| < 1e16, else `d.ddde±XX` with at least two exponent digits; `-0.0` keeps its sign.
 */
export function pythonFloatRepr(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa, exponent] = x.toExponential().split('e') as [string, string];
  const e = Number(exponent);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  const s = String(x);
  return s.includes('.') ? s : `${s}.0`;
}

/** `json.dumps` of a string with `ensure_ascii=True`: non-ASCII characters as lowercase `\uXXXX`. */
function pythonJsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[\u0080-\uffff]/g,
    (c) => `\\u${(c.charCodeAt(0) as number).toString(16).padStart(4, '0')}`,
  );
}

/** A float32 column value: `null` when not finite (prime-rl's `_json_float`), else Python's repr. */
function f32(x: number): string {
  const v = Math.fround(x);
  return Number.isFinite(v) ? pythonFloatRepr(v) : 'null';
}

function checkSequence(seq: TokenExportSequence, where: string): number {
  const n = seq.tokenIds.length;
  const fields: [string, ArrayLike<unknown> | undefined][] = [
    ['position_ids', seq.positionIds],
    ['loss_mask', seq.lossMask],
    ['advantages', seq.advantages],
    ['inference_logprobs', seq.inferenceLogprobs],
    ['trainer_logprobs', seq.trainerLogprobs],
    ['entropy', seq.entropy],
  ];
  for (const [field, values] of fields) {
    if (values !== undefined && values.length !== n) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `${field}: ${where} has ${values.length} values, token_ids has ${n}`,
        {
          details: { field, expected: n, actual: values.length },
        },
      );
    }
  }
  const ints: [string, ArrayLike<number> | undefined][] = [
    ['token_ids', seq.tokenIds],
    ['position_ids', seq.positionIds],
  ];
  for (const [field, values] of ints) {
    if (!values) continue;
    for (let t = 0; t < n; t++) {
      const v = values[t] as number;
      if (!(Number.isInteger(v) && v >= 0)) {
        throw new LabError('BAD_VALUE', `${field}: ${where}, token ${t} is ${v}, expected an integer >= 0`, {
          details: { field, token: t, value: v },
        });
      }
    }
  }
  for (let t = 0; t < n; t++) {
    const m = seq.lossMask[t];
    if (!(m === 0 || m === 1 || m === true || m === false)) {
      throw new LabError(
        'BAD_MASK',
        `loss_mask: ${where}, token ${t} is ${String(m)}, expected 0/1 or a boolean`,
        {
          details: { field: 'loss_mask', token: t, value: m },
        },
      );
    }
  }
  const floats: [string, ArrayLike<number>][] = [
    ['advantages', seq.advantages],
    ['inference_logprobs', seq.inferenceLogprobs],
    ['trainer_logprobs', seq.trainerLogprobs],
    ['entropy', seq.entropy],
  ];
  for (const [field, values] of floats) {
    for (let t = 0; t < n; t++) {
      const v = values[t] as number;
      if (!Number.isFinite(v)) {
        throw new LabError('NON_FINITE', `${field}: ${where}, token ${t} is ${v}`, {
          details: { field, token: t, value: v },
        });
      }
    }
  }
  return n;
}

/** The header of one line: the keys before the per-token arrays. */
export interface TokenExportHeader {
  step: number;
  rank: number;
  microStep: number;
  microSequenceIdx: number;
  exportSequenceIdx: number;
}

/**
 * One line (without the newline) of a rank file for one sequence, byte for byte as prime-rl's
 * `json.dumps` writes it (see the file comment for the fields and formulas). The sequence must have a
 * loss token (prime-rl skips it otherwise; {@link primeRlTokenExportLines} does too).
 * Errors: SHAPE_MISMATCH for misaligned arrays, BAD_VALUE for a token or position id that is not an
 * integer ≥ 0, BAD_MASK for a loss mask value other than 0/1/true/false, NON_FINITE for a non-finite
 * input value; each names the field, the sequence and the token.
 */
export function primeRlTokenExportLine(
  header: TokenExportHeader,
  seq: TokenExportSequence,
  options: TokenExportOptions = {},
): string {
  const where = `step ${header.step}, micro step ${header.microStep}, sequence ${header.microSequenceIdx}`;
  const n = checkSequence(seq, where);
  const dppo = options.dppoMask === undefined ? DEFAULT_DPPO_MASK : options.dppoMask;
  const ints = (values: ArrayLike<number>) => Array.from(values, (v) => String(v)).join(',');
  const floats = (values: ArrayLike<number>) => Array.from(values, f32).join(',');
  const bools = (values: ArrayLike<boolean | null>) =>
    Array.from(values, (v) => (v === null ? 'null' : v ? 'true' : 'false')).join(',');
  const mask = Array.from(seq.lossMask, (m) => m === 1 || m === true);
  const logRatio = new Float64Array(n);
  const ratio = new Float64Array(n);
  const kl = new Float64Array(n);
  const probDelta = new Float64Array(n);
  const isMasked: (boolean | null)[] = [];
  const isMaskedHigh: (boolean | null)[] = [];
  const isMaskedLow: (boolean | null)[] = [];
  for (let t = 0; t < n; t++) {
    const tr = Math.fround(seq.trainerLogprobs[t] as number);
    const inf = Math.fround(seq.inferenceLogprobs[t] as number);
    // float32 arithmetic: fround of a double op on float32 inputs is the float32 op (53 ≥ 2·24 + 2)
    const lr = Math.fround(tr - inf);
    const r = Math.fround(Math.exp(lr));
    logRatio[t] = lr;
    ratio[t] = r;
    kl[t] = Math.fround(Math.fround(r - lr) - 1);
    const pd = Math.fround(Math.fround(Math.exp(tr)) - Math.fround(Math.exp(inf)));
    probDelta[t] = pd;
    if (dppo === null) {
      isMasked.push(null);
      isMaskedHigh.push(null);
      isMaskedLow.push(null);
    } else {
      const adv = Math.fround(seq.advantages[t] as number);
      const high = pd > Math.fround(dppo.high);
      const low = pd < -Math.fround(dppo.low);
      const m = mask[t] as boolean;
      isMasked.push(m && (adv > 0 ? high : low));
      isMaskedHigh.push(m && adv > 0 && high);
      isMaskedLow.push(m && adv < 0 && low);
    }
  }
  const positions = seq.positionIds ?? Array.from({ length: n }, (_, t) => t);
  const nulls = Array.from({ length: n }, () => 'null').join(',');
  const env = seq.envName ? pythonJsonString(seq.envName) : 'null';
  const parts = [
    `"schema_version":${PRIME_RL_TOKEN_EXPORT_SCHEMA_VERSION}`,
    `"step":${header.step}`,
    `"rank":${header.rank}`,
    `"micro_step":${header.microStep}`,
    `"micro_sequence_idx":${header.microSequenceIdx}`,
    `"export_sequence_idx":${header.exportSequenceIdx}`,
    `"env_name":${env}`,
    `"token_ids":[${ints(seq.tokenIds)}]`,
    `"position_ids":[${ints(positions)}]`,
    `"loss_mask":[${bools(mask)}]`,
    `"advantages":[${floats(seq.advantages)}]`,
    `"inference_logprobs":[${floats(seq.inferenceLogprobs)}]`,
    `"trainer_logprobs":[${floats(seq.trainerLogprobs)}]`,
    `"entropy":[${floats(seq.entropy)}]`,
    `"mismatch_kl":[${floats(kl)}]`,
    `"log_importance_ratio":[${floats(logRatio)}]`,
    `"importance_ratio":[${floats(ratio)}]`,
    `"prob_delta":[${floats(probDelta)}]`,
    `"is_masked":[${bools(isMasked)}]`,
    `"is_masked_high":[${bools(isMaskedHigh)}]`,
    `"is_masked_low":[${bools(isMaskedLow)}]`,
    `"rl_weights":[${nulls}]`,
    `"ce_weights":[${nulls}]`,
    `"ref_kl_weights":[${nulls}]`,
  ];
  return `{${parts.join(',')}}`;
}

function checkIndex(field: string, v: number): void {
  if (!(Number.isInteger(v) && v >= 0)) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected an integer >= 0, got ${v}`, {
      details: { field, value: v },
    });
  }
}

/**
 * The lines of one step's rank file: `microBatches[m]` holds the sequences of micro step m in packing
 * order; sequences without a loss token are skipped (they still count in `micro_sequence_idx`).
 * Errors: BAD_ARGUMENT for a step or rank that is not an integer ≥ 0; as {@link primeRlTokenExportLine}.
 */
export function primeRlTokenExportLines(
  step: number,
  microBatches: readonly (readonly TokenExportSequence[])[],
  options: TokenExportOptions = {},
): string[] {
  const rank = options.rank ?? 0;
  checkIndex('step', step);
  checkIndex('rank', rank);
  const lines: string[] = [];
  microBatches.forEach((sequences, microStep) => {
    sequences.forEach((seq, microSequenceIdx) => {
      let anyLoss = false;
      for (let t = 0; t < seq.lossMask.length && !anyLoss; t++)
        anyLoss = seq.lossMask[t] === 1 || seq.lossMask[t] === true;
      if (!anyLoss || seq.tokenIds.length === 0) return;
      lines.push(
        primeRlTokenExportLine(
          { step, rank, microStep, microSequenceIdx, exportSequenceIdx: lines.length },
          seq,
          options,
        ),
      );
    });
  });
  return lines;
}

/** Writes `data` to `path` through a temporary file and a hard link, failing if `path` exists. */
function writeNew(path: string, data: string): void {
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    writeFileSync(tmp, data, { flag: 'wx' });
    linkSync(tmp, path); // atomic, and EEXIST instead of replacing a file that is already there
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new LabError(
      'IO_ERROR',
      code === 'EEXIST'
        ? `${path} already exists: refusing to overwrite it (write the dump to a new directory)`
        : `cannot write ${path}: ${(e as Error).message}`,
      { cause: e, details: { file: path } },
    );
  } finally {
    rmSync(tmp, { force: true });
  }
}

/**
 * Writes one complete step: `DIR/token_exports/step_{step}/rank_{rank}.jsonl` (the lines of
 * {@link primeRlTokenExportLines}, each ending in a newline), then the empty `STABLE` marker; both
 * atomically (temporary file, then a hard link that fails rather than replace an existing file).
 * Returns the two paths and the number of lines. With several ranks, write every rank's file with
 * `stable: false` and the last with `stable: true` (STABLE means every rank has written the step).
 * Errors: IO_ERROR naming the file when it exists already or cannot be written; as
 * {@link primeRlTokenExportLines} for bad input (checked before anything is written).
 */
export function writePrimeRlTokenExportStep(
  dir: string,
  step: number,
  microBatches: readonly (readonly TokenExportSequence[])[],
  options: TokenExportOptions & { stable?: boolean } = {},
): { file: string; stable: string | null; lines: number } {
  const lines = primeRlTokenExportLines(step, microBatches, options);
  const stepDir = join(dir, 'token_exports', `step_${step}`);
  try {
    makeDirs(stepDir); // one level at a time: a recursive mkdir loops on procfs
  } catch (e) {
    throw new LabError('IO_ERROR', `cannot create ${stepDir}: ${(e as Error).message}`, {
      cause: e,
      details: { file: stepDir },
    });
  }
  const file = join(stepDir, `rank_${options.rank ?? 0}.jsonl`);
  writeNew(file, lines.map((l) => `${l}\n`).join(''));
  let stable: string | null = null;
  if (options.stable !== false) {
    stable = join(stepDir, 'STABLE');
    writeNew(stable, '');
  }
  return { file, stable, lines: lines.length };
}

/** The per-response-token columns of a packed batch, each `[rows, responseCols]` row-major. */
export interface BatchExportColumns {
  /** The trainer's log-probs (`SequenceModel.logProbs`). */
  trainerLogProbs: ArrayLike<number>;
  /** The engine's log-probs of the tokens it sampled (any value where `responseMask` is 0). */
  inferenceLogProbs: ArrayLike<number>;
  /** 1 where the token is the policy's own (trained on), 0 for environment tokens and padding. */
  responseMask: ArrayLike<number>;
  /** Advantage per token (`[rows, responseCols]`), or one per row (length `rows`). */
  advantages: ArrayLike<number>;
  /** The trainer's entropy per response position (`SequenceModel.entropies`). */
  entropy: ArrayLike<number>;
}

/**
 * The sequences of a packed {@link SequenceBatch} as {@link TokenExportSequence}s, aligned the way
 * prime-rl aligns them: one entry per token of the whole sequence (prompt included), position t
 * holding the values for token t. Response token t of row b reads column `t − starts[b]` of the
 * `[rows, responseCols]` inputs. The loss mask is `responseMask` on response tokens and false on the
 * prompt; `inference_logprobs` and `advantages` are 0 outside the loss mask (as in prime-rl's
 * batches: the engine sampled neither the prompt nor tool output); `trainer_logprobs` and `entropy`
 * are 0 on prompt tokens, which the lab's trainer does not score (prime-rl writes the model's values
 * there; they are never loss tokens). `envName` names every sequence (default null).
 * Errors: SHAPE_MISMATCH naming the column whose length is not `rows · responseCols` (or `rows` for
 * per-row advantages).
 */
export function tokenExportSequences(
  batch: SequenceBatch,
  columns: BatchExportColumns,
  envName: string | null = null,
): TokenExportSequence[] {
  const { rows, cols, tokens, lengths, starts, responseCols } = batch;
  const n = rows * responseCols;
  const named: [string, ArrayLike<number>][] = [
    ['trainerLogProbs', columns.trainerLogProbs],
    ['inferenceLogProbs', columns.inferenceLogProbs],
    ['responseMask', columns.responseMask],
    ['entropy', columns.entropy],
  ];
  for (const [field, values] of named) {
    if (values.length !== n) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `${field}: expected ${n} values [${rows}, ${responseCols}], got ${values.length}`,
        {
          details: { field, expected: n, actual: values.length },
        },
      );
    }
  }
  const perRow = columns.advantages.length === rows && rows !== n;
  if (!perRow && columns.advantages.length !== n) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `advantages: expected ${n} values [${rows}, ${responseCols}] or ${rows} (one per row), got ${columns.advantages.length}`,
      { details: { field: 'advantages', expected: n, actual: columns.advantages.length } },
    );
  }
  const out: TokenExportSequence[] = [];
  for (let b = 0; b < rows; b++) {
    const L = lengths[b] as number;
    const s = starts[b] as number;
    const tokenIds = Array.from(tokens.subarray(b * cols, b * cols + L));
    const lossMask: boolean[] = [];
    const advantages: number[] = [];
    const inferenceLogprobs: number[] = [];
    const trainerLogprobs: number[] = [];
    const entropy: number[] = [];
    for (let t = 0; t < L; t++) {
      const k = b * responseCols + (t - s);
      const inLoss = t >= s && (columns.responseMask[k] as number) === 1;
      lossMask.push(inLoss);
      const adv = perRow ? (columns.advantages[b] as number) : t >= s ? (columns.advantages[k] as number) : 0;
      advantages.push(inLoss ? adv : 0);
      inferenceLogprobs.push(inLoss ? (columns.inferenceLogProbs[k] as number) : 0);
      trainerLogprobs.push(t >= s ? (columns.trainerLogProbs[k] as number) : 0);
      entropy.push(t >= s ? (columns.entropy[k] as number) : 0);
    }
    out.push({ tokenIds, lossMask, advantages, inferenceLogprobs, trainerLogprobs, entropy, envName });
  }
  return out;
}
