/**
 * The sequence model's parameters on disk: a small, versioned checkpoint format, so a pretrained
 * (SFT) policy is computed once and shared by every arm and every rerun (docs/experiments/neural.md,
 * "Warm start").
 *
 * Layout (format version 1), all integers little-endian:
 *
 * | bytes | content |
 * |---|---|
 * | 0..7 | magic `RRLCKPT1` (ASCII) |
 * | 8..11 | H: byte length of the header (uint32) |
 * | 12..12+H | header: UTF-8 JSON ({@link CheckpointHeader}) |
 * | then | zero bytes up to the next multiple of 8 |
 * | then | the parameters: `header.parameters` float64 values, little-endian, in `header.tensors` order |
 *
 * The header names the model (kind, vocabulary, context, d_model), lists the tensors with their
 * shapes (the layout of {@link SequenceModel.params}), holds the SHA-256 of the payload (so a flipped
 * bit is found, not only a short file) and free-form `meta` (what produced it). A reader refuses
 * anything it cannot vouch for: wrong magic, another format version, a header that is not the JSON
 * above, a file shorter or longer than the header says, a payload whose hash differs, a model of
 * another vocabulary, context or size — each a LabError `BAD_CHECKPOINT` naming the file.
 */
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import { LabError } from '../core/errors.js';
import { makeDirs } from '../makeDirs.js';
import type { SequenceModel } from './sequenceModel.js';

export const CHECKPOINT_MAGIC = 'RRLCKPT1';
export const CHECKPOINT_FORMAT_VERSION = 1;

/** What identifies a model's parameter layout. */
export interface CheckpointModel {
  kind: 'gru';
  vocab: number;
  context: number;
  d_model: number;
}

export interface CheckpointHeader {
  format_version: number;
  model: CheckpointModel;
  tensors: { name: string; rows: number; cols: number }[];
  /** Number of float64 values in the payload. */
  parameters: number;
  /** Lower-case hex SHA-256 of the payload bytes. */
  payload_sha256: string;
  /** What produced the parameters (seed, pretraining config, code version); not checked on read. */
  meta: Record<string, unknown>;
}

