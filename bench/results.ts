/**
 * The contents of `bench/results.json` and the pure logic around it (no I/O, no clock): which groups
 * an argument of `bench/run.ts` selects, how a run's rows merge into the file, and the line the docs
 * print above the table (scripts/docsTables.ts, `bench-results`).
 *
 * A group is a bench file's name without `.bench.ts`; its rows carry that name in `group`. A full run
 * (no argument) rewrites the file. A partial run (`npx tsx bench/run.ts GROUP`) replaces only the
 * rows of the groups it ran and keeps the others' rows, each group dated in `groups`:
 *
 *     {
 *       "date": "2026-12-01T07:32:14.241Z",     // the last full run (null if none is on record)
 *       "node": "v20.20.2",                     // its Node version (null likewise)
 *       "groups": {                             // when and on what each group's rows were measured
 *         "advantage": { "date": "2026-12-01T07:32:14.241Z", "node": "v20.20.2" },
 *         "startup": { "date": "2026-12-03T10:00:00.000Z", "node": "v20.20.2" }
 *       },
 *       "rows": [ ... ]                         // BenchRow[], groups in full-run order
 *     }
 */

export interface BenchRow {
  group: string;
  name: string;
  /** Median wall time of one call, milliseconds. */
  ms: number;
  /** The floor this row is compared with (e.g. a typed-array copy of the same bytes), ms. */
  floor_ms?: number;
  ratio?: number;
  note?: string;
}

/** When, and on which Node version, a group's rows were measured. */
export interface GroupRun {
  date: string;
  node: string;
}

export interface BenchResults {
  /** End of the last full run (every group), ISO 8601; null when only partial runs are on record. */
  date: string | null;
  /** Node version of that full run (null likewise). */
  node: string | null;
  /** Every group with rows (or measured with none): when its rows were measured. */
  groups: Record<string, GroupRun>;
  rows: BenchRow[];
}

/** One finished run of `bench/run.ts`. */
export interface BenchRun {
  /** The groups whose bench files ran (all of them for a full run). */
  groups: readonly string[];
  rows: readonly BenchRow[];
  /** ISO 8601 time the run finished. */
  date: string;
  node: string;
  /** True when every bench file ran: the result replaces the file instead of merging into it. */
  full: boolean;
}

export const BENCH_SUFFIX = '.bench.ts';

/** The groups among a directory's file names, in the order a full run takes them (file name order). */
export function benchGroups(fileNames: readonly string[]): string[] {
  return fileNames
    .filter((f) => f.endsWith(BENCH_SUFFIX))
    .sort()
    .map((f) => f.slice(0, -BENCH_SUFFIX.length));
}

/** The groups `bench/run.ts ARG` runs: those whose file name contains ARG (all without one). */
export function selectGroups(available: readonly string[], only: string | undefined): string[] {
  return available.filter((g) => only === undefined || `${g}${BENCH_SUFFIX}`.includes(only));
}

/** What `bench/run.ts ARG` prints (before exiting with code 2) when ARG selects no bench file. */
export function unknownGroupMessage(only: string, available: readonly string[]): string {
  return `bench: no bench file name contains '${only}' (nothing run, bench/results.json unchanged); groups: ${available.join(', ')}\n`;
}

