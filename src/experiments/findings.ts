/**
 * A findings manifest (`docs/findings/<name>.json`): the runs behind one multi-seed table of the docs
 * and the comparisons the table reports, so that one command rebuilds it (`labs findings NAME`).
 * Each run is a `labs run --experiment E --seeds S [--set k=v]... [--sweep k=v1,...]`; a comparison
 * is `labs compare` between two runs' records, paired by seed (tabular vs neural, one experiment vs
 * another). The manifest says what to run; the records and statistics are the CLI's own.
 *
 *     {
 *       "format": "labs-findings/1",
 *       "title": "mask: tabular vs neural policy",
 *       "doc": "docs/experiments/neural.md",
 *       "seeds": "1..30",
 *       "runs": [
 *         { "name": "mask-table", "experiment": "mask", "set": { "policy": "table" } },
 *         { "name": "mask-neural", "experiment": "mask", "set": { "policy": "neural" } }
 *       ],
 *       "comparisons": [{ "a": "mask-table", "b": "mask-neural", "metrics": ["eval_success.correct"] }]
 *     }
 *
 * Format 2 (`labs-findings/2`, issue 31) replaces `seeds` with the seeds the page's findings were
 * found on and a disjoint confirmation set fixed before it is run, and `comparisons` with claims,
 * each a paired difference B − A and the direction the page states; `labs findings` runs both seed
 * sets and writes every claim's estimate on each and its status (src/experiments/findingsClaims.ts)
 * into `NAME.results.json` beside the manifest, from which `npm run docs` renders the page's table:
 *
 *     {
 *       "format": "labs-findings/2",
 *       "title": "aggregation: verl's four loss_agg_modes",
 *       "doc": "docs/experiments/aggregation.md",
 *       "discovery": "1..60",
 *       "confirmation": "1001..1060",
 *       "runs": [{ "name": "aggregation", "experiment": "aggregation" }],
 *       "claims": [
 *         { "id": "smm-verify", "run": "aggregation", "arm": "seq-mean-token-mean",
 *           "baseline": "token-mean", "metric": "eval_verify_rate", "expect": "down" },
 *         { "id": "x", "a": "mask-table:eval_success.correct", "b": "mask-neural:eval_success.correct" }
 *       ]
 *     }
 */
import { z } from 'zod';
import { LabError } from '../core/errors.js';

export const FINDINGS_FORMAT = 'labs-findings/1';
/** Format 2: discovery and confirmation seeds, and claims (read beside format 1). */
export const FINDINGS_FORMAT_V2 = 'labs-findings/2';

const RUN_NAME = /^[a-z0-9][a-z0-9_.-]*$/;

const Run = z
  .object({
    name: z.string().regex(RUN_NAME, 'lower-case letters, digits, _ . - (a directory name)'),
    experiment: z.string().min(1),
    set: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
    sweep: z.string().optional(),
  })
  .strict();

const Manifest = z
  .object({
    format: z.literal(FINDINGS_FORMAT),
    title: z.string().min(1),
    /** The docs page whose table these findings feed (informational). */
    doc: z.string().optional(),
    /** `A..B` or `1,2,3`, as `--seeds` takes them. */
    seeds: z.string().min(1),
    /**
     * Each run: `name` (its directory under the findings' output directory, its label in
     * comparisons), `experiment`, `set` (options as `--set key=value` gives them), `sweep`
     * (`key=v1,v2,...` as `--sweep` takes it).
     */
    runs: z.array(Run).min(1),
    /** Paired comparisons B − A between two runs (neither a sweep), by seed; `metrics` as `labs compare --metric`. */
    comparisons: z
      .array(z.object({ a: z.string(), b: z.string(), metrics: z.array(z.string()).default([]) }).strict())
      .default([]),
  })
  .strict();

/** `RUN:METRIC_KEY`: a metric of one run's per-seed records (e.g. `mask:eval_success.correct`). */
const RUN_METRIC = /^([a-z0-9][a-z0-9_.-]*):(\S+)$/;

