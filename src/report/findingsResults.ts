/**
 * The results file of a format-2 findings manifest (`docs/findings/NAME.results.json`, written by
 * `labs findings NAME`): per claim its estimate on the discovery and the confirmation seeds and its
 * status (src/experiments/findingsClaims.ts), with what produced it (manifest, version, seeds,
 * command), and the one table both `labs findings` prints and `npm run docs` renders into the page
 * (`<!-- generated:table findings-claims from docs/findings/NAME.results.json -->`). No clock and
 * no wall time in it: rerunning the same seeds writes the same bytes.
 */
import { COLLAPSED_MAX_EVAL_SUCCESS } from '../experiments/collapsed.js';
import type { FindingsV2 } from '../experiments/findings.js';
import {
  CLAIM_ALPHA,
  type ClaimEstimate,
  type ClaimResult,
  type ClaimVariant,
} from '../experiments/findingsClaims.js';
import type { GoalResult } from '../experiments/findingsGoals.js';
import type { DescriptiveTableResult } from '../experiments/findingsTables.js';
import { VERSION } from '../experiments/version.js';

export const FINDINGS_RESULTS_FORMAT = 'labs-findings-results/1';

export interface FindingsResults {
  format: typeof FINDINGS_RESULTS_FORMAT;
  /** The command that rebuilds this file (the docs cite it). */
  _command: string;
  manifest: string;
  title: string;
  doc?: string;
  version: string;
  discovery: { seeds: string; n: number };
  confirmation: { seeds: string; n: number };
  runs: {
    name: string;
    experiment: string;
    set: Record<string, string | number | boolean>;
    sweep?: string;
  }[];
  statistics: Record<string, string>;
  claims: ClaimResult[];
  /** The manifest's descriptive tables: means per seed set. */
  tables: DescriptiveTableResult[];
  /** The manifest's goals on each seed set (only when it declares any). */
  goals?: GoalResult[];
}

/** The results file's content for manifest `m` (read from `file`, named `name`). */
export function findingsResults(
  m: FindingsV2,
  file: string,
  name: string,
  seeds: { discovery: readonly number[]; confirmation: readonly number[] },
  claims: ClaimResult[],
  tables: DescriptiveTableResult[] = [],
  goals: GoalResult[] = [],
): FindingsResults {
  return {
    format: FINDINGS_RESULTS_FORMAT,
    _command: `labs findings ${name}`,
    manifest: file,
    title: m.title,
    ...(m.doc ? { doc: m.doc } : {}),
    version: VERSION,
    discovery: { seeds: m.discovery, n: seeds.discovery.length },
    confirmation: { seeds: m.confirmation, n: seeds.confirmation.length },
    runs: m.runs.map((r) => ({
      name: r.name,
      experiment: r.experiment,
      set: r.set,
      ...(r.sweep ? { sweep: r.sweep } : {}),
    })),
    statistics: {
      difference: 'B − A per seed, paired by seed; seeds where either value is not finite are left out (n)',
      ci95: 'paired BCa bootstrap of the mean difference, 10,000 resamples (ci_method says when it fell back to percentile)',
      p: 'two-sided sign-flip permutation test of mean 0 (exact up to 20 seeds, else 100,000 sign vectors)',
      p_holm:
        "Holm over the manifest's claims on the same seed set (one family per seed set; the without-collapsed variants are their own family)",
      sign: 'exact two-sided sign test: seeds up, down, tied (ties left out), p = min(1, 2·P(Binomial(up + down, 1/2) <= min(up, down)))',
      mde80: 'minimal detectable mean difference at 80% power, two-sided α 0.05, at this n',
      status: `confirmed: something to confirm (resolved on the discovery seeds, or the direction the manifest expects, shared by the discovery estimate), then the same sign on the confirmation seeds, whose CI excludes 0 and Holm p < ${CLAIM_ALPHA}; null on both: resolved (CI excludes 0, Holm p < ${CLAIM_ALPHA}) on neither set; not confirmed: anything else (expect "none": any confirmation effect; note 'confirmation only': resolved on the confirmation seeds only); pending: a seed set not run yet`,
      collapsed: `a seed's arm is collapsed when its held-out success eval_success.<arm> is <= ${COLLAPSED_MAX_EVAL_SUCCESS} (src/experiments/collapsed.ts)`,
    },
    claims,
    tables,
    ...(goals.length ? { goals } : {}),
  };
}