/** Orders groups as a full run writes them: by bench file name. */
function compareGroups(a: string, b: string): number {
  const fa = `${a}${BENCH_SUFFIX}`;
  const fb = `${b}${BENCH_SUFFIX}`;
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Reads a parsed `bench/results.json`. A file from before `groups` existed (one full run: `date`,
 * `node`, `rows`) gets every group of its rows dated with the run's `date` and `node`.
 */
export function parseResults(value: unknown, source = 'bench/results.json'): BenchResults {
  if (!isObject(value)) throw new Error(`${source} is not an object`);
  const { date, node, rows, groups } = value;
  if (!Array.isArray(rows)) throw new Error(`${source}: rows is missing`);
  for (const [i, r] of rows.entries()) {
    if (!isObject(r) || typeof r.group !== 'string' || typeof r.name !== 'string') {
      throw new Error(`${source}: rows[${i}] has no group and name`);
    }
  }
  const optionalString = (v: unknown, key: string): string | null => {
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') throw new Error(`${source}: ${key} is not a string`);
    return v;
  };
  const out: BenchResults = {
    date: optionalString(date, 'date'),
    node: optionalString(node, 'node'),
    groups: {},
    rows: rows as BenchRow[],
  };
  if (groups === undefined) {
    if (out.date === null || out.node === null)
      throw new Error(`${source}: neither groups nor date and node`);
    for (const r of out.rows) out.groups[r.group] = { date: out.date, node: out.node };
    return out;
  }
  if (!isObject(groups)) throw new Error(`${source}: groups is not an object`);
  for (const [g, run] of Object.entries(groups)) {
    if (!isObject(run) || typeof run.date !== 'string' || typeof run.node !== 'string') {
      throw new Error(`${source}: groups.${g} has no date and node`);
    }
    out.groups[g] = { date: run.date, node: run.node };
  }
  for (const r of out.rows) {
    if (!(r.group in out.groups)) throw new Error(`${source}: group '${r.group}' of a row is not in groups`);
  }
  return out;
}

/**
 * The results after `run`. A full run (or no earlier file) keeps nothing else: `date` and `node` are
 * the run's (null for a partial run with nothing earlier). A partial run drops the earlier rows of the
 * groups it ran, keeps every other group's rows and dates, and leaves `date` and `node` (the last full
 * run) as they were. Rows are ordered by group as a full run writes them, each group's rows in the
 * order they were produced.
 */
export function mergeResults(previous: BenchResults | undefined, run: BenchRun): BenchResults {
  const measured = new Set([...run.groups, ...run.rows.map((r) => r.group)]);
  const base: BenchResults =
    run.full || previous === undefined
      ? { date: run.full ? run.date : null, node: run.full ? run.node : null, groups: {}, rows: [] }
      : previous;
  const groups: Record<string, GroupRun> = {};
  for (const [g, when] of Object.entries(base.groups)) if (!measured.has(g)) groups[g] = when;
  for (const g of measured) groups[g] = { date: run.date, node: run.node };
  const kept = base.rows.filter((r) => !measured.has(r.group));
  const rows = [...kept, ...run.rows].sort((a, b) => compareGroups(a.group, b.group)); // stable
  const sortedGroups = Object.fromEntries(Object.entries(groups).sort(([a], [b]) => compareGroups(a, b)));
  return { date: base.date, node: base.node, groups: sortedGroups, rows };
}

const groupList = (gs: readonly string[]) => `${gs.length === 1 ? 'group' : 'groups'} ${gs.join(', ')}`;

/**
 * The line the docs print above the table: when the full run was, and which groups were measured
 * again since (or apart from it), when and, if it differs, on which Node version:
 *
 *     Run of 2026-12-01T07:32:14.241Z on Node v20.20.2.
 *     Run of 2026-12-01T07:32:14.241Z on Node v20.20.2; groups startup, tokenlab rerun on 2026-12-03T10:00:00.000Z.
 */
export function resultsNote(results: BenchResults): string {
  const later = new Map<string, string[]>(); // "date|node" -> groups, in group order
  const order = Object.keys(results.groups).sort(compareGroups);
  for (const g of order) {
    const when = results.groups[g] as GroupRun;
    if (when.date === results.date && when.node === results.node) continue;
    const key = `${when.date}|${when.node}`;
    later.set(key, [...(later.get(key) ?? []), g]);
  }
  const parts = [...later.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, gs]) => {
      const [date, node] = key.split('|') as [string, string];
      const onNode = results.node === null || node !== results.node ? ` on Node ${node}` : '';
      return `${groupList(gs)} ${results.date === null ? 'run' : 'rerun'} on ${date}${onNode}`;
    });
  const head =
    results.date === null ? 'No full run on record' : `Run of ${results.date} on Node ${results.node}`;
  return `${[head, ...parts].join('; ')}.`;
}
