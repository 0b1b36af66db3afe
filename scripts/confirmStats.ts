/**
 * Paired comparisons of a `labs run --seeds` record with everything docs/findings/corrections-2026-12-03.md
 * quotes beside the interval (issue 31, items 2-3):
 *
 *   npx tsx scripts/confirmStats.ts RECORD[,RECORD...] [--family ARMS:BASELINE:METRICS] [--only REGEX] [--covariate KEY [--cut X]]
 *
 * Family: without --family, the record's own comparison plan (the arms, baseline and metrics of its
 * `comparisons`), recomputed from its per-seed runs with the project's `compareSeries` (the same
 * streams, so the numbers equal the record's: checked, a mismatch is reported); with --family
 * `a1,a2:base:m1,m2`, every arm vs base on every metric (for records whose plan does not hold the
 * metric, e.g. rollout's `updates_to_0_9`). Holm is over that family. Per-seed values are
 * `metrics["<metric>.<arm>"]` of each run; seeds where either value is not finite are left out (n).
 *
 * Printed per comparison: mean diff (arm − baseline), paired BCa 95% CI, sign-flip p and Holm p (as
 * `labs compare`), the t interval of the mean difference (core `summarize`), the median difference,
 * the seeds up / down / tied and the exact two-sided binomial sign test over the untied seeds, mde80.
 *
 * --covariate KEY (a per-seed metric, e.g. saturation's `all_right_fraction.warmup_end`): per
 * comparison, the least-squares slope of the per-seed difference on the covariate with its t
 * interval (n − 2 df) and Pearson r, and the comparison within the seeds below and at-or-above the
 * covariate's median, or `--cut X` (mean, t interval, up / down).
 * --only REGEX prints only comparisons whose `arm/metric` matches (the family, and Holm, stay whole).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { summarize, tQuantile975 } from '../src/core/stats.js';
import { compareSeries, type PairedSeries } from '../src/experiments/seedStatistics.js';
import type { Comparison, JsonValue, RunRecord } from '../src/experiments/types.js';

interface SeedsRecord {
  experiment: string;
  seeds: number[];
  runs: RunRecord[];
  comparisons?: Comparison[];
}

const args = process.argv.slice(2);
const path = args[0];
const USAGE =
  'usage: npx tsx scripts/confirmStats.ts RECORD[,RECORD...] [--family ARMS:BASELINE:METRICS] [--only REGEX] [--covariate KEY [--cut X]]\n' +
  '  RECORD: a --seeds record (labs run --seeds ... --out DIR: DIR/record.json; labs findings NAME:\n' +
  '  runs/findings/NAME/<phase>/<run>/record.json) or a directory of single-seed records; several are pooled\n';
if (path === '--help' || path === '-h') {
  process.stdout.write(USAGE);
  process.exit(0);
}
if (!path || path.startsWith('--')) {
  process.stderr.write(USAGE);
  process.exit(2);
}
const opt = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
/**
 * One or more comma-separated sources, pooled seed by seed (e.g. a findings manifest's discovery and
 * confirmation records, for the covariate over both sets): each a `--seeds` record (`record.json` of
 * `labs run --seeds ... --out DIR`, or `runs/findings/NAME/<phase>/<run>/record.json` of
 * `labs findings NAME`) or a directory of single-seed records (a `--seeds` run's `seeds/`, or
 * a findings run's `runs/findings/NAME/<phase>/<run>/seeds/`).
 */
