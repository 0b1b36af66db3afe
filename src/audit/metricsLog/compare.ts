/**
 * Logged vs recomputed, per (step, metric): the run's scalar log (read.ts) against the same metric
 * recomputed from the dump (definitions.ts), under the framework's own name.
 *
 * Agreement: |logged − recomputed| <= ATOL + RTOL · max(|logged|, |recomputed|), with ATOL = 1e-6 and
 * RTOL = 1e-4: logs store float32 (TensorBoard's simple_value; the trainers' own sums run in float32
 * on the GPU), whose rounding of a mean over thousands of samples stays well inside 1e-4 relative,
 * while one sample of difference in a batch of up to 10^4 is outside it.
 *
 * Signatures (known bugs, named when they match; see definitions.ts SIGNATURES):
 *  - a clip ratio whose logged values are all 0 (or all 1) over two or more steps while the
 *    recomputed one differs: named on the disagreeing rows;
 *  - a definition alternative that reproduces the logged value where the correct one does not
 *    (TRL's batch-level zero-std fraction);
 *  - a caveat that holds whatever the log says (prime-rl solve rates on non-binary rewards).
 */
import type { JsonValue } from '../../experiments/types.js';
import { type MetricDef, metricDefOf, type RunSettings, SIGNATURES } from './definitions.js';
import type { DumpRow } from './dumpRows.js';
import type { ScalarLog } from './types.js';

export const AGREE_ATOL = 1e-6;
export const AGREE_RTOL = 1e-4;

export function agrees(a: number, b: number): boolean {
  return Math.abs(a - b) <= AGREE_ATOL + AGREE_RTOL * Math.max(Math.abs(a), Math.abs(b));
}

export interface ComparisonRow {
  step: number;
  metric: string;
  framework: string;
  logged: number | null;
  recomputed: number | null;
  agrees: boolean | null;
  signature: string | null;
  /** Why `recomputed` is null. */
  note: string | null;
}

export interface LogComparison {
  rows: ComparisonRow[];
  /** Logged metric names that match no recomputable metric. */
  unmatched: { metric: string; steps: number }[];
  notes: string[];
  metrics: Record<string, JsonValue>;
}

/** `1-3, 7, 9-10` */
export function stepRanges(steps: readonly number[]): string {
  const s = [...new Set(steps)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length; ) {
    let j = i;
    while (j + 1 < s.length && (s[j + 1] as number) === (s[j] as number) + 1) j++;
    parts.push(i === j ? String(s[i]) : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return parts.join(', ');
}

/** Compares every logged metric that has a definition with its recomputation, step by step. */
export function compareWithLog(
  log: ScalarLog,
  dumpRows: readonly DumpRow[],
  settings: RunSettings,
): LogComparison {
  const byStep = new Map<number, DumpRow[]>();
  for (const r of dumpRows) {
    const list = byStep.get(r.step);
    if (list) list.push(r);
    else byStep.set(r.step, [r]);
  }
  const dumpSteps = [...byStep.keys()].sort((a, b) => a - b);
  const logged = new Map<string, Map<number, number>>();
  for (const r of log.rows) {
    let m = logged.get(r.metric);
    if (!m) {
      m = new Map();
      logged.set(r.metric, m);
    }
    m.set(r.step, r.value);
  }
  const unmatched: LogComparison['unmatched'] = [];
  const matched: [string, MetricDef][] = [];
  for (const [name, values] of [...logged.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const def = metricDefOf(name);
    if (def) matched.push([name, def]);
    else unmatched.push({ metric: name, steps: values.size });
  }
  const rows: ComparisonRow[] = [];
  const notes: string[] = [];
  const logSteps = new Set<number>();
  for (const [name, def] of matched) {
    const values = logged.get(name) as Map<number, number>;
    for (const s of values.keys()) logSteps.add(s);
    const mine: ComparisonRow[] = [];
    for (const step of dumpSteps) {
      const rec = def.compute(byStep.get(step) as DumpRow[], settings);
      const l = values.get(step) ?? null;
      const ok = l === null || rec.value === null ? null : agrees(l, rec.value);
      let signature: string | null = rec.caveat ?? null;
      if (ok === false && signature === null) {
        signature = rec.alternatives?.find((a) => l !== null && agrees(l, a.value))?.signature ?? null;
      }
      mine.push({
        step,
        metric: name,
        framework: def.framework,
        logged: l,
        recomputed: rec.value,
        agrees: ok,
        signature,
        note: rec.value === null ? (rec.why ?? null) : null,
      });
    }
    if (def.clipRatio) {
      const all = [...values.values()];
      const constant = all.length >= 2 && (all.every((v) => v === 0) || all.every((v) => v === 1));
      if (constant) for (const r of mine) if (r.agrees === false) r.signature ??= SIGNATURES.clipConstant;
    }
    rows.push(...mine);
    const missing = dumpSteps.filter((s) => !values.has(s));
    if (missing.length > 0 && missing.length < dumpSteps.length) {
      notes.push(`'${name}' is not logged at dump step(s) ${stepRanges(missing)}`);
    } else if (missing.length === dumpSteps.length) {
      notes.push(`'${name}' is logged, but at none of the dump's steps`);
    }
  }
  const logOnly = [...logSteps].filter((s) => !byStep.has(s));
  if (logOnly.length > 0) notes.push(`log step(s) not in the dump: ${stepRanges(logOnly)}`);
  if (matched.length > 0) {
    const dumpOnly = dumpSteps.filter((s) => !logSteps.has(s));
    if (dumpOnly.length > 0) notes.push(`dump step(s) not in the log: ${stepRanges(dumpOnly)}`);
  } else {
    notes.push(
      `no logged metric matches a recomputable one (${log.rows.length} logged values, ${logged.size} names)`,
    );
  }
  const compared = rows.filter((r) => r.agrees !== null);
  return {
    rows,
    unmatched,
    notes,
    metrics: {
      logged_metrics: logged.size,
      logged_metrics_matched: matched.length,
      logged_metrics_unmatched: unmatched.length,
      logged_values_compared: compared.length,
      logged_values_disagreeing: compared.filter((r) => r.agrees === false).length,
      logged_values_with_signature: rows.filter((r) => r.signature !== null).length,
      logged_agree_atol: AGREE_ATOL,
      logged_agree_rtol: AGREE_RTOL,
    },
  };
}
