/**
 * The result tables in README.md and docs/ are generated from run records checked into the repo
 * (docs/records/*.json) and from bench/results.json, never typed by hand. A generated region is
 *
 *     <!-- generated:table NAME from PATH [columns=a,b,c] -->
 *     ...markdown written by `npm run docs`...
 *     <!-- /generated -->
 *
 * NAME is either `tables.<table>` (rows of the record's table, the listed columns or all of them),
 * `findings-claims` (a findings results file's claims; `columns=` selects claims by id prefix),
 * `findings-table` (one descriptive table of a results file) or one of the named renderers below
 * (for tables assembled from several fields). The command synopses of docs/cli.md are generated the
 * same way from the CLI's option tables (src/cli/commandTables.ts), in a region opened by
 * `<!-- generated:synopsis NAME -->` (NAME: a command, or `commands` for all of them). PATH is relative
 * to the repository root. `renderDocument` rewrites every region of one markdown text; the docs
 * test re-renders every file and fails when a region differs from what is checked in (stale docs).
 * Pure functions of (markdown, file reader): no clock, no randomness, so the output is stable.
 */

import { parseResults, resultsNote } from '../bench/results.js';
import { COMMANDS, type CommandSpec, commandSynopsis } from '../src/cli/commandTables.js';
import { RATIO_BY_LAG_COLUMNS } from '../src/experiments/rollout/rolloutRecord.js';
import {
  type FindingsResults,
  renderFindingsGoals,
  renderFindingsResults,
  renderFindingsTable,
} from '../src/report/findingsResults.js';

/** One generated region as found in a markdown file. */
export interface Region {
  name: string;
  source: string;
  columns: string[] | undefined;
  /** line (1-based) of the opening marker, for error messages */
  line: number;
}

export type ReadJson = (path: string) => unknown;

const OPEN = /^<!-- generated:table (\S+) from (\S+)(?: columns=(\S+))? -->$/;
/** `<!-- generated:synopsis NAME -->`: the synopsis of `labs NAME` (or of every command: `commands`). */
const SYNOPSIS_OPEN = /^<!-- generated:synopsis (\S+) -->$/;
/** Where the synopses come from, named in their footer. */
const SYNOPSIS_SOURCE = 'src/cli/commandTables.ts';
const CLOSE = '<!-- /generated -->';

/** Formats a number the way the docs print measurements: up to 4 significant digits, no trailing zeros. */
export function formatNumber(x: unknown): string {
  if (x === null || x === undefined) return '-';
  if (typeof x === 'string') return x;
  if (typeof x === 'boolean') return String(x);
  if (Array.isArray(x)) return x.map(formatNumber).join(', ');
  if (typeof x !== 'number') return JSON.stringify(x);
  if (!Number.isFinite(x)) return String(x);
  if (Number.isInteger(x)) return String(x);
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) return x.toExponential(2);
  return String(Number(x.toPrecision(4)));
}

function escapeCell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** A markdown table from a header row and rows of cells. */
export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.map(escapeCell).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n');
}

type Row = Record<string, unknown>;

function asRecord(value: unknown, what: string): Row {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`${what} is not an object`);
  }
  return value as Row;
}

function rowsOf(record: Row, table: string, source: string): Row[] {
  const tables = asRecord(record.tables, `${source}: tables`);
  const rows = tables[table];
  if (!Array.isArray(rows)) throw new Error(`${source}: tables.${table} is missing`);
  return rows as Row[];
}

function genericTable(rows: Row[], columns: string[] | undefined, source: string, table: string): string {
  const cols = columns ?? Object.keys(rows[0] ?? {});
  for (const c of cols) {
    if (!rows.some((r) => c in r)) throw new Error(`${source}: tables.${table} has no column '${c}'`);
  }
  return markdownTable(
    cols,
    rows.map((r) => cols.map((c) => formatNumber(r[c]))),
  );
}

/** Update numbers at which the agent's text summary (and the trimmed records) keep curve points. */
export const CURVE_CHECKPOINTS = [1, 2, 5, 10, 20, 50, 100, 150];

function curvePoint(record: Row, key: string, update: number, source: string): unknown {
  const curves = asRecord(record.curves, `${source}: curves`);
  const updates = curves.update;
  const series = curves[key];
  if (!Array.isArray(updates) || !Array.isArray(series))
    throw new Error(`${source}: curves.${key} is missing`);
  const i = updates.indexOf(update);
  if (i < 0) throw new Error(`${source}: curves.update has no ${update}`);
  return series[i];
}

