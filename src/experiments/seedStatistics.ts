/**
 * The statistics of a multi-seed record: which interval each metric's summary uses, and the paired
 * comparisons of an experiment's arms against their baseline. The numerics live in src/stats; this
 * file decides what is compared and with which stream.
 *
 * Every resample draws from `Rng(STATS_SEED)` forked by a label naming the metric or comparison, so
 * a record's statistics are the same on every rerun and adding a metric moves no other number.
 */
import { summarize } from '../core/stats.js';
import { Rng } from '../random.js';
import { DEFAULT_RESAMPLES } from '../stats/bootstrap.js';
import { holmAdjust } from '../stats/holm.js';
import { pairedComparison } from '../stats/paired.js';
import { rateMeanInterval } from '../stats/rateMean.js';
import { DEFAULT_PERMUTATIONS, EXACT_MAX_N } from '../stats/signFlip.js';
import type {
  Comparison,
  ComparisonPlan,
  JsonValue,
  MetricSummary,
  RunRecord,
  SummaryInterval,
} from './types.js';

/** Seed of the statistics' own stream (not an experiment seed: it only drives resampling). */
export const STATS_SEED = 0;
/** Resamples for a per-update band of a rate curve: enough for a drawn band, 20x cheaper than a table interval. */
export const CURVE_BAND_RESAMPLES = 500;

const statsRng = new Rng(STATS_SEED);

/** True when every value lies in [0, 1]: such a metric is summarised as a rate (an interval that stays in [0, 1]). */
export function isUnitInterval(values: readonly number[]): boolean {
  return values.every((v) => v >= 0 && v <= 1);
}

/**
 * A per-seed paired difference metric, `<measure>.<arm>_minus_<baseline>` (or `paired.*` in records
 * written before that naming): arm − baseline, whose range is [−1, 1] for rates.
 */
export function isDifferenceKey(key: string): boolean {
  return key.startsWith('paired.') || key.slice(key.indexOf('.') + 1).includes('_minus_');
}

/**
 * A metric summarised as a rate: every value in [0, 1] and not a per-seed difference (a difference
 * of rates lies in [−1, 1] even when one run's values happen to be >= 0).
 */
export function isRateMetric(key: string, values: readonly number[]): boolean {
  return !isDifferenceKey(key) && isUnitInterval(values);
}

/**
 * Summary of one metric across seeds: core's `summarize` (mean, std, min, max, n), with `ci95` the t
 * interval when some value lies outside [0, 1], else the percentile bootstrap over seeds (10,000
 * resamples from the stream labelled `summary/<key>`), which stays in [0, 1]. `interval` says which.
 */
export function summarizeAcrossSeeds(values: readonly number[], key: string): MetricSummary {
  const s = summarize(values, `metrics.${key}`);
  if (!isRateMetric(key, values)) return { ...s, interval: 't' };
  const ci = values.length > 1 ? rateMeanInterval(values, statsRng.fork(`summary/${key}`)).ci : s.ci95;
  return { ...s, ci95: ci, interval: 'bootstrap-percentile' };
}

/**
 * Per-update mean and 95% band of one curve over seeds (finite values only; NaN where none). A curve
 * whose every finite value lies in [0, 1] gets percentile-bootstrap bands ({@link CURVE_BAND_RESAMPLES}
 * resamples per update, stream `curve/<key>/<update index>`), any other curve t bands.
 */
export function curveBands(
  series: readonly (readonly number[])[],
  key: string,
): { mean: number[]; lo: number[]; hi: number[]; interval: SummaryInterval } {
  const len = Math.min(...series.map((s) => s.length));
  const columns: number[][] = [];
  for (let i = 0; i < len; i++)
    columns.push(series.map((s) => s[i] as number).filter((v) => Number.isFinite(v)));
  const interval: SummaryInterval = columns.every((c) => isUnitInterval(c)) ? 'bootstrap-percentile' : 't';
  const mean: number[] = [];
  const lo: number[] = [];
  const hi: number[] = [];
  columns.forEach((column, i) => {
    if (column.length === 0) {
      mean.push(Number.NaN);
      lo.push(Number.NaN);
      hi.push(Number.NaN);
      return;
    }
    const s = summarize(column);
    mean.push(s.mean);
    if (interval === 't' || column.length < 2) {
      lo.push(s.ci95[0]);
      hi.push(s.ci95[1]);
      return;
    }
    const { ci } = rateMeanInterval(column, statsRng.fork(`curve/${key}/${i}`), {
      resamples: CURVE_BAND_RESAMPLES,
    });
    lo.push(ci[0]);
    hi.push(ci[1]);
  });
  return { mean, lo, hi, interval };
}

/**
 * Mean and 95% band of one point of a drawn plot (a table cell across seeds): percentile bootstrap
 * ({@link CURVE_BAND_RESAMPLES} resamples, stream `band/<label>`) when every value is in [0, 1], else t.
 */