const Claim = z
  .object({
    /** Stable id (a row of the results file and the docs table). */
    id: z.string().regex(RUN_NAME, 'lower-case letters, digits, _ . - (an id)'),
    /** What the row says, as the docs table prints it (default: built from the comparison). */
    label: z.string().min(1).optional(),
    /** Within one run: `metric.arm − metric.baseline`, as the record's `comparisons` pair them. */
    run: z.string().optional(),
    arm: z.string().optional(),
    baseline: z.string().optional(),
    metric: z.string().optional(),
    /** Between runs (or any two metric keys): B − A paired by seed, each `RUN:METRIC_KEY`. */
    a: z.string().regex(RUN_METRIC, 'RUN:METRIC_KEY').optional(),
    b: z.string().regex(RUN_METRIC, 'RUN:METRIC_KEY').optional(),
    /** The direction the page states before the confirmation run, if any; `none`: the page states no effect. */
    expect: z.enum(['up', 'down', 'none']).optional(),
    /** Also report the claim without collapsed seeds (src/experiments/collapsed.ts). */
    without_collapsed: z.boolean().default(false),
  })
  .strict();

const DescriptiveTable = z
  .object({
    id: z.string().regex(RUN_NAME, 'lower-case letters, digits, _ . - (an id)'),
    run: z.string(),
    /** The first column's header, and its values: `{row}` in each column's key is replaced by one. */
    row_label: z.string().min(1),
    rows: z.array(z.string()).min(1),
    /** `run` on a column reads that run instead of the table's (a tabular and a neural column side by side). */
    columns: z
      .array(
        z.object({ label: z.string().min(1), key: z.string().min(1), run: z.string().optional() }).strict(),
      )
      .min(1),
  })
  .strict();

const GOAL_ID = z.string().regex(RUN_NAME, 'lower-case letters, digits, _ . - (an id)');

/** A goal (src/experiments/findingsGoals.ts): a threshold on a run, checked on each seed set. */
const Goal = z.discriminatedUnion('kind', [
  z
    .object({
      id: GOAL_ID,
      label: z.string().min(1),
      /** Every key within [min, max] on at least `share` of the seeds. */
      kind: z.literal('seeds'),
      run: z.string(),
      keys: z.array(z.string().min(1)).min(1),
      min: z.number().finite().optional(),
      max: z.number().finite().optional(),
      /** The share of seeds that must pass, in (0, 1]; 1 = every seed. */
      share: z.number().gt(0).lte(1),
    })
    .strict(),
  z
    .object({
      id: GOAL_ID,
      label: z.string().min(1),
      /** The between-seed sd of `key` in `run` ÷ the same in `baseline`, at most `max`. */
      kind: z.literal('sd_ratio'),
      run: z.string(),
      baseline: z.string(),
      key: z.string().min(1),
      max: z.number().finite().nonnegative(),
    })
    .strict(),
]);

/**
 * The run a descriptive table's cell reads: the column's `run` if it names one, else the table's, with
 * `{row}` replaced by the row's value (a column run with `{row}` makes the rows runs: a knobs table).
 */
export function cellRun(table: { run: string }, column: { run?: string | undefined }, row: string): string {
  return (column.run ?? table.run).replaceAll('{row}', row);
}

const ManifestV2 = z
  .object({
    format: z.literal(FINDINGS_FORMAT_V2),
    title: z.string().min(1),
    doc: z.string().optional(),
    /** The seeds the page's findings were chosen on (`A..B` or `1,2,3`). */
    discovery: z.string().min(1),
    /** A disjoint seed set fixed before it is run and never used to choose anything. */
    confirmation: z.string().min(1),
    runs: z.array(Run).min(1),
    claims: z.array(Claim).min(1),
    /** Descriptive tables of the page (means per seed set, no test), one row per `rows` value. */
    tables: z.array(DescriptiveTable).default([]),
    /** Goals the page sets (thresholds, not claims), checked on each seed set. */
    goals: z.array(Goal).default([]),
  })
  .strict();

export type FindingsManifest = z.output<typeof Manifest>;
export type FindingsRun = FindingsManifest['runs'][number];
export type FindingsManifestV2 = z.output<typeof ManifestV2>;
/** A goal as the manifest declares it (checked: src/experiments/findingsGoals.ts evaluates it). */
export type FindingsGoal = z.output<typeof Goal>;

/** One side of a claim: a metric key of one run's per-seed records. */
export interface ClaimSide {
  run: string;
  metric: string;
}

/** A claim with both forms resolved to two sides: the difference B − A, paired by seed. */
export interface FindingsClaim {
  id: string;
  label: string;
  a: ClaimSide;
  b: ClaimSide;
  expect: 'up' | 'down' | 'none' | null;
  withoutCollapsed: boolean;
}

