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

/**
 * The case-level `config` keys the golden format documents (meta.format.config and .inputs): `args`,
 * `actor_config`, `algo_config`, and `arg_map` / `mask_input` / `index_input`, which name the inputs
 * that feed an argument. An adapter may read more keys of its own function (`Adapter.configKeys`);
 * any other key is an error naming the case, never silently ignored.
 */
export const GOLDEN_CONFIG_KEYS: readonly string[] = [
  'args',
  'actor_config',
  'algo_config',
  'arg_map',
  'mask_input',
  'index_input',
];

/** Where a case sits, for errors: `FILE: case I 'NAME' (FN)`. */
function caseWhere(c: GoldenCase, i: number | undefined, source: string | undefined): string {
  const at = `case ${i === undefined ? '' : `${i} `}'${c.name}' (${c.fn})`;
  return source ? `${source}: ${at}` : at;
}

function caseError(c: GoldenCase, i: number | undefined, source: string | undefined, problem: string) {
  return new LabError('PARSE_ERROR', `${caseWhere(c, i, source)}: ${problem}`, {
    details: { ...(source ? { file: source } : {}), case: c.name, ...(i === undefined ? {} : { row: i }) },
  });
}

/**
 * Checks one case against the golden format before it runs (errors are PARSE_ERROR naming the file,
 * the case index, name and function): `outputs` must be `{raises, message}` or an object with at least
 * one output that is compared (a case that checks nothing would count as a pass); every `config` key
 * must be in {@link GOLDEN_CONFIG_KEYS} or in the adapter's `configKeys`; `mask_input`, `index_input`
 * and `arg_map` must name inputs that exist. An unsupported case (no adapter) is checked for outputs only.
 */
export function checkCase(
  c: GoldenCase,
  adapter: Adapter | undefined,
  fixtures: GoldenFile['fixtures'],
  index?: number,
  source?: string,
): void {
  const fail = (problem: string) => caseError(c, index, source, problem);
  const outputs = c.outputs;
  if (outputs === undefined) throw fail('has no "outputs", so it checks nothing');
  if (typeof outputs !== 'object' || outputs === null || Array.isArray(outputs)) {
    throw fail(`"outputs" must be an object of named outputs, got ${JSON.stringify(outputs)}`);
  }
  if (!isRaise(outputs)) {
    const compared = Object.keys(outputs).filter((k) => !(adapter?.ignoreKeys && k in adapter.ignoreKeys));
    if (compared.length === 0) throw fail('"outputs" has no compared output, so it checks nothing');
  }
  if (!adapter) return;
  const config = c.config ?? {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw fail(`"config" must be an object, got ${JSON.stringify(config)}`);
  }
  const own = adapter.configKeys ?? [];
  for (const key of Object.keys(config)) {
    if (!GOLDEN_CONFIG_KEYS.includes(key) && !own.includes(key)) {
      throw fail(
        `config key '${key}' is not in the golden format (known: ${[...GOLDEN_CONFIG_KEYS, ...own].join(', ')})`,
      );
    }
  }
  resolveInputs(c, fixtures, adapter, index, source);
}

/**
 * The inputs a case's adapter receives: `{ "$fixture": NAME }` replaced by the fixture, then
 * `config.arg_map` (`inputs[arg] = inputs[arg_map[arg]]`), `config.mask_input` (the input that feeds
 * the function's mask argument, `adapter.maskArg`, default `response_mask`) and `config.index_input`
 * (the input that feeds `index`) applied. Each must name an existing input (PARSE_ERROR naming the case).
 */
export function resolveInputs(
  c: GoldenCase,
  fixtures: GoldenFile['fixtures'],
  adapter?: Adapter,
  index?: number,
  source?: string,
): Record<string, unknown> {
  const fail = (problem: string) => caseError(c, index, source, problem);
  const ref = (c.inputs as { $fixture?: unknown }).$fixture;
  let inputs: Record<string, unknown> = c.inputs;
  if (typeof ref === 'string') {
    const fx = fixtures?.[ref];
    if (!fx) throw fail(`unknown fixture '${ref}'`);
    inputs = { ...fx };
  }
  const base = inputs;
  const feed = (key: string, arg: string, from: unknown) => {
    if (typeof from !== 'string' || !(from in base)) {
      throw fail(`config.${key} names ${JSON.stringify(from)}, which is not one of the inputs`);
    }
    inputs[arg] = base[from];
  };
  const config = c.config ?? {};
  const argMap = config.arg_map as Record<string, unknown> | undefined;
  if (argMap !== undefined) {
    if (typeof argMap !== 'object' || argMap === null) throw fail('config.arg_map must be an object');
    inputs = { ...inputs };
    for (const [arg, key] of Object.entries(argMap)) feed(`arg_map.${arg}`, arg, key);
  }
  if (config.mask_input !== undefined) {
    const maskArg = adapter?.maskArg ?? 'response_mask';
    if (!(maskArg in base))
      throw fail(`config.mask_input is set but the case has no '${maskArg}' input to replace`);
    inputs = { ...inputs };
    feed('mask_input', maskArg, config.mask_input);
  }
  if (config.index_input !== undefined) {
    inputs = { ...inputs };
    feed('index_input', 'index', config.index_input);
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
    actual = adapter.run(resolveInputs(c, fixtures, adapter), c.config ?? {}, c);
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

/**
 * Every case of `file` through {@link runCase} with `adapters[case.fn]`, plus the count per status.
 * Every case is first checked with {@link checkCase}: a malformed case (nothing to check, unknown config
 * key, an input name that does not exist) throws a PARSE_ERROR naming `source`, the case index and name.
 */
export function runConformance(file: GoldenFile, adapters: AdapterTable, source?: string): ConformanceResult {
  file.cases.forEach((c, i) => {
    checkCase(c, adapters[c.fn], file.fixtures, i, source);
  });
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