function load(paths: string): SeedsRecord {
  const parts: SeedsRecord[] = paths.split(',').map((p) => {
    if (statSync(p).isDirectory()) {
      const runs = readdirSync(p)
        .filter((f) => f.endsWith('.json'))
        .map((f) => JSON.parse(readFileSync(join(p, f), 'utf8')) as RunRecord)
        .sort((a, b) => a.seed - b.seed);
      return { experiment: String(runs[0]?.experiment), seeds: runs.map((r) => r.seed), runs };
    }
    const raw = JSON.parse(readFileSync(p, 'utf8')) as SeedsRecord;
    if (!Array.isArray(raw.runs)) {
      process.stderr.write(`${p}: not a --seeds record (no runs[])\n`);
      process.exit(1);
    }
    return raw;
  });
  const first = parts[0] as SeedsRecord;
  if (parts.length === 1) return first;
  // pooled: the comparison plan of the first record, the runs of all of them
  const runs = parts.flatMap((r) => r.runs);
  return {
    experiment: first.experiment,
    seeds: runs.map((r) => r.seed),
    runs,
    ...(first.comparisons ? { comparisons: first.comparisons } : {}),
  };
}
const record = load(path);
if (!Array.isArray(record.runs) || record.runs.length === 0) {
  process.stderr.write(`${path}: not a --seeds record (no runs)\n`);
  process.exit(1);
}
const runs = record.runs;

interface Plan {
  baseline: string;
  arms: string[];
  metrics: string[];
}
function planOf(): Plan {
  const family = opt('--family');
  if (family) {
    const [arms, baseline, metrics] = family.split(':');
    if (!arms || !baseline || !metrics) {
      process.stderr.write(`--family ${family}: expected ARMS:BASELINE:METRICS\n`);
      process.exit(2);
    }
    return { baseline, arms: arms.split(','), metrics: metrics.split(',') };
  }
  const cs = record.comparisons ?? [];
  if (cs.length === 0) {
    process.stderr.write(`${path}: the record has no comparisons; give --family\n`);
    process.exit(2);
  }
  const uniq = <T>(xs: T[]) => [...new Set(xs)];
  return {
    baseline: cs[0]?.baseline as string,
    arms: uniq(cs.map((c) => c.arm)),
    metrics: uniq(cs.map((c) => c.metric)),
  };
}
const plan = planOf();
const num = (v: JsonValue | undefined): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : null;
const values = (arm: string, metric: string) => runs.map((r) => num(r.metrics[`${metric}.${arm}`]));

const items: PairedSeries[] = [];
for (const metric of plan.metrics)
  for (const arm of plan.arms) {
    if (arm === plan.baseline) continue;
    items.push({
      arm,
      baseline: plan.baseline,
      metric,
      armValues: values(arm, metric),
      baselineValues: values(plan.baseline, metric),
    });
  }
const comparisons = compareSeries(items);

// The record's own numbers must be these (same plan, same streams): say so if not.
if (!opt('--family'))
  for (const c of comparisons) {
    const r = record.comparisons?.find((x) => x.arm === c.arm && x.metric === c.metric);
    if (!r || Math.abs(r.diff - c.diff) > 1e-9 || Math.abs(r.p_holm - c.p_holm) > 1e-9)
      process.stdout.write(`WARNING: ${c.arm}/${c.metric} differs from the record's comparison\n`);
  }

/** Exact two-sided binomial test of P(up) = 1/2 over `up + down` untied seeds. */
function signTestP(up: number, down: number): number {
  const n = up + down;
  if (n === 0) return 1;
  const k = Math.min(up, down);
  let logC = 0; // log C(n, 0)
  let tail = 0;
  for (let i = 0; i <= k; i++) {
    tail += Math.exp(logC - n * Math.LN2);
    logC += Math.log(n - i) - Math.log(i + 1);
  }
  return Math.min(1, 2 * tail);
}
const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};
const g = (x: number) =>
  Math.abs(x) >= 100 ? x.toFixed(1) : Math.abs(x) >= 0.001 || x === 0 ? x.toFixed(3) : x.toExponential(1);
const pf = (p: number) => (p >= 0.001 ? p.toFixed(3) : p.toExponential(1));
const tInterval = (d: readonly number[]): string => {
  if (d.length < 2) return 'n/a';
  const s = summarize(d, 'difference');
  return `[${g(s.ci95[0])}, ${g(s.ci95[1])}]`;
};