/** A format-2 manifest, checked, with its claims resolved ({@link parseFindingsV2}). */
export interface FindingsV2 {
  format: typeof FINDINGS_FORMAT_V2;
  title: string;
  doc?: string;
  discovery: string;
  confirmation: string;
  runs: FindingsRun[];
  claims: FindingsClaim[];
  tables: FindingsManifestV2['tables'];
  goals: FindingsGoal[];
}

function schemaError(error: z.ZodError, file: string): LabError {
  const issue = error.issues[0];
  const field = (
    issue?.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') ?? ''
  ).replace(/^\./, '');
  return new LabError('BAD_CLI', `${file}: ${field || '(manifest)'}: ${issue?.message}`, {
    details: { file, field },
  });
}

const badField = (file: string, field: string, why: string) =>
  new LabError('BAD_CLI', `${file}: ${field}: ${why}`, { details: { file, field } });

/** Run names unique; every comparison names two runs that are not sweeps. */
function checkRuns(
  runs: readonly FindingsRun[],
  comparisons: FindingsManifest['comparisons'],
  file: string,
): Map<string, FindingsRun> {
  const byName = new Map<string, FindingsRun>();
  for (const [i, run] of runs.entries()) {
    if (byName.has(run.name)) throw badField(file, `runs[${i}].name`, `'${run.name}' names two runs`);
    byName.set(run.name, run);
  }
  for (const [i, c] of comparisons.entries()) {
    for (const side of ['a', 'b'] as const) {
      const run = byName.get(c[side]);
      if (!run) throw badField(file, `comparisons[${i}].${side}`, `no run is named '${c[side]}'`);
      if (run.sweep)
        throw badField(
          file,
          `comparisons[${i}].${side}`,
          `'${c[side]}' is a sweep; compare runs without --sweep`,
        );
    }
  }
  return byName;
}

/**
 * The manifest in `data` (read from `file`), checked: the schema of its `format` (1 or 2; unknown
 * fields refused), run names unique, every comparison naming two runs that are not sweeps; for
 * format 2 also {@link parseFindingsV2}'s checks. Errors: BAD_CLI naming the file and the field
 * (`runs[2].name`).
 */
export function parseFindings(data: unknown, file: string): FindingsManifest | FindingsV2 {
  const format = (data as { format?: unknown } | null)?.format;
  if (format === FINDINGS_FORMAT_V2) return parseFindingsV2(data, file);
  const parsed = Manifest.safeParse(data);
  if (!parsed.success) throw schemaError(parsed.error, file);
  checkRuns(parsed.data.runs, parsed.data.comparisons, file);
  return parsed.data;
}

/** True for a format-2 manifest (discovery and confirmation seeds, claims). */
export function isFindingsV2(m: FindingsManifest | FindingsV2): m is FindingsV2 {
  return m.format === FINDINGS_FORMAT_V2;
}

/**
 * A format-2 manifest: as format 1, plus: each claim either within one run (`run`, `arm`,
 * `baseline`, `metric`: the difference `metric.arm − metric.baseline` as the record's
 * `comparisons` have it) or between two metric keys (`a`, `b` as `RUN:METRIC_KEY`: B − A), naming
 * runs that exist and are not sweeps; claim ids unique. The seed lists are parsed by the CLI
 * (`--seeds` syntax) and checked disjoint by {@link checkPhaseSeeds}.
 */
