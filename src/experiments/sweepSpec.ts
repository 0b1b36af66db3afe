/**
 * `--sweep key=v1,v2,...` as text: what the CLI's grammar checks while parsing argv. Its own module
 * (sweep.ts runs the sweep) so that parsing the command line loads neither the experiments' option
 * schemas nor zod (docs/bench-startup.md).
 */
import { LabError } from '../core/errors.js';

/** `--sweep key=v1,v2,...`: the option key and its values as given (each is read like a `--set` value). */
export interface SweepSpec {
  key: string;
  values: string[];
}

/**
 * Parses `key=v1,v2,...` (at least two distinct values; the key is checked against the experiment's
 * options later). Errors: BAD_CLI naming `--sweep` for a missing '=', an empty value, fewer than two
 * values or a repeated value (numbers by value: `1,1.0` repeats 1).
 */
export function parseSweep(text: string): SweepSpec {
  const eq = text.indexOf('=');
  const bad = (why: string) =>
    new LabError('BAD_CLI', `--sweep ${text}: ${why}`, { details: { field: '--sweep', value: text } });
  if (eq <= 0) throw bad('expected key=v1,v2,... (e.g. budget=22,25,30)');
  const key = text.slice(0, eq).trim();
  const values = text
    .slice(eq + 1)
    .split(',')
    .map((v) => v.trim());
  if (values.some((v) => v === '')) throw bad('a value is empty');
  if (values.length < 2) throw bad('give at least two values (a sweep of one value is --set)');
  // Numbers compare by value: `1` and `1.0` (or `1e0`) are the same point, run twice.
  const seen = new Map<string, string>();
  for (const v of values) {
    const n = Number(v);
    const id = Number.isFinite(n) && /^[-+]?[\d.]/.test(v) ? `number:${n}` : `text:${v}`;
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      throw bad(
        earlier === v ? `value ${v} is listed twice` : `values ${earlier} and ${v} are the same number`,
      );
    }
    seen.set(id, v);
  }
  return { key, values };
}
