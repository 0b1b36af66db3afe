/**
 * The `mismatch` record's pieces: per-update curves per arm, the `arms`, `dose` and `delta_by_bin`
 * tables, the plot hints, and the one-line conclusion per source (each sentence states measured
 * numbers only). Pure functions of the arms' results.
 */
import { DEFAULT_PROB_EDGES } from '../../core/sequenceMismatchStats.js';
import type { MismatchArm } from '../../train/mismatchCorrections.js';
import type { MismatchArmResult, MismatchUpdate } from '../../train/mismatchLearner.js';
import type { JsonValue, PlotHint } from '../types.js';
import type { DoseSetting } from './mismatchDose.js';

const round6 = (x: number): number | null => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);
/** 4 significant digits (mismatch measures span many decades); null when not finite. */
const sig4 = (x: number): number | null => (Number.isFinite(x) ? Number(x.toPrecision(4)) : null);

function mean(values: readonly number[]): number {
  const v = values.filter(Number.isFinite);
  return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN;
}

/** The last quarter of the updates (at least one): "at the end". */
function lateUpdates(r: MismatchArmResult): MismatchUpdate[] {
  const n = r.updates.length;
  return r.updates.slice(n - Math.max(1, Math.floor(n / 4)));
}

/** Rollout-probability bin labels of DEFAULT_PROB_EDGES: `[0, 0.01)`, …, `[0.9, 1]`. */
export const BIN_LABELS: readonly string[] = DEFAULT_PROB_EDGES.slice(0, -1).map(
  (lo, k) => `[${lo}, ${DEFAULT_PROB_EDGES[k + 1]}${k === DEFAULT_PROB_EDGES.length - 2 ? ']' : ')'}`,
);

/** Token-weighted mean |Δ| per bin over every update of an arm (NaN for an empty bin). */
export function binMeans(r: MismatchArmResult): number[] {
  return BIN_LABELS.map((_, k) => {
    let n = 0;
    let s = 0;
    for (const u of r.updates) {
      const c = u.binTokens[k] as number;
      if (c > 0) {
        n += c;
        s += c * (u.binMeanAbsDelta[k] as number);
      }
    }
    return n > 0 ? s / n : Number.NaN;
  });
}

/** One row of `tables.arms`. */
export function armSummaryRow(r: MismatchArmResult): Record<string, JsonValue> {
  const late = lateUpdates(r);
  return {
    arm: r.arm,
    final_eval_success: round6(r.finalEval),
    best_eval_success: round6(r.bestEval),
    collapsed: r.collapse ? 1 : 0,
    collapse_update: r.collapse?.update ?? null,
    collapse_reason: r.collapse?.reason ?? null,
    k3_end: sig4(mean(late.map((u) => u.k3))),
    chi2_token_end: sig4(mean(late.map((u) => u.chi2Token))),
    max_ratio: sig4(Math.max(...r.updates.map((u) => u.maxRatio))),
    ess_mean: round6(mean(r.updates.map((u) => u.ess))),
    masked_fraction_mean: round6(mean(r.updates.map((u) => u.maskedFraction))),
    grad_norm_mean: sig4(mean(r.updates.map((u) => u.gradNorm))),
    entropy_end: round6(mean(late.map((u) => u.entropy))),
    train_success_mean: round6(mean(r.updates.map((u) => u.trainSuccess))),
  };
}

/** One row of `tables.dose`. */
export function doseRow(setting: DoseSetting, r: MismatchArmResult): Record<string, JsonValue> {
  const bins = binMeans(r);
  return {
    source: setting.source,
    dose: setting.dose,
    arm: r.arm,
    k3_mean: sig4(mean(r.updates.map((u) => u.k3))),
    max_ratio: sig4(Math.max(...r.updates.map((u) => u.maxRatio))),
    abs_delta_lowest_bin: sig4(bins[0] as number),
    abs_delta_highest_bin: sig4(bins[bins.length - 1] as number),
    ess_mean: round6(mean(r.updates.map((u) => u.ess))),
    masked_fraction_mean: round6(mean(r.updates.map((u) => u.maskedFraction))),
    final_eval_success: round6(r.finalEval),
    collapsed: r.collapse ? 1 : 0,
  };
}

/** `tables.delta_by_bin`: mean |old − engine| per rollout-probability bin, one column per arm. */
export function binTable(results: readonly MismatchArmResult[]): Record<string, JsonValue>[] {
  const means = results.map(binMeans);
  return BIN_LABELS.map((bin, k) => {
    const row: Record<string, JsonValue> = { bin };
    results.forEach((r, i) => {
      row[r.arm] = sig4(means[i]?.[k] as number);
    });
    return row;
  });
}

