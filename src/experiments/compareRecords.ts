/**
 * `labs compare A.json B.json`: paired differences B − A between two multi-seed records run on the
 * same seeds (e.g. one option changed), with the statistics of a record's own comparisons: BCa
 * bootstrap CI, sign-flip permutation p, Holm across the metrics compared, mde80. Pairs are matched
 * by seed, so the two records' seed order does not matter; different seed sets are refused, since
 * unpaired runs would silently lose the pairing that makes the comparison precise.
 */
import { LabError } from '../core/errors.js';
import { compareSeries, isDifferenceKey, metricKey } from './seedStatistics.js';
import type { Comparison, ComparisonPlan, JsonValue, MultiSeedRecord } from './types.js';

export interface CompareResult {
  /** How to read the rows: diff = b − a for each metric key, paired by seed. */
  a: { label: string; experiment: string; source: string };
  b: { label: string; experiment: string; source: string };
  seeds: number[];
  /** One per metric: `arm` = b's label, `baseline` = a's label, `metric` = the metric key. */
  comparisons: Comparison[];
  /** Config keys whose values differ between the records, with both values. */
  config_diff: Record<string, [JsonValue | undefined, JsonValue | undefined]>;
  /**
   * Metrics with one value in every seed of both records (config-like counts such as `eval_tasks`):
   * not compared (every paired difference is 0: no test, and no extra term in Holm's family), listed.
   */
  constants: { metric: string; value: number }[];
  /**
   * What was left out, by name: default metrics in only one record or not finite in every seed of one,
   * and for each compared metric the seeds dropped because a value is not a finite number (n falls).
   */
  notes: string[];
}

