/**
 * A minimal TensorBoard event-file writer, for tests and for `labs audit` fixtures written by the test
 * itself: the same framing as tensorboard/summary/writer/record_writer.py (see tfevents.ts) and
 * events with legacy `simple_value` scalars, as torch.utils.tensorboard's `add_scalar` writes them.
 * The reader is also tested on a file written by TensorBoard's own writer
 * (test/fixtures/tensorboard/), so this writer is not the only witness of the format.
 */
import { create, createFileRegistry, type DescMessage, fromBinary, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { maskedCrc32c } from '../../src/audit/metricsLog/crc32c.js';
import { TENSORBOARD_DESCRIPTOR_SET_BASE64 } from '../../src/audit/metricsLog/tensorboardProto.js';

function schema(name: string): DescMessage {
  const set = fromBinary(FileDescriptorSetSchema, Buffer.from(TENSORBOARD_DESCRIPTOR_SET_BASE64, 'base64'));
  const d = createFileRegistry(set).getMessage(name);
  if (!d) throw new Error(`${name} missing from the descriptor set`);
  return d;
}

/** One TFRecord: uint64 length, masked CRC of the length, data, masked CRC of the data. */
export function tfRecord(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(16 + data.length);
  const view = new DataView(out.buffer);
  view.setBigUint64(0, BigInt(data.length), true);
  view.setUint32(8, maskedCrc32c(out, 0, 8), true);
  out.set(data, 12);
  view.setUint32(12 + data.length, maskedCrc32c(data), true);
  return out;
}

/**
 * An event file holding a file_version event, then one event per (step, tag, value) with a legacy
 * `simple_value` (float32, as TensorBoard stores it).
 */
export function eventFileBytes(scalars: readonly { step: number; tag: string; value: number }[]): Uint8Array {
  const eventSchema = schema('tensorboard.Event');
  const records: Uint8Array[] = [
    tfRecord(
      toBinary(
        eventSchema,
        create(eventSchema, { wallTime: 1, what: { case: 'fileVersion', value: 'brain.Event:2' } }),
      ),
    ),
  ];
  for (const s of scalars) {
    const event = create(eventSchema, {
      wallTime: 1000 + s.step,
      step: BigInt(s.step),
      what: {
        case: 'summary',
        value: { value: [{ tag: s.tag, value: { case: 'simpleValue', value: s.value } }] },
      },
    });
    records.push(tfRecord(toBinary(eventSchema, event)));
  }
  return Buffer.concat(records);
}
