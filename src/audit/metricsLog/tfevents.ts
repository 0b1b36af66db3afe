/**
 * TensorBoard event files (`events.out.tfevents.*`) → scalar rows.
 *
 * Framing (TFRecord; tensorboard/summary/writer/record_writer.py `RecordWriter.write`), little-endian:
 *   uint64 length | uint32 masked_crc32c(length bytes) | data[length] | uint32 masked_crc32c(data)
 * Both CRCs are verified. A record cut short at the end of the file (a job still writing) ends the
 * read with a note; a CRC mismatch before the end is a PARSE_ERROR naming the file and byte offset.
 *
 * Each record is a `tensorboard.Event` (tensorboard/compat/proto/event.proto: wall_time = 1,
 * step = 2, oneof what { file_version = 3, summary = 5, ... }). Scalars come in two encodings
 * (tensorboard/compat/proto/summary.proto, `Summary.Value`: tag = 1, metadata = 9,
 * oneof value { simple_value = 2, tensor = 8, ... }):
 *  - legacy `simple_value` (float32): torch.utils.tensorboard `SummaryWriter.add_scalar` (the default
 *    `new_style=False`), and so verl's `_TensorboardAdapter` (verl/utils/tracking.py);
 *  - v2 `tensor` with `metadata.plugin_data.plugin_name == "scalars"` (tf.summary.scalar,
 *    tensorboard/plugins/scalar/summary_v2.py `scalar_pb`): a rank-0 TensorProto
 *    (tensorboard/compat/proto/tensor.proto: dtype = 1, tensor_content = 4, float_val = 5,
 *    double_val = 6) of dtype DT_FLOAT (1) or DT_DOUBLE (2) (types.proto), its value either in
 *    float_val/double_val or as little-endian bytes in tensor_content (TF's C++ summary writer).
 * Other summaries (histograms, images, text, other plugins' tensors) are not scalars and are skipped;
 * a "scalars" tensor of another dtype or shape is counted in a note.
 */
