/**
 * Runs every golden case through the lab's kernels and compares with verl's outputs.
 *
 * Rules (issue "Foundation", item 5):
 *  - fn without an adapter -> `unsupported`;
 *  - adapter declares the case an intentional difference -> `deviation` (reason kept);
 *  - verl raised, or verl's output contains NaN, and the adapter threw a LabError -> `matched`
 *    (the lab refuses to produce NaN where verl does);
 *  - adapter threw a LabError where verl returned finite values, or threw anything else -> `mismatched`;
 *  - otherwise every compared output key must agree within tolerance (|a-b| <= abs + rel*|b|);
 *    -0 equals 0; 'NaN' / 'Infinity' strings must match exactly.
 */
import { isLabError, LabError } from '../errors.js';
import type {
  Adapter,
  AdapterTable,
  CaseResult,
  ConformanceResult,
  GoldenCase,
  GoldenFile,
} from './types.js';

const DEFAULT_TOL = { rel: 1e-5, abs: 1e-6 };

/**
 * Checks that `data` (a parsed JSON value) has the golden file's shape — an object with a `cases`
 * array whose entries have `name`, `fn` and `inputs` — and returns it typed. `source` names the file
 * in errors. Errors: PARSE_ERROR naming the file and the case index.
 */
export function parseGoldenFile(data: unknown, source = 'golden file'): GoldenFile {
  if (typeof data !== 'object' || data === null || !Array.isArray((data as GoldenFile).cases)) {
    throw new LabError(
      'PARSE_ERROR',
      `${source}: not a golden file (expected an object with a "cases" array)`,
      {
        details: { file: source },
      },
    );
  }
  const file = data as GoldenFile;
  file.cases.forEach((c, i) => {
    if (typeof c?.name !== 'string' || typeof c?.fn !== 'string' || typeof c?.inputs !== 'object') {
      throw new LabError('PARSE_ERROR', `${source}: case ${i} lacks name/fn/inputs`, {
        details: { file: source, row: i },
      });
    }
  });
  return file;
}

/** Replaces `{ "$fixture": NAME }` inputs by the fixture and applies `config.arg_map`. */
export function resolveInputs(c: GoldenCase, fixtures: GoldenFile['fixtures']): Record<string, unknown> {
  const ref = (c.inputs as { $fixture?: unknown }).$fixture;
  let inputs: Record<string, unknown> = c.inputs;
  if (typeof ref === 'string') {
    const fx = fixtures?.[ref];
    if (!fx)
      throw new LabError('PARSE_ERROR', `case ${c.name}: unknown fixture '${ref}'`, {
        details: { case: c.name },
      });
    inputs = { ...fx };
  }
  const argMap = c.config?.arg_map as Record<string, string> | undefined;
  if (argMap) {
    const base = inputs;
    inputs = { ...inputs };
    for (const [arg, key] of Object.entries(argMap)) inputs[arg] = base[key];
  }
  return inputs;
}

function isRaise(outputs: unknown): outputs is { raises: string; message: string } {
  return typeof outputs === 'object' && outputs !== null && 'raises' in outputs;
}

function containsNaN(v: unknown): boolean {
  if (v === 'NaN') return true;
  if (typeof v === 'number') return Number.isNaN(v);
  if (Array.isArray(v)) return v.some(containsNaN);
  if (ArrayBuffer.isView(v)) return Array.from(v as Float64Array).some((x) => Number.isNaN(x));
  if (typeof v === 'object' && v !== null) return Object.values(v).some(containsNaN);
  return false;
}

function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v === 'NaN') return Number.NaN;
  if (v === 'Infinity') return Number.POSITIVE_INFINITY;
  if (v === '-Infinity') return Number.NEGATIVE_INFINITY;
  return undefined;
}