export function parseFindingsV2(data: unknown, file: string): FindingsV2 {
  const parsed = ManifestV2.safeParse(data);
  if (!parsed.success) throw schemaError(parsed.error, file);
  const m = parsed.data;
  const byName = checkRuns(m.runs, [], file);
  const ids = new Set<string>();
  const claims = m.claims.map((c, i): FindingsClaim => {
    const at = `claims[${i}]`;
    if (ids.has(c.id)) throw badField(file, `${at}.id`, `'${c.id}' names two claims`);
    ids.add(c.id);
    const within =
      c.run !== undefined || c.arm !== undefined || c.baseline !== undefined || c.metric !== undefined;
    const between = c.a !== undefined || c.b !== undefined;
    if (within === between) {
      throw badField(
        file,
        at,
        'give either run, arm, baseline and metric (within one run) or a and b as RUN:METRIC_KEY (between runs), not both or neither',
      );
    }
    let a: ClaimSide;
    let b: ClaimSide;
    if (within) {
      for (const k of ['run', 'arm', 'baseline', 'metric'] as const) {
        if (c[k] === undefined)
          throw badField(
            file,
            `${at}.${k}`,
            'missing (a claim within one run needs run, arm, baseline and metric)',
          );
      }
      a = { run: c.run as string, metric: `${c.metric}.${c.baseline}` };
      b = { run: c.run as string, metric: `${c.metric}.${c.arm}` };
    } else {
      for (const k of ['a', 'b'] as const) {
        if (c[k] === undefined)
          throw badField(file, `${at}.${k}`, 'missing (a claim between runs needs a and b)');
      }
      const side = (v: string): ClaimSide => {
        const [, run, metric] = RUN_METRIC.exec(v) as RegExpExecArray;
        return { run: run as string, metric: metric as string };
      };
      a = side(c.a as string);
      b = side(c.b as string);
    }
    for (const [k, s] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const field = within ? `${at}.run` : `${at}.${k}`;
      const run = byName.get(s.run);
      if (!run) throw badField(file, field, `no run is named '${s.run}'`);
      if (run.sweep) throw badField(file, field, `'${s.run}' is a sweep; a claim pairs runs without --sweep`);
    }
    const label =
      c.label ??
      (within ? `${c.arm} − ${c.baseline}: ${c.metric}` : `${b.run}:${b.metric} − ${a.run}:${a.metric}`);
    return { id: c.id, label, a, b, expect: c.expect ?? null, withoutCollapsed: c.without_collapsed };
  });
  const tableIds = new Set<string>();
  for (const [i, t] of m.tables.entries()) {
    if (tableIds.has(t.id)) throw badField(file, `tables[${i}].id`, `'${t.id}' names two tables`);
    tableIds.add(t.id);
    const run = byName.get(t.run);
    if (!run) throw badField(file, `tables[${i}].run`, `no run is named '${t.run}'`);
    if (run.sweep) throw badField(file, `tables[${i}].run`, `'${t.run}' is a sweep`);
    for (const [j, c] of t.columns.entries()) {
      if (c.run === undefined) continue;
      for (const name of new Set(t.rows.map((row) => cellRun(t, c, row)))) {
        const other = byName.get(name);
        if (!other) throw badField(file, `tables[${i}].columns[${j}].run`, `no run is named '${name}'`);
        if (other.sweep) throw badField(file, `tables[${i}].columns[${j}].run`, `'${name}' is a sweep`);
      }
    }
  }
  const goalIds = new Set<string>();
  for (const [i, g] of m.goals.entries()) {
    if (goalIds.has(g.id)) throw badField(file, `goals[${i}].id`, `'${g.id}' names two goals`);
    goalIds.add(g.id);
    for (const field of g.kind === 'seeds' ? (['run'] as const) : (['run', 'baseline'] as const)) {
      const name = (g as Record<typeof field, string>)[field];
      const run = byName.get(name);
      if (!run) throw badField(file, `goals[${i}].${field}`, `no run is named '${name}'`);
      if (run.sweep) throw badField(file, `goals[${i}].${field}`, `'${name}' is a sweep`);
    }
    if (g.kind === 'seeds') {
      if (g.min === undefined && g.max === undefined)
        throw badField(file, `goals[${i}]`, 'a seeds goal needs min, max or both');
      if (g.min !== undefined && g.max !== undefined && g.min > g.max)
        throw badField(file, `goals[${i}].min`, `min ${g.min} is above max ${g.max}`);
    }
  }
  return {
    format: FINDINGS_FORMAT_V2,
    title: m.title,
    ...(m.doc ? { doc: m.doc } : {}),
    discovery: m.discovery,
    confirmation: m.confirmation,
    runs: m.runs,
    claims,
    tables: m.tables,
    goals: m.goals,
  };
}

/**
 * Discovery and confirmation seeds must be disjoint: a confirmation seed that was also a discovery
 * seed confirms nothing. Error: BAD_CLI naming the file, the field `confirmation` and the seeds.
 */
export function checkPhaseSeeds(
  discovery: readonly number[],
  confirmation: readonly number[],
  file: string,
): void {
  const shared = confirmation.filter((s) => discovery.includes(s));
  if (shared.length) {
    throw badField(
      file,
      'confirmation',
      `seeds ${shared.slice(0, 8).join(',')}${shared.length > 8 ? ',...' : ''} are also discovery seeds; the confirmation set must be disjoint from them`,
    );
  }
}

/** A run's `--set` pairs: the manifest's, then `extra` (the command line's, which win). */
export function runSets(run: FindingsRun, extra: readonly string[]): string[] {
  return [...Object.entries(run.set).map(([k, v]) => `${k}=${String(v)}`), ...extra];
}
