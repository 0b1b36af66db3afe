/**
 * Resolve an experiment's effective config from its option table and `--set key=value` pairs.
 * Defaults are merged once; every value is validated by the option's zod schema; unknown keys and
 * invalid values are LabErrors that name the key.
 */
import { z } from 'zod';
import { LabError } from '../core/errors.js';
import type { JsonValue, OptionTable } from './types.js';

/** Parses `key=value`; the value is read as JSON when it is valid JSON (numbers, booleans, arrays), else as a string. */
export function parseSetPair(pair: string): [string, unknown] {
  const eq = pair.indexOf('=');
  if (eq <= 0) {
    throw new LabError('BAD_CLI', `--set expects key=value, got '${pair}'`, {
      details: { field: '--set', value: pair },
    });
  }
  const key = pair.slice(0, eq).trim();
  const raw = pair.slice(eq + 1).trim();
  let value: unknown = raw;
  if (raw !== '') {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  return [key, value];
}

/**
 * The effective config of `experiment`: every option's default, overridden by the `--set key=value`
 * pairs in `sets` (later pairs win), each value parsed and validated by its zod schema.
 * Errors: UNKNOWN_OPTION for a key not in `table` (the message lists the known keys), BAD_OPTION_VALUE
 * naming the key and the schema's reason.
 */
export function resolveConfig(
  experiment: string,
  table: OptionTable,
  sets: readonly string[],
): Record<string, JsonValue> {
  const config: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(table)) config[key] = spec.default;
  for (const pair of sets) {
    const [key, value] = parseSetPair(pair);
    const spec = table[key];
    if (!spec) {
      const known = Object.keys(table).sort().join(', ');
      throw new LabError(
        'UNKNOWN_OPTION',
        `unknown --set key '${key}' for experiment '${experiment}'; known: ${known}`,
        {
          details: { field: '--set', key },
        },
      );
    }
    // Enum options with numeric-looking values (e.g. '1') must still match the string choice.
    let parsed = spec.schema.safeParse(value);
    if (!parsed.success && typeof value !== 'string') {
      const asString = spec.schema.safeParse(String(value));
      // Keep the first (typed) error unless the string reading is actually valid.
      if (asString.success) parsed = asString;
    }
    if (!parsed.success) {
      const reason = parsed.error.issues.map((i) => i.message).join('; ');
      throw new LabError('BAD_OPTION_VALUE', `--set ${key}=${JSON.stringify(value)}: ${reason}`, {
        details: { field: '--set', key },
      });
    }
    config[key] = parsed.data;
  }
  return config as Record<string, JsonValue>;
}

/**
 * The config an experiment's `run` actually uses, validated again because `run` may be called without
 * the CLI: every option of `table` with its default filled in where `config` lacks it, each value
 * checked by its zod schema, unknown keys refused. For a config from {@link resolveConfig} the values
 * come back unchanged. Errors: BAD_OPTION_VALUE `'<experiment>: option '<key>': <reason>'`.
 */
export function parseConfig(
  experiment: string,
  table: OptionTable,
  config: Record<string, unknown>,
): Record<string, JsonValue> {
  const shape = Object.fromEntries(
    Object.entries(table).map(([k, spec]) => [k, spec.schema.default(spec.default as never)]),
  );
  const parsed = z.strictObject(shape).safeParse(config);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const key = issue?.path.join('.') ?? '?';
    throw new LabError('BAD_OPTION_VALUE', `${experiment}: option '${key}': ${issue?.message ?? 'invalid'}`, {
      details: { field: key },
    });
  }
  return parsed.data as Record<string, JsonValue>;
}