import { createFileRegistry, type DescMessage, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { LabError } from '../../core/errors.js';
import { maskedCrc32c } from './crc32c.js';
import { TENSORBOARD_DESCRIPTOR_SET_BASE64 } from './tensorboardProto.js';
import type { ScalarRow } from './types.js';

let eventSchema: DescMessage | null = null;

/** The `tensorboard.Event` descriptor, built once from the committed descriptor set. */
function eventDesc(): DescMessage {
  if (eventSchema) return eventSchema;
  const set = fromBinary(FileDescriptorSetSchema, Buffer.from(TENSORBOARD_DESCRIPTOR_SET_BASE64, 'base64'));
  const desc = createFileRegistry(set).getMessage('tensorboard.Event');
  if (!desc) throw new Error('tensorboard.Event missing from the committed descriptor set');
  eventSchema = desc;
  return desc;
}

const DT_FLOAT = 1;
const DT_DOUBLE = 2;

// The reflective messages' shapes (field names are the protos' json names).
interface TensorMsg {
  dtype: number;
  tensorShape?: { dim: unknown[] };
  tensorContent: Uint8Array;
  floatVal: number[];
  doubleVal: number[];
}
interface ValueMsg {
  tag: string;
  metadata?: { pluginData?: { pluginName: string } };
  value:
    | { case: 'simpleValue'; value: number }
    | { case: 'tensor'; value: TensorMsg }
    | { case: string | undefined };
}
interface EventMsg {
  wallTime: number;
  step: bigint;
  what: { case: string | undefined; value?: unknown };
}

export interface TfEventsResult {
  rows: ScalarRow[];
  notes: string[];
  /** Records read (all events, scalar or not). */
  records: number;
}

function tensorScalar(t: TensorMsg): number | null {
  if ((t.tensorShape?.dim.length ?? 0) !== 0) return null;
  if (t.dtype === DT_FLOAT) {
    if (t.floatVal.length === 1) return t.floatVal[0] as number;
    if (t.tensorContent.length === 4) {
      return new DataView(t.tensorContent.buffer, t.tensorContent.byteOffset, 4).getFloat32(0, true);
    }
  } else if (t.dtype === DT_DOUBLE) {
    if (t.doubleVal.length === 1) return t.doubleVal[0] as number;
    if (t.tensorContent.length === 8) {
      return new DataView(t.tensorContent.buffer, t.tensorContent.byteOffset, 8).getFloat64(0, true);
    }
  }
  return null;
}

/**
 * Reads the scalars of one event file's bytes. `file` names it in notes and errors. A partial record
 * at the end is not an error (the writer may be mid-record); everything complete before it is read.
 */
export function readTfEvents(bytes: Uint8Array, file: string): TfEventsResult {
  const desc = eventDesc();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const rows: ScalarRow[] = [];
  const notes: string[] = [];
  const skippedTensors = new Map<string, number>();
  let offset = 0;
  let records = 0;
  while (offset < bytes.length) {
    if (bytes.length - offset < 12) {
      notes.push(
        `${file}: partial record header at byte ${offset} (${bytes.length - offset} of 12 bytes; the writer may still be writing): read the ${records} complete record(s) before it`,
      );
      break;
    }
    const length = view.getBigUint64(offset, true);
    const lengthCrc = view.getUint32(offset + 8, true);
    if (maskedCrc32c(bytes, offset, offset + 8) !== lengthCrc) {
      throw new LabError(
        'PARSE_ERROR',
        `${file}: byte ${offset}: TFRecord length CRC mismatch (record ${records + 1}); the file is corrupt`,
        {
          details: { file, offset, record: records + 1 },
        },
      );
    }
    const end = offset + 12 + Number(length) + 4;
    if (end > bytes.length) {
      notes.push(
        `${file}: partial record at byte ${offset} (${bytes.length - offset} of ${end - offset} bytes; the writer may still be writing): read the ${records} complete record(s) before it`,
      );
      break;
    }
    const dataStart = offset + 12;
    const dataEnd = dataStart + Number(length);
    if (maskedCrc32c(bytes, dataStart, dataEnd) !== view.getUint32(dataEnd, true)) {
      throw new LabError(
        'PARSE_ERROR',
        `${file}: byte ${offset}: TFRecord data CRC mismatch (record ${records + 1}, ${length} bytes of data at byte ${dataStart}); the file is corrupt`,
        {
          details: { file, offset, record: records + 1 },
        },
      );
    }
    let event: EventMsg;
    try {
      event = fromBinary(desc, bytes.subarray(dataStart, dataEnd)) as unknown as EventMsg;
    } catch (e) {
      throw new LabError(
        'PARSE_ERROR',
        `${file}: byte ${offset}: record ${records + 1} is not a tensorboard.Event (${(e as Error).message})`,
        {
          cause: e,
          details: { file, offset, record: records + 1 },
        },
      );
    }
    records++;
    offset = end;
    if (event.what.case !== 'summary') continue;
    const summary = event.what.value as { value: ValueMsg[] };
    const step = Number(event.step);
    for (const v of summary.value) {
      let value: number | null = null;
      if (v.value.case === 'simpleValue') value = (v.value as { value: number }).value;
      else if (v.value.case === 'tensor' && v.metadata?.pluginData?.pluginName === 'scalars') {
        value = tensorScalar((v.value as { value: TensorMsg }).value);
        if (value === null) skippedTensors.set(v.tag, (skippedTensors.get(v.tag) ?? 0) + 1);
      }
      if (value === null) continue;
      rows.push({ step, metric: v.tag, value, wallTime: event.wallTime });
    }
  }
  for (const [tag, n] of skippedTensors) {
    notes.push(`${file}: ${n} "scalars" tensor(s) of tag '${tag}' are not rank-0 float32/float64: skipped`);
  }
  return { rows, notes, records };
}