/** Returns null when equal within tolerance, else a description of the first difference. */
export function compareValues(
  expected: unknown,
  actual: unknown,
  tol: { rel: number; abs: number },
  path: string,
): string | null {
  if (ArrayBuffer.isView(actual)) actual = Array.from(actual as Float64Array);
  const en = toNumber(expected);
  if (en !== undefined) {
    const an = toNumber(actual);
    if (an === undefined)
      return `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
    if (Number.isNaN(en) || Number.isNaN(an))
      return Number.isNaN(en) && Number.isNaN(an) ? null : `${path}: expected ${en}, got ${an}`;
    if (!Number.isFinite(en) || !Number.isFinite(an))
      return en === an ? null : `${path}: expected ${en}, got ${an}`;
    return Math.abs(en - an) <= tol.abs + tol.rel * Math.abs(en)
      ? null
      : `${path}: expected ${en}, got ${an} (diff ${Math.abs(en - an)})`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual))
      return `${path}: expected an array of ${expected.length}, got ${typeof actual}`;
    if (actual.length !== expected.length)
      return `${path}: expected length ${expected.length}, got ${actual.length}`;
    for (let i = 0; i < expected.length; i++) {
      const d = compareValues(expected[i], actual[i], tol, `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (expected === null)
    return actual === null || actual === undefined
      ? null
      : `${path}: expected null, got ${JSON.stringify(actual)}`;
  if (typeof expected === 'object') {
    if (typeof actual !== 'object' || actual === null)
      return `${path}: expected an object, got ${JSON.stringify(actual)}`;
    for (const [k, ev] of Object.entries(expected as Record<string, unknown>)) {
      if (!(k in (actual as object))) return `${path}.${k}: missing in the lab's output`;
      const d = compareValues(ev, (actual as Record<string, unknown>)[k], tol, `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return expected === actual
    ? null
    : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

/**
 * One golden case through its adapter, classified by the rules at the top of this file: `unsupported`
 * (no adapter), `deviation` (declared difference), `matched` (within `adapter.tolerance`, default
 * |a − b| ≤ 1e-6 + 1e-5·|b|, or a LabError where verl raises / returns NaN), else `mismatched` with the
 * first differing output key. Never throws for a failing kernel: failures are results.
 */
export function runCase(
  c: GoldenCase,
  adapter: Adapter | undefined,
  fixtures: GoldenFile['fixtures'],
): CaseResult {
  const base = { name: c.name, fn: c.fn };
  if (!adapter) return { ...base, status: 'unsupported' };
  const reason = adapter.deviation?.(c) ?? null;
  if (reason) return { ...base, status: 'deviation', detail: reason };
  const verlRefuses = isRaise(c.outputs) || containsNaN(c.outputs);
  let actual: Record<string, unknown>;
  try {
    actual = adapter.run(resolveInputs(c, fixtures), c.config ?? {}, c);
  } catch (e) {
    if (isLabError(e) && verlRefuses)
      return {
        ...base,
        status: 'matched',
        detail: `LabError ${e.code} where verl ${isRaise(c.outputs) ? `raises ${c.outputs.raises}` : 'returns NaN'}`,
      };
    const what = isLabError(e)
      ? `LabError ${e.code}: ${e.message}`
      : `unexpected ${(e as Error)?.name}: ${(e as Error)?.message}`;
    return { ...base, status: 'mismatched', detail: what };
  }
  if (isRaise(c.outputs))
    return {
      ...base,
      status: 'mismatched',
      detail: `verl raises ${c.outputs.raises}, the lab returned a value`,
    };
  if (containsNaN(c.outputs))
    return {
      ...base,
      status: 'mismatched',
      detail: 'verl returns NaN here; the lab must raise a LabError instead',
    };
  const tol = adapter.tolerance ?? DEFAULT_TOL;
  const expected = c.outputs as Record<string, unknown>;
  for (const [k, ev] of Object.entries(expected)) {
    if (adapter.ignoreKeys && k in adapter.ignoreKeys) continue;
    if (!(k in actual)) return { ...base, status: 'mismatched', detail: `${k}: missing in the lab's output` };
    const d = compareValues(ev, actual[k], tol, k);
    if (d) return { ...base, status: 'mismatched', detail: d };
  }
  return { ...base, status: 'matched' };
}

/** Every case of `file` through {@link runCase} with `adapters[case.fn]`, plus the count per status. */
export function runConformance(file: GoldenFile, adapters: AdapterTable): ConformanceResult {
  const cases = file.cases.map((c) => runCase(c, adapters[c.fn], file.fixtures));
  const count = (s: CaseResult['status']) => cases.filter((r) => r.status === s).length;
  return {
    matched: count('matched'),
    mismatched: count('mismatched'),
    deviations: count('deviation'),
    unsupported: count('unsupported'),
    cases,
  };
}
