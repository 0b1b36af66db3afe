/**
 * Fixture records: each experiment's results at a small config, checked in as data and compared by
 * `npm test` (test/records.test.ts); regenerated on purpose by `npm run fixtures` (scripts/fixtures.ts,
 * which documents the file format). This module is the code both share: building a fixture from
 * fresh runs and listing where two of them differ beyond the stated tolerance.
 */
import { defaultConfig, runExperiment } from '../../src/experiments/options.js';
import { loadExperiment } from '../../src/experiments/registry.js';
import type { JsonValue } from '../../src/experiments/types.js';
import { toJson } from '../../src/report/records.js';

export const FIXTURE_DIR = 'test/fixtures/records';

/**
 * Numbers match when |expected - actual| <= absolute + relative x max(|expected|, |actual|). The runs
 * are deterministic (seeded streams), so on one machine they match exactly; the tolerance only
 * absorbs last-bit differences of Math.exp/log between platforms or Node versions.
 */
export const TOLERANCE = Object.freeze({ relative: 1e-9, absolute: 1e-12 });

export interface FixtureRun {
  seed: number;
  metrics: Record<string, JsonValue>;
  tables: Record<string, Record<string, JsonValue>[]>;
}

export interface FixtureFile {
  format: 1;
  experiment: string;
  /** How to regenerate, and what is compared. */
  about: string;
  tolerance: { relative: number; absolute: number };
  /** Every option's default (the CLI's `labs run` config): a changed default fails the test. */
  defaults: Record<string, JsonValue>;
  /** The small config: options set on top of the defaults for the fixture runs. */
  overrides: Record<string, JsonValue>;
  seeds: number[];
  runs: FixtureRun[];
}

/** `value` as written to a record on disk (non-finite numbers as 'NaN' / 'Infinity' strings). */
function asRecordJson<T>(value: T): T {
  return JSON.parse(toJson(value)) as T;
}

/** Runs `name` at `overrides` for each seed and returns the fixture (the shape written to disk). */
export async function buildFixture(
  name: string,
  overrides: Record<string, JsonValue>,
  seeds: readonly number[],
): Promise<FixtureFile> {
  const experiment = await loadExperiment(name);
  const runs: FixtureRun[] = [];
  for (const seed of seeds) {
    const r = await runExperiment(experiment, overrides, { seed });
    runs.push(asRecordJson({ seed, metrics: r.metrics, tables: r.tables }));
  }
  return {
    format: 1,
    experiment: name,
    about:
      'Regression fixture: metrics and tables of short runs, compared by npm test (test/records.test.ts) within `tolerance`; regenerate with npm run fixtures after a deliberate change.',
    tolerance: { ...TOLERANCE },
    defaults: asRecordJson(defaultConfig(experiment) as Record<string, JsonValue>),
    overrides,
    seeds: [...seeds],
    runs,
  };
}

/**
 * Paths at which `actual` differs from `expected` (at most `limit`): numbers beyond `tolerance`,
 * any other value (string, boolean, null, 'NaN') unequal, keys missing or added.
 */
export function differences(
  expected: unknown,
  actual: unknown,
  tolerance: { relative: number; absolute: number } = TOLERANCE,
  path = '',
  out: string[] = [],
  limit = 12,
): string[] {
  if (out.length >= limit) return out;
  if (typeof expected === 'number' && typeof actual === 'number') {
    const scale = Math.max(Math.abs(expected), Math.abs(actual));
    if (!(Math.abs(expected - actual) <= tolerance.absolute + tolerance.relative * scale)) {
      out.push(`${path}: expected ${expected}, got ${actual}`);
    }
    return out;
  }
  if (expected === null || actual === null || typeof expected !== 'object' || typeof actual !== 'object') {
    if (!Object.is(expected, actual)) {
      out.push(`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
    }
    return out;
  }
  if (Array.isArray(expected) !== Array.isArray(actual)) {
    out.push(`${path}: expected ${Array.isArray(expected) ? 'an array' : 'an object'}`);
    return out;
  }
  const e = expected as Record<string, unknown>;
  const a = actual as Record<string, unknown>;
  for (const k of new Set([...Object.keys(e), ...Object.keys(a)])) {
    const at = Array.isArray(expected) ? `${path}[${k}]` : `${path}.${k}`;
    if (!(k in a)) out.push(`${at}: missing`);
    else if (!(k in e)) out.push(`${at}: not in the fixture`);
    else differences(e[k], a[k], tolerance, at, out, limit);
    if (out.length >= limit) break;
  }
  return out;
}