const finiteNumber = (v: JsonValue | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

/** A metric value as a record on disk holds it: a number, or a non-finite number spelled as text. */
const isNumeric = (v: JsonValue | undefined) =>
  typeof v === 'number' || v === 'NaN' || v === 'Infinity' || v === '-Infinity';

function seedList(seeds: readonly number[]): string {
  const shown = seeds.length > 8 ? `${seeds.slice(0, 8).join(',')},...` : seeds.join(',');
  return `seed${seeds.length === 1 ? '' : 's'} ${shown}`;
}

/** Keys of `r`'s runs with a numeric value in some seed, per-seed differences excluded. */
function numericKeys(r: MultiSeedRecord): Set<string> {
  const keys = new Set<string>();
  for (const run of r.runs) {
    for (const [k, v] of Object.entries(run.metrics)) if (isNumeric(v) && !isDifferenceKey(k)) keys.add(k);
  }
  return keys;
}

/**
 * Why the default comparison left out metrics that one record or both have: only in one record, or
 * not summarised in one because some seed's value is not a finite number. Restricted to `scope`
 * (the plan's headline keys) when the defaults came from the plan.
 */
function leftOutByDefault(
  a: MultiSeedRecord,
  b: MultiSeedRecord,
  compared: readonly string[],
  scope: readonly string[] | null,
): string[] {
  const na = numericKeys(a);
  const nb = numericKeys(b);
  const candidates = scope ? scope.filter((k) => na.has(k) || nb.has(k)) : [...new Set([...na, ...nb])];
  const parts: string[] = [];
  let nonFinite = false;
  for (const k of candidates) {
    if (compared.includes(k)) continue;
    const why = (
      [
        ['A', a, na],
        ['B', b, nb],
      ] as const
    ).flatMap(([name, r, keys]) => {
      if (!keys.has(k)) return [`not in ${name}`];
      if (k in r.summary) return [];
      nonFinite = true;
      const bad = r.runs.filter((run) => !finiteNumber(run.metrics[k])).map((run) => run.seed);
      return [`not a finite number in ${name} ${seedList(bad)}`];
    });
    if (why.length) parts.push(`${k} (${why.join(', ')})`);
  }
  if (parts.length === 0) return [];
  return [
    `not compared: ${parts.join('; ')}${nonFinite ? '; --metric KEY compares such a metric on the seeds where both are finite' : ''}`,
  ];
}

/** `values` when every one is the same finite number c, else null. */
function constantOf(values: readonly (JsonValue | undefined)[]): number | null {
  const c = values[0];
  if (typeof c !== 'number' || !Number.isFinite(c)) return null;
  return values.every((v) => v === c) ? c : null;
}

/**
 * The metric keys compared by default: with a declared plan, every arm's headline metric keys
 * present in both records; else every metric summarised in both except per-seed differences (`*_minus_*`).
 */
export function defaultCompareMetrics(
  a: MultiSeedRecord,
  b: MultiSeedRecord,
  plan: ComparisonPlan | null,
): string[] {
  const inBoth = (k: string) => k in a.summary && k in b.summary;
  if (plan) {
    const keys = plan.metrics.flatMap((m) => plan.arms.map((arm) => metricKey(arm, m)));
    const present = keys.filter(inBoth);
    if (present.length) return present;
  }
  return Object.keys(a.summary).filter((k) => inBoth(k) && !isDifferenceKey(k));
}

type Side = { record: MultiSeedRecord; source: string; label: string };

/**
 * Every (key of A, key of B) pair names a metric with a number in some seed of its record; else
 * BAD_CLI naming the flag (`--metric-a`/`--metric-b` for explicit pairs, `--metric`) and listing
 * the metrics that exist.
 */
function checkMetricKeys(
  a: Side,
  b: Side,
  keys: readonly (readonly [string, string])[],
  explicit: boolean,
): void {
  for (const [ka, kb] of keys) {
    if (explicit) {
      for (const [x, key, flag] of [
        [a, ka, '--metric-a'],
        [b, kb, '--metric-b'],
      ] as const) {
        if (x.record.runs.some((r) => typeof r.metrics[key] === 'number')) continue;
        const known = Object.keys(x.record.summary).filter((m) => !isDifferenceKey(m));
        throw new LabError(
          'BAD_CLI',
          `${flag} ${key}: not a numeric metric of ${x.source} (${x.record.experiment}); its metrics: ${known.slice(0, 30).join(', ')}${known.length > 30 ? ', ...' : ''}`,
          { details: { field: flag, key } },
        );
      }
      continue;
    }
    const missing = [a, b].filter((x) => !x.record.runs.some((r) => typeof r.metrics[ka] === 'number'));
    if (missing.length) {
      const known = Object.keys(a.record.summary)
        .filter((x) => x in b.record.summary)
        .slice(0, 30);
      throw new LabError(
        'BAD_CLI',
        `--metric ${ka}: not a numeric metric of ${missing.map((x) => x.source).join(' and ')}; metrics in both: ${known.join(', ')}${known.length === 30 ? ', ...' : ''}`,
        { details: { field: '--metric', key: ka } },
      );
    }
  }
}

/**
 * Compares `b` against `a` on `metrics` (default {@link defaultCompareMetrics}), or with `pairs`
 * on explicit (key of A, key of B) pairs, paired by seed: `b[keyB] − a[keyA]`, which compares two
 * experiments' records (a mask arm against an aggregation arm; `labs compare --metric-a K
 * --metric-b K`), the row's metric named `keyB − keyA` when the keys differ. Errors (BAD_CLI,
 * usage errors of `labs compare`): a record without several seeds' runs, seed sets that differ
 * (names the seeds only in one), no metric in common (e.g. records of two experiments: the message
 * names --metric-a/--metric-b), a requested metric missing from either record (lists what exists).
 */
export function compareRecords(
  a: { record: MultiSeedRecord; source: string; label: string },
  b: { record: MultiSeedRecord; source: string; label: string },
  metrics: readonly string[] = [],
  plan: ComparisonPlan | null = null,
  pairs: readonly (readonly [keyA: string, keyB: string])[] = [],
): CompareResult {
  const seedsOf = (r: MultiSeedRecord) => r.runs.map((run) => run.seed);
  const sa = seedsOf(a.record);
  const sb = seedsOf(b.record);
  const onlyA = sa.filter((s) => !sb.includes(s));
  const onlyB = sb.filter((s) => !sa.includes(s));
  if (onlyA.length || onlyB.length) {
    const list = (xs: number[]) => (xs.length > 8 ? `${xs.slice(0, 8).join(',')},...` : xs.join(','));
    throw new LabError(
      'BAD_CLI',
      `compare: the records were run on different seeds (only in ${a.source}: ${list(onlyA) || 'none'}; only in ${b.source}: ${list(onlyB) || 'none'}); paired differences need the same seeds: rerun one with --seeds matching the other`,
      { details: { field: 'seeds' } },
    );
  }
  // A repeated --metric is one comparison: a duplicate row would count twice in Holm's family.
  const explicit = metrics.length > 0 || pairs.length > 0;
  const keys = pairs.length
    ? [...new Set(pairs.map(([ka, kb]) => `${ka}\u0000${kb}`))]
    : metrics.length
      ? [...new Set(metrics)]
      : defaultCompareMetrics(a.record, b.record, plan);
  const keyA = (k: string) => (pairs.length ? (k.split('\u0000')[0] as string) : k);
  const keyB = (k: string) => (pairs.length ? (k.split('\u0000')[1] as string) : k);
  const rowName = (k: string) => (keyA(k) === keyB(k) ? keyA(k) : `${keyB(k)} − ${keyA(k)}`);
  const planKeys = plan ? plan.metrics.flatMap((m) => plan.arms.map((arm) => metricKey(arm, m))) : null;
  const notes = explicit
    ? []
    : leftOutByDefault(
        a.record,
        b.record,
        keys,
        planKeys && keys.every((k) => planKeys.includes(k)) ? planKeys : null,
      );
  if (keys.length === 0) {
    const what = (x: typeof a) => `${x.source} (${x.record.experiment})`;
    throw new LabError(
      'BAD_CLI',
      `compare: no metric in common: ${what(a)} and ${what(b)} share no summarised metric${
        a.record.experiment === b.record.experiment
          ? ''
          : '; paired differences compare two records of one experiment (e.g. one option changed), or name a metric of each record: --metric-a KEY --metric-b KEY'
      }`,
      { details: { field: 'metrics' } },
    );
  }
  checkMetricKeys(
    a,
    b,
    keys.map((k) => [keyA(k), keyB(k)] as const),
    pairs.length > 0,
  );
  const byseed = (r: MultiSeedRecord, k: string) =>
    sa.map((s) => r.runs.find((run) => run.seed === s)?.metrics[k] ?? null);
  const valuesA = (k: string) => byseed(a.record, keyA(k));
  const valuesB = (k: string) => byseed(b.record, keyB(k));
  const constants: CompareResult['constants'] = [];
  const compared = keys.filter((k) => {
    const c = constantOf([...valuesA(k), ...valuesB(k)]);
    if (c !== null) constants.push({ metric: rowName(k), value: c });
    return c === null;
  });
  // Seeds whose value is not a finite number in either record drop out of a comparison: say which.
  for (const k of compared) {
    const badA = sa.filter((_, i) => !finiteNumber(valuesA(k)[i]));
    const badB = sa.filter((_, i) => !finiteNumber(valuesB(k)[i]));
    const bad = sa.filter((s) => badA.includes(s) || badB.includes(s));
    if (bad.length === 0) continue;
    const where = [
      badA.length ? `in A: ${badA.join(',')}` : '',
      badB.length ? `in B: ${badB.join(',')}` : '',
    ].filter(Boolean);
    notes.push(
      bad.length === sa.length
        ? `${rowName(k)}: not compared, no seed has a finite value in both (not a finite number ${where.join('; ')})`
        : `${rowName(k)}: ${seedList(bad)} left out (not a finite number ${where.join('; ')}), n = ${sa.length - bad.length} of ${sa.length}`,
    );
  }
  const comparisons = compareSeries(
    compared.map((k) => ({
      arm: b.label,
      baseline: a.label,
      metric: rowName(k),
      armValues: valuesB(k),
      baselineValues: valuesA(k),
    })),
  );
  const config_diff: CompareResult['config_diff'] = {};
  for (const k of new Set([...Object.keys(a.record.config), ...Object.keys(b.record.config)])) {
    const va = a.record.config[k];
    const vb = b.record.config[k];
    if (JSON.stringify(va) !== JSON.stringify(vb)) config_diff[k] = [va, vb];
  }
  return {
    a: { label: a.label, experiment: a.record.experiment, source: a.source },
    b: { label: b.label, experiment: b.record.experiment, source: b.source },
    seeds: sa,
    comparisons,
    config_diff,
    constants,
    notes,
  };
}
