/**
 * Plain-text tables for the terminal. Numbers are shown with a fixed number of significant digits;
 * columns are aligned; nothing here prints.
 */
export type Cell = string | number | boolean | null | undefined;

/** A record value read as a number: itself when it is one, NaN otherwise (shown as 'NaN' by {@link formatNumber}). */
export function numberOf(v: unknown): number {
  return typeof v === 'number' ? v : Number.NaN;
}

/**
 * One cell as text: '-' for null/undefined, 'yes'/'no' for booleans, strings as they are, integers
 * below 1e9 in full, 'NaN' / 'inf' / '-inf', tiny or huge magnitudes in exponent form, anything else
 * with `digits` significant digits (trailing zeros dropped).
 */
export function formatNumber(v: Cell, digits = 4): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (typeof v === 'string') return v;
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (Number.isInteger(v) && Math.abs(v) < 1e9) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e6)) return v.toExponential(digits - 1);
  return Number(v.toPrecision(digits)).toString();
}

/**
 * A number rounded to an integer with comma thousands separators ('19,200'), '-' if not finite. Same
 * text as `toLocaleString('en-US')` (except -0, shown as '0'), without its cost: the first Intl call of a process loads ICU
 * data, which took longer than the agent experiment itself (docs/bench-startup.md).
 */
export function groupThousands(v: number): string {
  if (!Number.isFinite(v)) return '-';
  return String(Math.round(v)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Renders rows as an aligned table with a header rule. Numbers are right-aligned. */
export function table(headers: string[], rows: Cell[][], digits = 4): string {
  const cells = rows.map((r) => r.map((c) => formatNumber(c, digits)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) =>
    rows.every((r) => typeof r[i] === 'number' || r[i] === null || r[i] === undefined),
  );
  const line = (vals: string[]) =>
    vals
      .map((v, i) => (numeric[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}
