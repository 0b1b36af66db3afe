/**
 * The report page: one self-contained HTML document (inline CSS, system fonts, inline SVG plots, no
 * scripts, no external URLs). It is a pure function of the records and the rendered plots, so the
 * same records give the same bytes (no generation timestamp).
 */
import { formatNumber } from '../experiments/text.js';
import type { JsonValue, MultiSeedRecord, RunRecord } from '../experiments/types.js';
import type { PlotSpec } from './plotData.js';

export interface PageRecord {
  record: RunRecord | MultiSeedRecord;
  label: string;
  source: string;
  /** The `labs run ...` command that reproduces the record (rerun.ts), shown under its source. */
  rerun?: string;
}

export interface PagePlot {
  spec: PlotSpec;
  svg: string;
}

export interface PageInput {
  records: PageRecord[];
  plots: PagePlot[];
  /** Plots that could not be drawn and why. */
  omitted: string[];
  version: string;
  /**
   * A live page (`labs audit DIR --watch --html`): the browser reloads it every this many seconds
   * (`<meta http-equiv="refresh">`, no script). Omitted: a final page, never reloaded.
   */
  refreshSeconds?: number;
}

/** A `labs audit` record: single-seed in shape, but its seed (0) means nothing; it has a dump path. */
export function isAuditRecord(record: RunRecord | MultiSeedRecord): boolean {
  return record.experiment === 'audit' && !('runs' in record) && typeof record.config.path === 'string';
}

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

function cell(v: JsonValue | undefined): string {
  if (v === undefined) return '-';
  if (v === null || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') {
    return escapeHtml(formatNumber(v));
  }
  return escapeHtml(JSON.stringify(v));
}

function isNumeric(v: JsonValue | undefined): boolean {
  return typeof v === 'number' || v === 'NaN' || v === 'Infinity' || v === '-Infinity';
}