/** Per-update curves `<measure>.<arm>` (NaN after an arm stopped, and eval_success between evaluations). */
export function mismatchCurves(results: readonly MismatchArmResult[]): Record<string, number[]> {
  const n = Math.max(0, ...results.map((r) => r.updates.length));
  const curves: Record<string, number[]> = { update: Array.from({ length: n }, (_, i) => i + 1) };
  const families: Record<string, (u: MismatchUpdate) => number> = {
    k3: (u) => u.k3,
    chi2_token: (u) => u.chi2Token,
    mean_abs_delta: (u) => u.meanAbsDelta,
    max_ratio: (u) => u.maxRatio,
    ess: (u) => u.ess,
    masked_fraction: (u) => u.maskedFraction,
    grad_norm: (u) => u.gradNorm,
    entropy: (u) => u.entropy,
    train_success: (u) => u.trainSuccess,
    eval_success: (u) => u.evalSuccess,
  };
  for (const [family, pick] of Object.entries(families)) {
    for (const r of results) {
      curves[`${family}.${r.arm}`] = Array.from({ length: n }, (_, i) => {
        const u = r.updates[i];
        return u ? pick(u) : Number.NaN;
      });
    }
  }
  return curves;
}

/** Plot hints for `--html`. */
export const MISMATCH_PLOTS: Record<string, PlotHint> = {
  k3: { title: 'Mismatch (verl k3_kl, behaviour vs old) per update, by arm', y: 'k3 KL per loss token' },
  delta_by_bin: {
    title: '|log pi_old - log pi_engine| by rollout-probability bin, by arm',
    y: 'mean |delta| (nats)',
    x: 'rollout probability bin',
    kind: 'bar',
    table: 'delta_by_bin',
    xField: 'bin',
  },
  eval_success: { title: 'Held-out success (trainer policy) by arm', y: 'fraction of tasks' },
  train_success: { title: 'Training success (engine rollouts) by arm', y: 'fraction of trajectories' },
  ess: { title: 'Kish ESS of the applied weights by arm', y: 'ESS / loss tokens' },
  masked_fraction: { title: 'Loss tokens masked by the correction', y: 'fraction of loss tokens' },
  max_ratio: { title: 'Largest token ratio pi_old / pi_engine', y: 'ratio' },
};

const fmt = (x: number | null | undefined) =>
  x === null || x === undefined || !Number.isFinite(x) ? 'n/a' : x.toPrecision(3);
/** `mean |delta| X on tokens with <what>`, or that no sampled token fell there (e.g. below a top_p cut). */
const binText = (x: number | undefined, what: string) =>
  x !== undefined && Number.isFinite(x)
    ? `${fmt(x)} on tokens with ${what}`
    : `n/a (no sampled token with ${what})`;

/**
 * One sentence per source (precision, top_p, lag) from the dose rows: the mismatch (mean k3 over
 * updates) at each dose against the exact engine, where it sits (mean |Δ| in the lowest vs the
 * highest rollout-probability bin, at the largest dose), and held-out success of `none` vs the
 * best correction. States the numbers of this run only.
 */
export function sourceConclusions(
  rows: readonly { setting: DoseSetting; arm: MismatchArm; r: MismatchArmResult }[],
  best: MismatchArm | null,
): string[] {
  const exact = rows.find((x) => x.setting.source === 'exact' && x.arm === 'none');
  const out: string[] = [];
  for (const source of ['precision', 'top_p', 'lag'] as const) {
    const none = rows.filter((x) => x.setting.source === source && x.arm === 'none');
    if (none.length === 0) {
      out.push(`${source}: not measured in this run (no dose rows for it).`);
      continue;
    }
    const k3 = (r: MismatchArmResult) => sig4(mean(r.updates.map((u) => u.k3)));
    const doses = none.map((x) => `${fmt(k3(x.r))} (${x.setting.dose})`).join(', ');
    const last = none[none.length - 1] as (typeof none)[number];
    const bins = binMeans(last.r);
    const corr = rows.find(
      (x) => x.setting.source === source && x.setting.dose === last.setting.dose && x.arm === best,
    );
    const success = corr
      ? `held-out success none ${fmt(last.r.finalEval)} vs ${best} ${fmt(corr.r.finalEval)}`
      : `held-out success none ${fmt(last.r.finalEval)}`;
    out.push(
      `${source}: mean k3 over updates ${exact ? `${fmt(k3(exact.r))} (exact engine) -> ` : ''}${doses}; at ${last.setting.dose} mean |delta| ${binText(bins[0], 'rollout p < 0.01')} vs ${binText(bins[bins.length - 1], 'p >= 0.9')}; ${success} (one seed).`,
    );
  }
  return out;
}