/** A difference as the tables print it: 3 significant digits, a true minus sign. */
export function formatDiff(x: number): string {
  if (x === 0) return '0';
  const abs = Math.abs(x);
  const text = abs < 1e-3 || abs >= 1e5 ? abs.toExponential(1) : String(Number(abs.toPrecision(3)));
  return `${x < 0 ? '−' : ''}${text}`;
}

/** A p-value: 2 significant digits, exponent below 0.001. */
export function formatP(p: number): string {
  if (p >= 0.9995) return '1';
  return p < 1e-3 ? p.toExponential(1) : String(Number(p.toPrecision(2)));
}

function estimateCell(e: ClaimEstimate | null, n: number, empty: boolean): string {
  if (!e) return empty ? 'no seed left' : 'not run';
  const seeds = e.n === n ? '' : ` (n ${e.n})`;
  return `${formatDiff(e.mean)} [${formatDiff(e.ci95[0])}, ${formatDiff(e.ci95[1])}]${seeds}`;
}

const STATUS: Record<ClaimResult['status'], string> = {
  confirmed: '**confirmed**',
  'not confirmed': 'not confirmed',
  'null on both': 'null on both',
  pending: 'pending',
};

/** One table row per claim (and one per without-collapsed variant). */
function rows(claims: readonly ClaimResult[], n: { discovery: number; confirmation: number }): string[][] {
  const row = (label: string, v: ClaimVariant) => {
    const c = v.confirmation;
    const d = v.discovery;
    return [
      label,
      `${estimateCell(d, n.discovery, v.empty?.includes('discovery') ?? false)}${d ? `, Holm ${formatP(d.p_holm)}` : ''}`,
      estimateCell(c, n.confirmation, v.empty?.includes('confirmation') ?? false),
      c ? formatDiff(c.median) : '-',
      c ? `${c.sign.up}/${c.sign.down}, p ${formatP(c.sign.p)}` : '-',
      c ? formatP(c.p_holm) : '-',
      c?.mde80 != null ? formatDiff(c.mde80) : '-',
      v.note ? `${STATUS[v.status]} (${v.note})` : STATUS[v.status],
    ];
  };
  return claims.flatMap((c) => {
    const main = row(c.label, c);
    const w = c.without_collapsed;
    if (!w) return [main];
    const left = `${w.collapsed.discovery.length} + ${w.collapsed.confirmation.length}`;
    return [main, row(`… without collapsed seeds (${left} left out)`, w)];
  });
}

/** The claims table, markdown (also what `labs findings` prints). */
export function formatClaims(
  claims: readonly ClaimResult[],
  n: { discovery: number; confirmation: number } = {
    discovery: claims[0]?.discovery?.n ?? 0,
    confirmation: claims[0]?.confirmation?.n ?? 0,
  },
): string {
  const header = [
    'claim (B − A)',
    `discovery, ${n.discovery} seeds: mean [95% CI], Holm p`,
    `confirmation, ${n.confirmation} seeds: mean [95% CI]`,
    'median',
    'sign test up/down, p',
    'Holm p',
    'MDE80',
    'status',
  ];
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), `|${header.map(() => '---').join('|')}|`, ...rows(claims, n).map(line)].join('\n');
}

/**
 * The docs region of a results file: the table (of the claims whose id starts with one of `only`,
 * when given: one page table per group of a manifest's claims), then the seeds, the manifest and
 * the command that rebuild it. Error: a prefix that matches no claim (a renamed claim would
 * otherwise silently empty a table).
 */
export function renderFindingsResults(r: FindingsResults, only?: readonly string[]): string {
  const claims = only ? r.claims.filter((c) => only.some((prefix) => c.id.startsWith(prefix))) : r.claims;
  for (const prefix of only ?? []) {
    if (!r.claims.some((c) => c.id.startsWith(prefix)))
      throw new Error(`${r.manifest}: no claim id starts with '${prefix}'`);
  }
  return `${formatClaims(claims, { discovery: r.discovery.n, confirmation: r.confirmation.n })}\n\nDiscovery seeds ${r.discovery.seeds}, confirmation seeds ${r.confirmation.seeds} (fixed in the manifest before they were run); median, sign test, Holm p and MDE80 on the confirmation seeds. Manifest \`${r.manifest}\`; rebuild: \`npm run findings -- ${r._command.replace(/^labs findings /, '')}\`, then \`npm run docs\`.`;
}

/** A mean as the descriptive tables print it: 4 significant digits. */
function formatMean(x: number | null): string {
  if (x === null) return '-';
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) return x.toExponential(2);
  return String(Number(x.toPrecision(4)));
}