const named: Record<string, (record: Row, source: string) => string> = {
  /** agent: group kinds and training success at the checkpoint updates (from the curves). */
  'agent-updates': (r, s) =>
    markdownTable(
      ['update', 'all-wrong', 'mixed', 'all-right', 'zero-advantage trajectories', 'train success'],
      CURVE_CHECKPOINTS.map((u) =>
        [
          u,
          ...[
            'group_kind.all_wrong',
            'group_kind.mixed',
            'group_kind.all_right',
            'zero_advantage.fraction',
            'success.train',
          ].map((k) => curvePoint(r, k, u, s)),
        ].map(formatNumber),
      ),
    ),
  /** rollout: one line per (mode, correction) with the columns README used to print by hand. */
  'rollout-modes': (r, s) =>
    markdownTable(
      [
        'row',
        'traj/s',
        'trainer idle',
        'worker idle',
        'wasted',
        'lag mean / max',
        'ratio p99 / max',
        'ESS (min)',
        'corr(lag, |log r|)',
        'consumed / generated tokens',
        'steps to 0.9',
        'sim s to 0.9',
        'eval success',
      ],
      rowsOf(r, 'modes', s).map((m) => {
        const f = formatNumber;
        const n = (x: unknown) => (typeof x === 'number' ? String(Math.round(x)) : f(x));
        return [
          `${m.mode}${m.mode === 'sync' ? '' : `:${m.correction}`}`,
          f(m.throughput),
          f(m.trainer_idle),
          f(m.worker_idle),
          f(m.worker_wasted),
          `${f(m.lag_mean)} / ${f(m.lag_max)}`,
          `${f(m.ratio_p99)} / ${f(m.ratio_max)}`,
          `${f(m.ess_fraction)} (${f(m.ess_fraction_min)})`,
          f(m.lag_logratio_corr),
          `${n(m.consumed_mean_length)} / ${n(m.generated_mean_length)}`,
          f(m.updates_to_0_9),
          n(m.seconds_to_0_9),
          f(m.eval_success),
        ];
      }),
    ),
  /** rollout: ratio statistics of consumed actions by version lag, for one run (the stalest row). */
  'rollout-ratio-by-lag': (r, s) =>
    genericTable(
      rowsOf(r, 'ratio_by_lag', s).filter((x) => x.run === 'unbounded_none'),
      [...RATIO_BY_LAG_COLUMNS],
      s,
      'ratio_by_lag',
    ),
  /**
   * bench/results.json: one line per benchmark, time, floor and their ratio (each pair measured in one
   * run), after a line saying when the full run was and which groups were rerun alone since.
   */
  'bench-results': (r, s) => {
    const results = parseResults(r, s);
    return `${resultsNote(results)}\n\n${markdownTable(
      ['group', 'benchmark', 'ms', 'floor ms', 'ratio', 'note'],
      (results.rows as unknown as Row[]).map((b) => [
        formatNumber(b.group),
        formatNumber(b.name),
        typeof b.ms === 'number' ? b.ms.toFixed(1) : '-',
        typeof b.floor_ms === 'number' ? b.floor_ms.toFixed(1) : '-',
        typeof b.ratio === 'number' ? `${b.ratio.toFixed(2)}×` : '-',
        formatNumber(b.note ?? ''),
      ]),
    )}`;
  },
};

/**
 * The claims table of a findings results file (`docs/findings/NAME.results.json`, written by
 * `labs findings NAME`); `columns=a,b` keeps the claims whose id starts with `a` or `b`.
 */
export const FINDINGS_TABLE = 'findings-claims';
/** A descriptive table of a findings results file (`columns=ID`): means on both seed sets. */
export const FINDINGS_DESCRIPTIVE = 'findings-table';

/** The goals of a findings results file: measured value and met / not met per seed set. */
export const FINDINGS_GOALS = 'findings-goals';

/** Names of the renderers other than `tables.<name>`. */
export const RENDERER_NAMES = [...Object.keys(named), FINDINGS_TABLE, FINDINGS_DESCRIPTIVE, FINDINGS_GOALS];

/** `# text` wrapped at 100 columns. */
function commentLines(text: string): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && last.length + 1 + word.length <= 100)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(`# ${word}`);
  }
  return lines;
}

/**
 * The synopsis region of `name` (a command, or `commands`: every command after `labs --help`, each
 * under a comment line with its description) as an indented code block.
 */
