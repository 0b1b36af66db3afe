/**
 * What values an experiment option accepts, read from its zod schema so `labs list` can never
 * disagree with what `--set` validates: `integer in [1, 10000]`, `number > 0`, `one of adam|sgd`.
 */
import { z } from 'zod';

/** JSON-Schema fields we read (zod's `toJSONSchema` output for the option schemas). */
interface JsonSchemaLike {
  type?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
}

/** zod writes the safe-integer limits for a plain `.int()`; they are no real bound. */
const SAFE = Number.MAX_SAFE_INTEGER;

/**
 * One short phrase for the accepted values of `schema`, or '' when the schema says nothing a
 * reader could use (e.g. a custom refinement). Bounds at +-2^53-1 (zod's int limits) are dropped.
 */
export function describeAccepted(schema: z.ZodType): string {
  let j: JsonSchemaLike;
  try {
    j = z.toJSONSchema(schema, { unrepresentable: 'any', io: 'input' }) as JsonSchemaLike;
  } catch {
    return '';
  }
  if (Array.isArray(j.enum)) return `one of ${j.enum.map(String).join('|')}`;
  if (j.type === 'integer' || j.type === 'number') {
    const lo =
      j.exclusiveMinimum !== undefined
        ? { v: j.exclusiveMinimum, open: true }
        : j.minimum !== undefined && j.minimum > -SAFE
          ? { v: j.minimum, open: false }
          : null;
    const hi =
      j.exclusiveMaximum !== undefined
        ? { v: j.exclusiveMaximum, open: true }
        : j.maximum !== undefined && j.maximum < SAFE
          ? { v: j.maximum, open: false }
          : null;
    if (lo && hi) return `${j.type} in ${lo.open ? '(' : '['}${lo.v}, ${hi.v}${hi.open ? ')' : ']'}`;
    if (lo) return `${j.type} ${lo.open ? '>' : '>='} ${lo.v}`;
    if (hi) return `${j.type} ${hi.open ? '<' : '<='} ${hi.v}`;
    return j.type;
  }
  if (j.type === 'string') return 'text';
  if (j.type === 'boolean') return 'true|false';
  return '';
}