/** An HTML table; numeric cells are right-aligned. Exported for the sweep and compare pages. */
export function htmlTable(
  headers: string[],
  rows: (JsonValue | undefined)[][],
  rowClass?: (i: number) => string,
): string {
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map((r, i) => {
      const cls = rowClass?.(i);
      const tds = r.map((v) => `<td${isNumeric(v) ? ' class="num"' : ''}>${cell(v)}</td>`).join('');
      return `<tr${cls ? ` class="${cls}"` : ''}>${tds}</tr>`;
    })
    .join('\n');
  return `<table><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** What a record ran on: its seed(s), or for an audit record (which has no seed) the dump it read. */
function seedText(record: RunRecord | MultiSeedRecord): string {
  if (isAuditRecord(record)) return `audit of ${String(record.config.path)}`;
  if (!('runs' in record)) return `seed ${record.seed}`;
  const s = record.seeds;
  return `${s.length} seeds (${s.length > 6 ? `${s.slice(0, 3).join(', ')}, ..., ${s[s.length - 1]}` : s.join(', ')})`;
}

/** `[lo, hi]`; 'n/a (1 seed)' when one seed was run (the t interval is undefined, not [x, x]). */
/**
 * A record's notes. For several seeds, a note every seed shares is shown once; a note that differs
 * between seeds (a run's measured conclusion) is shown for the first seed, labelled with it, so one
 * seed's numbers are not read as the summary of all of them.
 */
function recordNotes(record: RunRecord | MultiSeedRecord): string[] {
  if (!('runs' in record)) return record.notes ?? [];
  const first = record.runs[0];
  if (!first) return [];
  const shared = (n: string) => record.runs.every((r) => (r.notes ?? []).includes(n));
  const n = record.runs.length;
  return (first.notes ?? []).map((note) =>
    n === 1 || shared(note) ? note : `seed ${first.seed} (1 of ${n}, varies by seed): ${note}`,
  );
}

function ciText(ci: unknown, n: number): string {
  if (n < 2) return 'n/a (1 seed)';
  return Array.isArray(ci) && ci.length === 2
    ? `[${formatNumber(ci[0] as number)}, ${formatNumber(ci[1] as number)}]`
    : '-';
}

function metricsSection(records: PageRecord[]): string {
  if (records.length === 1) {
    const { record } = records[0] as PageRecord;
    if ('runs' in record) {
      const rows = Object.entries(record.summary).map(([k, s]) => [
        k,
        s.mean,
        s.std,
        s.min,
        s.max,
        ciText(s.ci95, s.n ?? record.runs.length),
        s.interval === 'bootstrap-percentile' ? 'bootstrap' : 't',
        s.n ?? record.runs.length,
      ]);
      const perSeedKeys = Object.keys(record.runs[0]?.metrics ?? {});
      const perSeed = record.runs.map((r) => [r.seed, ...perSeedKeys.map((k) => r.metrics[k])]);
      return [
        '<h2>Metrics across seeds</h2>',
        htmlTable(['metric', 'mean', 'std', 'min', 'max', '95% CI of mean', 'interval', 'n'], rows),
        `<p class="note">${escapeHtml(INTERVAL_NOTE)}</p>`,
        '<details><summary>Metrics of every seed</summary>',
        htmlTable(['seed', ...perSeedKeys], perSeed),
        '</details>',
      ].join('\n');
    }
    const rows = Object.entries(record.metrics).map(([k, v]) => [k, v]);
    return `<h2>Metrics</h2>\n${htmlTable(['metric', 'value'], rows)}`;
  }
  const keys = [
    ...new Set(
      records.flatMap(({ record }) =>
        'runs' in record ? Object.keys(record.summary) : Object.keys(record.metrics),
      ),
    ),
  ];
  const rows = keys.map((k) => [
    k,
    ...records.map(({ record }): JsonValue | undefined => {
      if (!('runs' in record)) return record.metrics[k];
      const s = record.summary[k];
      return s ? `${formatNumber(s.mean)} ${ciText(s.ci95, s.n ?? record.runs.length)}` : undefined;
    }),
  ]);
  const note = records.some(({ record }) => 'runs' in record)
    ? '<p class="note">Multi-seed records show the mean and the 95% CI of the mean.</p>'
    : '';
  return `<h2>Metrics</h2>\n${note}${htmlTable(['metric', ...records.map((r) => r.label)], rows)}`;
}

const INTERVAL_NOTE =
  "interval: 't' = mean ± t_{0.975,n-1}·std/√n; 'bootstrap' = percentile bootstrap over seeds (10,000 resamples), used for every metric whose values all lie in [0, 1] (rates), so its interval stays in [0, 1].";

/** The paired comparisons of each multi-seed record that has them (plots are drawn separately). */
function comparisonsSection(records: PageRecord[]): string {
  const parts: string[] = [];
  for (const { record, label } of records) {
    if (!('runs' in record) || !record.comparisons?.length) continue;
    const rows = record.comparisons.map((c) => [
      c.arm,
      c.baseline,
      c.metric,
      c.n,
      c.diff,
      `[${formatNumber(c.ci95[0])}, ${formatNumber(c.ci95[1])}]`,
      Number(formatNumber(c.p, 3)),
      Number(formatNumber(c.p_holm, 3)),
      c.mde80,
    ]);
    parts.push(
      label ? `<h3>${escapeHtml(label)}</h3>` : '',
      htmlTable(
        ['arm', 'baseline', 'metric', 'n', 'diff', '95% CI (paired BCa)', 'p', 'p_holm', 'mde80'],
        rows,
      ),
      `<p class="note">${escapeHtml(COMPARISON_NOTE)}</p>`,
    );
  }
  return parts.length ? `<h2>Paired comparisons</h2>\n${parts.join('\n')}` : '';
}

const COMPARISON_NOTE =
  'diff = mean over seeds of arm − baseline, paired by seed. 95% CI: BCa bootstrap of the paired differences (10,000 resamples). p: two-sided sign-flip permutation test (exact for n <= 20 seeds, else 100,000 seeded Monte-Carlo sign vectors). p_holm: Holm across the comparisons of the record. mde80: smallest paired difference detectable with 80% power at two-sided α = 0.05, (t_{0.975,n-1} + t_{0.80,n-1})·sd/√n.';

function configSection(records: PageRecord[]): string {
  const keys = [...new Set(records.flatMap(({ record }) => Object.keys(record.config)))];
  if (keys.length === 0) return '';
  if (records.length === 1) {
    const { record } = records[0] as PageRecord;
    return `<h2>Config</h2>\n${htmlTable(
      ['option', 'value'],
      keys.map((k) => [k, record.config[k]]),
    )}`;
  }
  const rows = keys.map((k) => [k, ...records.map(({ record }) => record.config[k])]);
  const differs = keys.map(
    (k) => new Set(records.map(({ record }) => JSON.stringify(record.config[k]))).size > 1,
  );
  return [
    '<h2>Config</h2>',
    '<p class="note">Highlighted rows differ between the records.</p>',
    htmlTable(['option', ...records.map((r) => r.label)], rows, (i) => (differs[i] ? 'diff' : '')),
  ].join('\n');
}

const MAX_TABLE_ROWS = 40;

function tablesSection(records: PageRecord[]): string {
  const parts: string[] = [];
  for (const { record, label } of records) {
    const run = 'runs' in record ? record.runs[0] : record;
    if (!run) continue;
    for (const [name, rows] of Object.entries(run.tables)) {
      if (rows.length === 0) continue;
      const headers = [...new Set(rows.flatMap((r) => Object.keys(r)))];
      const shown = rows.slice(0, MAX_TABLE_ROWS);
      const whose = ['runs' in record ? `seed ${run.seed} of ${record.runs.length}` : '', label]
        .filter(Boolean)
        .join(', ');
      parts.push(
        `<details><summary>${escapeHtml(name)}${whose ? ` <span class="note">(${escapeHtml(whose)})</span>` : ''}, ${rows.length} rows</summary>`,
        htmlTable(
          headers,
          shown.map((r) => headers.map((h) => r[h])),
        ),
        rows.length > shown.length ? `<p class="note">first ${shown.length} of ${rows.length} rows</p>` : '',
        '</details>',
      );
    }
  }
  return parts.length ? `<h2>Tables</h2>\n${parts.join('\n')}` : '';
}

function plotSection(plots: PagePlot[], omitted: string[]): string {
  const figures = plots.map(({ spec, svg }) => {
    const notes = spec.notes.map((n) => `<p class="note">${escapeHtml(n)}</p>`).join('');
    return [
      `<figure class="plot" data-family="${escapeHtml(spec.family)}" data-kind="${spec.kind}">`,
      `<h3>${escapeHtml(spec.title)}</h3>`,
      svg,
      notes ? `<figcaption>${notes}</figcaption>` : '',
      '</figure>',
    ].join('\n');
  });
  const missing = omitted.length
    ? `<ul class="omitted">${omitted.map((o) => `<li>${escapeHtml(o)}</li>`).join('')}</ul>`
    : '';
  return `<h2>Plots</h2>\n${missing}\n<div class="plots">\n${figures.join('\n')}\n</div>`;
}

/** The report's stylesheet (shared by the sweep and compare pages). */
export const CSS = `
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  margin: 0 auto; padding: 1.5rem; max-width: 1400px; color: #222; background: #fafafa; line-height: 1.4; }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; border-bottom: 1px solid #ddd; padding-bottom: .2rem; }
h3 { font-size: .95rem; margin: 0 0 .4rem; }
.meta, .note { color: #666; font-size: .85rem; margin: .2rem 0; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 1rem; }
figure.plot { margin: 0; padding: .75rem; background: white; border: 1px solid #e3e3e3; border-radius: 6px; }
figure.plot svg { max-width: 100%; height: auto; }
figcaption { margin-top: .3rem; }
ul.omitted, ul.notes { color: #8a4b00; font-size: .9rem; }
table { border-collapse: collapse; font-size: .85rem; background: white; margin: .3rem 0; }
th, td { border: 1px solid #e3e3e3; padding: .2rem .55rem; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.diff td { background: #fff6d6; }
details { margin: .4rem 0; }
summary { cursor: pointer; }
code { font-family: ui-monospace, "SF Mono", Menlo, Consolas, monospace; font-size: .85em; }
`;

/** The whole page as a string. */
export function renderPage(input: PageInput): string {
  const { records } = input;
  const experiments = [...new Set(records.map((r) => r.record.experiment))];
  const only = (records[0] as PageRecord).record;
  const title =
    records.length === 1
      ? isAuditRecord(only)
        ? `${only.config.live === true ? 'LIVE audit (watching; final page after Ctrl-C)' : 'audit'} — ${String(only.config.path)}`
        : `${experiments[0]} — ${seedText(only)}`
      : `${experiments.join(' vs ')} — ${records.length} records compared`;
  const sources = records
    .map(
      (r) =>
        `<li>${r.label ? `<b>${escapeHtml(r.label)}</b>: ` : ''}<code>${escapeHtml(r.source)}</code> · ${escapeHtml(seedText(r.record))} · v${escapeHtml(r.record.version)} · ${escapeHtml(formatNumber(r.record.timing.wall_ms / 1000, 3))} s${r.rerun ? `<br>rerun: <code class="rerun">${escapeHtml(r.rerun)}</code>` : ''}</li>`,
    )
    .join('\n');
  const notes = records.flatMap(({ record, label }) =>
    recordNotes(record).map((n) => `<li>${label ? `${escapeHtml(label)}: ` : ''}${escapeHtml(n)}</li>`),
  );
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${input.refreshSeconds === undefined ? '' : `<meta http-equiv="refresh" content="${Math.max(1, Math.round(input.refreshSeconds))}">\n`}<title>${escapeHtml(title)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<ul class="meta">${sources}</ul>
${notes.length ? `<h2>Notes</h2>\n<ul class="notes">${notes.join('\n')}</ul>` : ''}
${plotSection(input.plots, input.omitted)}
${comparisonsSection(records)}
${metricsSection(records)}
${configSection(records)}
${tablesSection(records)}
<p class="meta">reasoning-rl-labs ${escapeHtml(input.version)} · self-contained report: no scripts, no network.</p>
</body>
</html>
`;
}