export function renderSynopsis(name: string, commands: readonly CommandSpec[] = COMMANDS): string {
  let lines: string[];
  if (name === 'commands') {
    lines = [
      'labs --help | --version | <command> --help',
      ...commands.flatMap((c) => [...commentLines(c.description), ...commandSynopsis(c)]),
    ];
  } else {
    const spec = commands.find((c) => c.name === name);
    if (!spec) {
      const known = commands.map((c) => c.name).join(', ');
      throw new Error(`unknown command '${name}' in a synopsis marker (known: commands, ${known})`);
    }
    lines = commandSynopsis(spec);
  }
  const block = lines.map((l) => `    ${l}`).join('\n');
  return `\n${block}\n\n<sub>Generated by \`npm run docs\` from the option tables (\`${SYNOPSIS_SOURCE}\`).</sub>`;
}

/** The markdown of one region (without its markers). */
export function renderRegion(region: Region, readJson: ReadJson): string {
  if (region.name.startsWith('synopsis:')) return renderSynopsis(region.name.slice('synopsis:'.length));
  const record = asRecord(readJson(region.source), region.source);
  let body: string;
  if (region.name === FINDINGS_DESCRIPTIVE) {
    const id = region.columns?.[0];
    if (!id || region.columns?.length !== 1)
      throw new Error(`${region.source}: ${FINDINGS_DESCRIPTIVE} needs columns=ID (one table id)`);
    body = renderFindingsTable(record as unknown as FindingsResults, id);
  } else if (region.name === FINDINGS_GOALS) {
    body = renderFindingsGoals(record as unknown as FindingsResults);
  } else if (region.name === FINDINGS_TABLE) {
    // columns= selects claims by id prefix: one page table per group of a manifest's claims
    body = renderFindingsResults(record as unknown as FindingsResults, region.columns);
  } else if (region.name.startsWith('tables.')) {
    const table = region.name.slice('tables.'.length);
    body = genericTable(rowsOf(record, table, region.source), region.columns, region.source, table);
  } else {
    const render = named[region.name];
    if (!render) {
      throw new Error(
        `unknown generated table '${region.name}' (known: tables.<name>, ${RENDERER_NAMES.join(', ')})`,
      );
    }
    body = render(record, region.source);
  }
  const command = typeof record._command === 'string' ? ` (\`${record._command}\`)` : '';
  return `${body}\n\n<sub>Generated by \`npm run docs\` from \`${region.source}\`${command}.</sub>`;
}

/** The region an opening marker line opens (a synopsis is named `synopsis:<command>`), else null. */
function regionAt(text: string): Omit<Region, 'line'> | null {
  const m = OPEN.exec(text);
  if (m) return { name: m[1] as string, source: m[2] as string, columns: m[3]?.split(',') };
  const s = SYNOPSIS_OPEN.exec(text);
  if (s) return { name: `synopsis:${s[1]}`, source: SYNOPSIS_SOURCE, columns: undefined };
  return null;
}

/** Every region of a markdown text, in order; an unclosed or nested marker is an error naming the line. */
export function findRegions(markdown: string, file: string): Region[] {
  const regions: Region[] = [];
  let open: Region | undefined;
  markdown.split('\n').forEach((text, i) => {
    const m = regionAt(text);
    if (m) {
      if (open)
        throw new Error(`${file} line ${i + 1}: generated region opened inside the one of line ${open.line}`);
      open = { ...m, line: i + 1 };
      regions.push(open);
    } else if (text === CLOSE) {
      if (!open) throw new Error(`${file} line ${i + 1}: ${CLOSE} without an opening marker`);
      open = undefined;
    } else if (text.startsWith('<!-- generated')) {
      throw new Error(`${file} line ${i + 1}: malformed generated marker: ${text}`);
    }
  });
  if (open) throw new Error(`${file} line ${open.line}: generated region is never closed`);
  return regions;
}

/** The markdown with every generated region re-rendered from its source. */
export function renderDocument(markdown: string, file: string, readJson: ReadJson): string {
  findRegions(markdown, file); // validates the markers
  const lines = markdown.split('\n');
  const out: string[] = [];
  let skipping = false;
  for (const text of lines) {
    const m = regionAt(text);
    if (m) {
      out.push(text, renderRegion({ ...m, line: 0 }, readJson), CLOSE);
      skipping = true;
    } else if (skipping) {
      if (text === CLOSE) skipping = false;
    } else {
      out.push(text);
    }
  }
  return out.join('\n');
}
