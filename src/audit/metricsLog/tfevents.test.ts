import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventFileBytes } from '../../../test/support/tfeventsWriter.js';
import { LabError } from '../../core/errors.js';
import { readTfEvents } from './tfevents.js';

const FIXTURE = join(import.meta.dirname, '../../../test/fixtures/tensorboard/events.out.tfevents.fixture');

describe('readTfEvents', () => {
  it("reads the event file written by TensorBoard's own Python writer (scripts/tensorboard/)", async () => {
    const bytes = new Uint8Array(await readFile(FIXTURE));
    const r = readTfEvents(bytes, 'fixture');
    expect(r.notes).toEqual([]);
    expect(r.records).toBe(1 + 3 * 2 + 1); // file_version + 2 per step + the float64 one
    const by = (tag: string) =>
      r.rows.filter((x) => x.metric === tag).map((x) => [x.step, x.value, x.wallTime]);
    // v2 tensor scalars (summary_v2.scalar_pb), float32
    expect(by('critic/score/mean')).toEqual([
      [1, 0.25, 1700000001],
      [2, 0.5, 1700000002],
      [3, 0.75, 1700000003],
    ]);
    // legacy simple_value (torch.utils.tensorboard add_scalar)
    expect(by('response_length/clip_ratio')).toEqual([
      [1, 0.125, 1700000001],
      [2, 0, 1700000002],
      [3, 1, 1700000003],
    ]);
    // v2 tensor of dtype DT_DOUBLE
    expect(by('response_length/mean')).toEqual([[2, 123.5, 1700000002]]);
  });

  it('reads what is complete of a truncated file and says so; a CRC mismatch names the byte offset', async () => {
    const full = eventFileBytes([
      { step: 1, tag: 'reward', value: 0.5 },
      { step: 2, tag: 'reward', value: 0.25 },
    ]);
    expect(readTfEvents(full, 'f').rows.map((r) => r.value)).toEqual([0.5, 0.25]);
    for (const cut of [full.length - 1, full.length - 10, full.length - 20]) {
      const r = readTfEvents(full.subarray(0, cut), 'f');
      expect(r.rows.map((x) => x.value)).toEqual([0.5]);
      expect(r.notes.join('\n')).toMatch(/^f: partial record (header )?at byte \d+/);
    }
    // Flip a byte of the second record's data: error names the file and the record's offset.
    const first = 12 + Number(new DataView(full.buffer, full.byteOffset).getBigUint64(0, true)) + 4;
    const second =
      first + 12 + Number(new DataView(full.buffer, full.byteOffset).getBigUint64(first, true)) + 4;
    const bad = full.slice();
    bad[second + 14] = (bad[second + 14] as number) ^ 0xff;
    let err: unknown;
    try {
      readTfEvents(bad, 'run/events.out.tfevents.x');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LabError);
    expect((err as LabError).code).toBe('PARSE_ERROR');
    expect((err as LabError).message).toContain(
      `run/events.out.tfevents.x: byte ${second}: TFRecord data CRC mismatch`,
    );
    // A corrupt length CRC.
    const badLen = full.slice();
    badLen[first + 9] = (badLen[first + 9] as number) ^ 1;
    expect(() => readTfEvents(badLen, 'g')).toThrow(`g: byte ${first}: TFRecord length CRC mismatch`);
  });
});
