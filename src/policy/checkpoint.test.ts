import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectLabError } from '../../test/support/labError.js';
import { Rng } from '../random.js';
import {
  CHECKPOINT_MAGIC,
  decodeCheckpoint,
  encodeCheckpoint,
  loadCheckpoint,
  saveCheckpoint,
} from './checkpoint.js';
import { SequenceModel } from './sequenceModel.js';

const model = (seed: number, dModel = 4, vocab = 7, context = 10) =>
  new SequenceModel({ vocab, context, dModel }, new Rng(seed));

describe('checkpoint format', () => {
  it('round-trips every parameter bit for bit, with the documented layout', () => {
    const a = model(1);
    a.params[3] = -0; // sign of zero and odd values survive
    a.params[5] = 1e-310;
    const bytes = encodeCheckpoint(a, { seed: 1, note: 'x' });
    expect(new TextDecoder().decode(bytes.subarray(0, 8))).toBe(CHECKPOINT_MAGIC);
    const h = new DataView(bytes.buffer).getUint32(8, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(12, 12 + h)));
    expect(header.model).toEqual({ kind: 'gru', vocab: 7, context: 10, d_model: 4 });
    expect(header.parameters).toBe(a.size);
    const start = Math.ceil((12 + h) / 8) * 8;
    expect(bytes.length).toBe(start + 8 * a.size);
    // payload: little-endian float64 in parameter order
    expect(new DataView(bytes.buffer).getFloat64(start + 8 * 7, true)).toBe(a.params[7]);
    const { params, header: back } = decodeCheckpoint(bytes, 'mem');
    expect(Buffer.from(params.buffer).equals(Buffer.from(a.params.buffer))).toBe(true);
    expect(back.meta).toEqual({ seed: 1, note: 'x' });
  });

  it('saves atomically and loads into a model of the same shape', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckpt-'));
    const file = join(dir, 'sub', 'a.ckpt');
    const a = model(1);
    saveCheckpoint(a, file, {});
    const b = model(2);
    expect(b.params).not.toEqual(a.params);
    loadCheckpoint(b, file);
    expect(Buffer.from(b.params.buffer).equals(Buffer.from(a.params.buffer))).toBe(true);
  });

  it('refuses truncated, corrupted, foreign, future-version and mismatched checkpoints, naming the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckpt-'));
    const good = join(dir, 'good.ckpt');
    saveCheckpoint(model(1), good, {});
    const bytes = readFileSync(good);
    const write = (name: string, b: Uint8Array) => {
      const f = join(dir, name);
      writeFileSync(f, b);
      return f;
    };
    const truncated = write('short.ckpt', bytes.subarray(0, bytes.length - 8));
    expectLabError(() => loadCheckpoint(model(1), truncated), 'BAD_CHECKPOINT', truncated, 'truncated');
    const headerCut = write('cut.ckpt', bytes.subarray(0, 40));
    expectLabError(() => loadCheckpoint(model(1), headerCut), 'BAD_CHECKPOINT', headerCut, 'truncated');
    const flipped = Uint8Array.from(bytes);
    flipped[flipped.length - 3] = (flipped[flipped.length - 3] as number) ^ 1;
    const corrupt = write('flip.ckpt', flipped);
    expectLabError(() => loadCheckpoint(model(1), corrupt), 'BAD_CHECKPOINT', corrupt, 'corrupted');
    const foreign = write('foreign.ckpt', new TextEncoder().encode('{"not": "a checkpoint"}'));
    expectLabError(() => loadCheckpoint(model(1), foreign), 'BAD_CHECKPOINT', foreign, 'magic');
    const longer = write('long.ckpt', Buffer.concat([bytes, Buffer.alloc(8)]));
    expectLabError(() => loadCheckpoint(model(1), longer), 'BAD_CHECKPOINT', longer, 'bytes after');
    const v2 = Buffer.from(
      bytes.toString('latin1').replace('"format_version":1', '"format_version":2'),
      'latin1',
    );
    const future = write('v2.ckpt', v2);
    expectLabError(() => loadCheckpoint(model(1), future), 'BAD_CHECKPOINT', future, 'format_version 2');
    // another model size or vocabulary
    expectLabError(() => loadCheckpoint(model(1, 8), good), 'BAD_CHECKPOINT', good, 'd_model 4', 'd_model 8');
    expectLabError(() => loadCheckpoint(model(1, 4, 9), good), 'BAD_CHECKPOINT', good, 'vocab 7');
    expectLabError(() => loadCheckpoint(model(1), join(dir, 'missing.ckpt')), 'IO_ERROR', 'missing.ckpt');
  });
});

describe('checkpoint directory', () => {
  it('fails at once on a directory that cannot be made (a recursive mkdir looped forever on /proc)', () => {
    // before: mkdirSync('/proc/nope/cache', { recursive: true }) never returned
    expect(() => saveCheckpoint(model(1), '/proc/nope/cache/a.ckpt', {})).toThrow(/cannot write it/);
  });
});