/**
 * A descriptive table of a results file (`findings-table`, columns=ID): each cell the mean on the
 * discovery seeds / on the confirmation seeds, then the seeds and the command that rebuild it.
 */
export function renderFindingsTable(r: FindingsResults, id: string): string {
  const t = r.tables.find((x) => x.id === id);
  if (!t)
    throw new Error(
      `${r.manifest}: no table '${id}' (tables: ${r.tables.map((x) => x.id).join(', ') || 'none'})`,
    );
  const header = [t.row_label, ...t.columns];
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  const rows = t.rows.map((row) => [
    row.row,
    ...row.cells.map((c) => `${formatMean(c.discovery)} / ${formatMean(c.confirmation)}`),
  ]);
  return `${[line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n')}\n\nEach cell: mean over the discovery seeds ${r.discovery.seeds} / over the confirmation seeds ${r.confirmation.seeds} (descriptive; differences are tested in the claims table). Manifest \`${r.manifest}\`; rebuild: \`npm run findings -- ${r._command.replace(/^labs findings /, '')}\`, then \`npm run docs\`.`;
}

/** A goal's threshold in words: `every key in [0.1, 0.8] on 100% of seeds`, `≤ 0.5`. */
function goalTarget(g: GoalResult): string {
  if (g.kind === 'sd_ratio') return `sd ÷ ${g.baseline}'s sd ≤ ${g.max}`;
  const range =
    g.min !== undefined && g.max !== undefined
      ? `in [${g.min}, ${g.max}]`
      : g.min !== undefined
        ? `≥ ${g.min}`
        : `≤ ${g.max}`;
  const share = g.share === 1 ? 'every seed' : `at least ${Number((g.share * 100).toPrecision(3))}% of seeds`;
  return `${g.keys.length > 1 ? 'every key' : 'the key'} ${range} on ${share}`;
}

const f3 = (x: number) => x.toFixed(3);

function goalCell(g: GoalResult, phase: 'discovery' | 'confirmation'): string {
  if (g.kind === 'sd_ratio') {
    const p = g[phase];
    if (!p) return 'not run';
    const ratio = p.ratio === null ? 'baseline sd 0' : f3(p.ratio);
    return `${f3(p.sd)} ÷ ${f3(p.baseline_sd)} = ${ratio}: ${p.met ? '**met**' : 'not met'}`;
  }
  const p = g[phase];
  if (!p) return 'not run';
  const pct = p.n ? ` (${Math.round((100 * p.passing) / p.n)}%)` : '';
  const failing = p.failing.length && p.failing.length <= 5 ? `; fails: seed ${p.failing.join(', ')}` : '';
  const ranges = p.ranges.map((r) => (r ? `${f3(r[0])}–${f3(r[1])}` : '-')).join(' / ');
  return `${p.passing} of ${p.n}${pct}: ${p.met ? '**met**' : 'not met'}${failing}; range ${ranges}`;
}

/**
 * The goals table of a results file (`findings-goals`): per goal its run, the keys, the threshold,
 * and on each seed set the measured value and whether it is met, then the seeds and the command.
 * Error: a results file without goals.
 */
export function renderFindingsGoals(r: FindingsResults): string {
  if (!r.goals?.length) throw new Error(`${r.manifest}: the results have no goals`);
  const header = [
    'goal',
    'run',
    'measured',
    'target',
    `discovery ${r.discovery.seeds}`,
    `confirmation ${r.confirmation.seeds}`,
  ];
  const line = (cells: string[]) => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  const rows = r.goals.map((g) => [
    g.label,
    g.run,
    g.kind === 'seeds' ? g.keys.map((k) => `\`${k}\``).join(', ') : `sd of \`${g.key}\` over seeds`,
    goalTarget(g),
    goalCell(g, 'discovery'),
    goalCell(g, 'confirmation'),
  ]);
  return `${[line(header), `|${header.map(() => '---').join('|')}|`, ...rows.map(line)].join('\n')}\n\nEach seed set on its own: a seeds goal counts the seeds that pass (the range is each key's min–max over the seeds, in the order of the keys); an sd goal divides the between-seed sample sd by the baseline run's. Goals are thresholds, not tested claims. Manifest \`${r.manifest}\`; rebuild: \`npm run findings -- ${r._command.replace(/^labs findings /, '')}\`, then \`npm run docs\`.`;
}