export function bandOf(values: readonly number[], label: string): { mean: number; lo: number; hi: number } {
  const s = summarize(values, label);
  if (values.length < 2 || !isUnitInterval(values)) return { mean: s.mean, lo: s.ci95[0], hi: s.ci95[1] };
  const { ci } = rateMeanInterval(values, statsRng.fork(`band/${label}`), {
    resamples: CURVE_BAND_RESAMPLES,
  });
  return { mean: s.mean, lo: ci[0], hi: ci[1] };
}

/** One arm-vs-baseline series to compare, paired by position (seed). */
export interface PairedSeries {
  arm: string;
  baseline: string;
  metric: string;
  armValues: readonly JsonValue[];
  baselineValues: readonly JsonValue[];
}

/**
 * Paired statistics for every item (pairs where both values are finite numbers; an item with no such
 * pair is left out), then Holm-adjusted p-values across all of them. Each item's stream is
 * `compare/<arm>/<baseline>/<metric>` forked from the statistics' seed.
 */
export function compareSeries(items: readonly PairedSeries[]): Comparison[] {
  const rows: Omit<Comparison, 'p_holm'>[] = [];
  for (const item of items) {
    const a: number[] = [];
    const b: number[] = [];
    item.armValues.forEach((v, i) => {
      const w = item.baselineValues[i];
      if (typeof v === 'number' && typeof w === 'number' && Number.isFinite(v) && Number.isFinite(w)) {
        a.push(v);
        b.push(w);
      }
    });
    if (a.length === 0) continue;
    const label = `${item.arm}/${item.baseline}/${item.metric}`;
    const r = pairedComparison(a, b, statsRng.fork(`compare/${label}`), { field: label });
    // Equal arms must read 0, not the -8.7e-19 that float differences of rates can sum to.
    const scale = Math.max(...a.map(Math.abs), ...b.map(Math.abs));
    const snap = (x: number) => (Math.abs(x) <= 1e-12 * scale ? 0 : x);
    rows.push({
      arm: item.arm,
      baseline: item.baseline,
      metric: item.metric,
      n: r.n,
      diff: snap(r.diff),
      ci95: [snap(r.ci95[0]), snap(r.ci95[1])],
      ci_method: r.ci_method,
      p: r.p,
      p_method: r.p_method,
      mde80: r.mde80,
    });
  }
  const holm = holmAdjust(rows.map((r) => r.p));
  return rows.map((r, i) => ({ ...r, p_holm: holm[i] as number }));
}

/** The metric key of `arm` and `metric`: `<metric>.<arm>`. */
export function metricKey(arm: string, metric: string): string {
  return `${metric}.${arm}`;
}

/** The comparisons `plan` declares, over `runs` (one per seed): every arm vs the baseline on every metric. */
export function compareArms(runs: readonly RunRecord[], plan: ComparisonPlan): Comparison[] {
  const items: PairedSeries[] = [];
  for (const metric of plan.metrics) {
    for (const arm of plan.arms) {
      if (arm === plan.baseline) continue;
      items.push({
        arm,
        baseline: plan.baseline,
        metric,
        armValues: runs.map((r) => r.metrics[metricKey(arm, metric)] ?? null),
        baselineValues: runs.map((r) => r.metrics[metricKey(plan.baseline, metric)] ?? null),
      });
    }
  }
  return compareSeries(items);
}

/** What `statistics` of a multi-seed record says, so the JSON explains its own numbers. */
export function statisticsDescription(comparisons: number): Record<string, JsonValue> {
  return {
    stats_seed: STATS_SEED,
    summary_ci95:
      "per metric, 'interval' names it: 't' = mean ± t_{0.975,n−1}·sd/√n for a metric with a value outside [0, 1]; 'bootstrap-percentile' = 2.5% and 97.5% quantiles of 10,000 means of seeds resampled with replacement, for a metric whose every value lies in [0, 1] (rates: the interval stays in [0, 1])",
    curve_bands: `per update, as summary_ci95 (rate curves: ${CURVE_BAND_RESAMPLES} bootstrap resamples per update)`,
    comparisons_diff:
      'mean over seeds of (arm − baseline), paired by seed; seeds where either value is not finite are left out (n)',
    comparisons_ci95: `paired BCa bootstrap of the mean difference, ${DEFAULT_RESAMPLES} resamples (ci_method says when it fell back to percentile)`,
    comparisons_p: `two-sided sign-flip permutation test of mean difference 0: exact over all 2^n sign vectors for n <= ${EXACT_MAX_N}, else ${DEFAULT_PERMUTATIONS} seeded Monte-Carlo sign vectors, p = (1 + hits)/(1 + ${DEFAULT_PERMUTATIONS})`,
    comparisons_p_holm: `Holm step-down adjustment across the ${comparisons} comparisons of this record`,
    comparisons_mde80:
      'minimal detectable paired difference at 80% power, two-sided α = 0.05: (t_{0.975,n−1} + t_{0.80,n−1})·sd(differences)/√n',
  };
}