/** The model description of `model`, as a header stores it. */
export function checkpointModelOf(model: SequenceModel): CheckpointModel {
  return { kind: 'gru', vocab: model.vocab, context: model.context, d_model: model.dModel };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The checkpoint bytes of `model`'s current parameters with `meta` in the header. */
export function encodeCheckpoint(model: SequenceModel, meta: Record<string, unknown>): Uint8Array {
  const n = model.params.length;
  const payload = new Uint8Array(n * 8);
  const view = new DataView(payload.buffer);
  for (let i = 0; i < n; i++) view.setFloat64(i * 8, model.params[i] as number, true);
  const header: CheckpointHeader = {
    format_version: CHECKPOINT_FORMAT_VERSION,
    model: checkpointModelOf(model),
    tensors: model.tensors.map((t) => ({ name: t.name, rows: t.rows, cols: t.cols })),
    parameters: n,
    payload_sha256: sha256(payload),
    meta,
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const start = Math.ceil((12 + json.length) / 8) * 8;
  const out = new Uint8Array(start + payload.length);
  out.set(new TextEncoder().encode(CHECKPOINT_MAGIC), 0);
  new DataView(out.buffer).setUint32(8, json.length, true);
  out.set(json, 12);
  out.set(payload, start);
  return out;
}

const bad = (file: string, why: string, field = 'init_checkpoint') =>
  new LabError('BAD_CHECKPOINT', `checkpoint ${file}: ${why}`, { details: { field, file } });

/**
 * Reads checkpoint `bytes` (from `file`, named in errors): the header and the parameters.
 * Errors: BAD_CHECKPOINT naming the file for a wrong magic, another format version, a malformed
 * header, a truncated or over-long file, or a payload whose SHA-256 differs from the header's.
 */
export function decodeCheckpoint(
  bytes: Uint8Array,
  file: string,
): { header: CheckpointHeader; params: Float64Array } {
  if (bytes.length < 12 || new TextDecoder().decode(bytes.subarray(0, 8)) !== CHECKPOINT_MAGIC) {
    throw bad(file, `not a checkpoint (expected the magic '${CHECKPOINT_MAGIC}' in the first 8 bytes)`);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const h = view.getUint32(8, true);
  if (12 + h > bytes.length) {
    throw bad(
      file,
      `truncated: the header says ${h} bytes but the file has ${bytes.length - 12} after the length`,
    );
  }
  let header: CheckpointHeader;
  try {
    header = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(12, 12 + h)));
  } catch (e) {
    throw new LabError(
      'BAD_CHECKPOINT',
      `checkpoint ${file}: the header is not valid JSON (${(e as Error).message})`,
      {
        cause: e,
        details: { field: 'init_checkpoint', file },
      },
    );
  }
  if (typeof header !== 'object' || header === null) throw bad(file, 'the header is not a JSON object');
  if (header.format_version !== CHECKPOINT_FORMAT_VERSION) {
    throw bad(
      file,
      `format_version ${JSON.stringify(header.format_version)} is not supported (this reader reads ${CHECKPOINT_FORMAT_VERSION})`,
    );
  }
  const n = header.parameters;
  const m = header.model;
  if (
    !Number.isSafeInteger(n) ||
    n < 0 ||
    typeof m !== 'object' ||
    m === null ||
    !Array.isArray(header.tensors) ||
    typeof header.payload_sha256 !== 'string'
  ) {
    throw bad(file, 'the header lacks parameters, model, tensors or payload_sha256');
  }
  const start = Math.ceil((12 + h) / 8) * 8;
  const expected = start + n * 8;
  if (bytes.length !== expected) {
    throw bad(
      file,
      bytes.length < expected
        ? `truncated: ${bytes.length} bytes, the header says ${expected} (${n} float64 parameters)`
        : `${bytes.length - expected} bytes after the ${n} parameters the header announces`,
    );
  }
  const payload = bytes.subarray(start, expected);
  if (sha256(payload) !== header.payload_sha256) {
    throw bad(file, 'corrupted: the parameters do not match the SHA-256 in the header');
  }
  const params = new Float64Array(n);
  const pv = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  for (let i = 0; i < n; i++) params[i] = pv.getFloat64(i * 8, true);
  return { header, params };
}

/**
 * Copies the parameters of checkpoint `file` into `model` after checking that it was written for
 * the same model (kind, vocabulary, context, d_model, tensor shapes); returns its header.
 * Errors: IO_ERROR for an unreadable file; BAD_CHECKPOINT naming the file (see
 * {@link decodeCheckpoint}) and, for another model, both sizes; NON_FINITE for a non-finite parameter.
 */
export function loadCheckpoint(model: SequenceModel, file: string): CheckpointHeader {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(file);
  } catch (e) {
    throw new LabError('IO_ERROR', `checkpoint ${file}: cannot read it (${(e as Error).message})`, {
      cause: e,
      details: { field: 'init_checkpoint', file },
    });
  }
  const { header, params } = decodeCheckpoint(bytes, file);
  const want = checkpointModelOf(model);
  const got = header.model;
  for (const key of ['kind', 'vocab', 'context', 'd_model'] as const) {
    if (got[key] !== want[key]) {
      throw bad(
        file,
        `written for another model: ${key} ${JSON.stringify(got[key])}, this run's model has ${JSON.stringify(want[key])} (vocab ${want.vocab}, context ${want.context}, d_model ${want.d_model})`,
      );
    }
  }
  const shapes = (ts: readonly { name: string; rows: number; cols: number }[]) =>
    ts.map((t) => `${t.name}[${t.rows},${t.cols}]`).join(' ');
  if (shapes(header.tensors) !== shapes(model.tensors) || params.length !== model.params.length) {
    throw bad(
      file,
      `tensor layout ${shapes(header.tensors)} differs from the model's ${shapes(model.tensors)}`,
    );
  }
  model.params.set(params);
  model.checkFinite(model.params, 'params', 0);
  return header;
}

/**
 * Checks, before any pretraining, that checkpoints can be written into `dir` (creating it one level
 * at a time, then writing and removing a probe file), so that an unwritable cache directory fails
 * at once rather than after minutes of pretraining. Errors: IO_ERROR naming `field` and `dir`.
 */
export function checkCheckpointDir(dir: string, field = 'sft_cache_dir'): void {
  const probe = join(dir, `.probe-${process.pid}-${threadId}.tmp`);
  try {
    makeDirs(dir);
    writeFileSync(probe, '');
    unlinkSync(probe);
  } catch (e) {
    throw new LabError(
      'IO_ERROR',
      `${field} ${dir}: cannot write checkpoints there (${(e as Error).message})`,
      {
        cause: e,
        details: { field, file: dir },
      },
    );
  }
}

/**
 * Writes `model`'s checkpoint to `file` atomically (a temporary file in the same directory, then a
 * rename, so a reader never sees half a checkpoint); creates the directory. Errors: IO_ERROR.
 */
export function saveCheckpoint(model: SequenceModel, file: string, meta: Record<string, unknown>): void {
  const bytes = encodeCheckpoint(model, meta);
  const tmp = `${file}.${process.pid}-${threadId}.tmp`; // seeds may run in worker threads of one process
  try {
    makeDirs(dirname(file)); // one level at a time: a recursive mkdir loops forever on procfs
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // nothing was written
    }
    throw new LabError('IO_ERROR', `checkpoint ${file}: cannot write it (${(e as Error).message})`, {
      cause: e,
      details: { field: 'sft_cache_dir', file },
    });
  }
}
