import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../experiments/types.js';
import {
  makeDirs,
  readRecord,
  runDirName,
  seedsDirLabel,
  toJson,
  writeFileAtomic,
  writeRecord,
} from './records.js';

const record: RunRecord = {
  experiment: 'demo',
  seed: 7,
  version: '0.1.0',
  config: { lr: 0.5 },
  metrics: { eval_success_after: 0.9, weird: Number.NaN },
  curves: { update: [1, 2], 'success.train': [0.1, 0.2] },
  tables: {},
  timing: { wall_ms: 12 },
};

describe('run records', () => {
  it('writes record.json under <experiment>__<seed>__<timestamp> and leaves no temp file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'labs-rec-'));
    const now = new Date('2026-11-29T10:00:00.000Z');
    const path = await writeRecord(record, { root, now });
    expect(path).toBe(join(root, 'demo__7__2026-11-29T10-00-00-000Z', 'record.json'));
    const files = await readdir(join(root, 'demo__7__2026-11-29T10-00-00-000Z'));
    expect(files).toEqual(['record.json']);
    const back = await readRecord(path);
    expect(back).toMatchObject({
      experiment: 'demo',
      seed: 7,
      metrics: { eval_success_after: 0.9, weird: 'NaN' },
    });
  });

  it('removes its temp file when the rename fails (target is a directory)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-atomic-'));
    await mkdir(join(dir, 'report.html'));
    await expect(writeFileAtomic(join(dir, 'report.html'), '<html></html>')).rejects.toThrow();
    expect(await readdir(dir)).toEqual(['report.html']);
  });

  it('names a multi-seed directory by its range only when the seeds are consecutive', async () => {
    expect(seedsDirLabel([3, 4, 5])).toBe('3..5');
    expect(seedsDirLabel([1, 5, 9])).toBe('1,5,9');
    const root = await mkdtemp(join(tmpdir(), 'labs-seeds-'));
    const multi = {
      experiment: 'demo',
      seeds: [1, 5, 9],
      version: '0.1.0',
      config: {},
      runs: [],
      summary: {},
      timing: { wall_ms: 1 },
    };
    const path = await writeRecord(multi, { root, now: new Date('2026-11-29T10:00:00.000Z') });
    expect(path).toBe(join(root, 'demo__1,5,9__2026-11-29T10-00-00-000Z', 'record.json'));
  });

  it('names multi-seed directories by their seed range', () => {
    expect(runDirName('agent', '1..20', new Date('2026-01-02T03:04:05.006Z'))).toBe(
      'agent__1..20__2026-01-02T03-04-05-006Z',
    );
  });

  it('writes non-finite numbers as strings instead of null', () => {
    expect(JSON.parse(toJson({ a: Number.POSITIVE_INFINITY, b: -Infinity, c: 1 }))).toEqual({
      a: 'Infinity',
      b: '-Infinity',
      c: 1,
    });
  });

  it('rejects malformed record files with BAD_RECORD naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-bad-'));
    const notJson = join(dir, 'a.json');
    await writeFile(notJson, '{"experiment": ');
    await expect(readRecord(notJson)).rejects.toMatchObject({
      code: 'BAD_RECORD',
      message: expect.stringContaining(notJson),
    });
    const noExp = join(dir, 'b.json');
    await writeFile(noExp, '{"metrics": {}}');
    await expect(readRecord(noExp)).rejects.toMatchObject({
      code: 'BAD_RECORD',
      message: expect.stringContaining('experiment'),
    });
    await expect(readRecord(join(dir, 'missing.json'))).rejects.toMatchObject({ code: 'IO_ERROR' });
    expect(JSON.parse(await readFile(noExp, 'utf8'))).toEqual({ metrics: {} });
  });

  it('makeDirs makes missing levels one at a time, returns them, and fails at once on procfs', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-mkdirs-'));
    expect(makeDirs(join(dir, 'a', 'b'))).toEqual([join(dir, 'a'), join(dir, 'a', 'b')]);
    expect(makeDirs(join(dir, 'a', 'b'))).toEqual([]);
    await writeFile(join(dir, 'f'), 'x');
    expect(() => makeDirs(join(dir, 'f'))).toThrow(/ENOTDIR/);
    expect(() => makeDirs(join(dir, 'f', 'g'))).toThrow(/ENOTDIR/);
    // mkdir(..., { recursive: true }) never returns here (Node retries the parent on ENOENT)
    if (existsSync('/proc/self')) expect(() => makeDirs('/proc/labs-nope/x')).toThrow(/ENOENT/);
  });
});