const covariateKey = opt('--covariate');
const only = opt('--only') ? new RegExp(opt('--only') as string) : null;
process.stdout.write(
  `${record.experiment}: ${runs.length} seeds ${runs[0]?.seed}..${runs[runs.length - 1]?.seed}; family of ${comparisons.length} (${plan.arms.filter((a) => a !== plan.baseline).join(', ')} vs ${plan.baseline}; ${plan.metrics.join(', ')}), Holm over it\n`,
);
for (const c of comparisons) {
  if (only && !only.test(`${c.arm}/${c.metric}`)) continue;
  const a = values(c.arm, c.metric);
  const b = values(c.baseline, c.metric);
  const pairs: { d: number; x: number | null }[] = [];
  a.forEach((v, i) => {
    const w = b[i];
    if (v !== null && w !== null && w !== undefined)
      pairs.push({ d: v - w, x: covariateKey ? num(runs[i]?.metrics[covariateKey]) : null });
  });
  const d = pairs.map((p) => p.d);
  const tol = 1e-12 * Math.max(1, ...d.map(Math.abs));
  const up = d.filter((x) => x > tol).length;
  const down = d.filter((x) => x < -tol).length;
  process.stdout.write(
    `${c.arm} − ${c.baseline}  ${c.metric}: n ${c.n}, mean ${g(c.diff)} [${g(c.ci95[0])}, ${g(c.ci95[1])}] (BCa), p ${pf(c.p)}, Holm p ${pf(c.p_holm)}; t ${tInterval(d)}; median ${g(median(d))}; up/down/tied ${up}/${down}/${d.length - up - down}, sign test p ${pf(signTestP(up, down))}; mde80 ${c.mde80 === null ? 'n/a' : g(c.mde80)}\n`,
  );
  if (covariateKey) {
    const xy = pairs.filter((p): p is { d: number; x: number } => p.x !== null);
    const n = xy.length;
    const mx = xy.reduce((s, p) => s + p.x, 0) / n;
    const my = xy.reduce((s, p) => s + p.d, 0) / n;
    let sxx = 0;
    let sxy = 0;
    let syy = 0;
    for (const p of xy) {
      sxx += (p.x - mx) ** 2;
      sxy += (p.x - mx) * (p.d - my);
      syy += (p.d - my) ** 2;
    }
    const slope = sxy / sxx;
    const resid = xy.reduce((s, p) => s + (p.d - my - slope * (p.x - mx)) ** 2, 0);
    const se = Math.sqrt(resid / (n - 2) / sxx);
    const half = tQuantile975(n - 2) * se;
    const r = sxy / Math.sqrt(sxx * syy);
    const cut = opt('--cut') !== undefined ? Number(opt('--cut')) : median(xy.map((p) => p.x));
    const strata = [
      { label: `${covariateKey} < ${g(cut)}`, ds: xy.filter((p) => p.x < cut).map((p) => p.d) },
      { label: `${covariateKey} >= ${g(cut)}`, ds: xy.filter((p) => p.x >= cut).map((p) => p.d) },
    ];
    process.stdout.write(
      `    on ${covariateKey} (n ${n}, mean ${g(mx)}): slope ${g(slope)} [${g(slope - half)}, ${g(slope + half)}] (t, ${n - 2} df), r ${Number.isFinite(r) ? r.toFixed(2) : 'n/a'}\n`,
    );
    for (const s of strata) {
      const su = s.ds.filter((x) => x > tol).length;
      const sd = s.ds.filter((x) => x < -tol).length;
      const m = s.ds.length ? s.ds.reduce((q, x) => q + x, 0) / s.ds.length : Number.NaN;
      process.stdout.write(
        `    ${s.label}: n ${s.ds.length}, mean ${g(m)} t ${tInterval(s.ds)}, median ${s.ds.length ? g(median(s.ds)) : 'n/a'}, up/down ${su}/${sd}, sign test p ${pf(signTestP(su, sd))}\n`,
      );
    }
  }
}
