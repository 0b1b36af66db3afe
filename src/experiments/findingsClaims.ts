/**
 * The claims of a findings manifest (format 2, src/experiments/findings.ts) measured on its
 * discovery and confirmation seeds, and each claim's status (issue 31):
 *
 * - **confirmed**: there was something to confirm (resolved on the discovery seeds, or a direction
 *   the manifest's `expect` states and the discovery estimate shares), and on the confirmation seeds
 *   the mean paired difference has that sign, its 95% BCa interval excludes 0, and its Holm-adjusted
 *   p over the manifest's claims on the confirmation seeds is below 0.05;
 * - **null on both**: resolved (interval excluding 0 and Holm p < 0.05) on neither seed set;
 * - **not confirmed**: anything else (an effect on one set only, a flipped sign, or an effect where
 *   the page states none, `expect: "none"`); `note` says when the effect is on the confirmation
 *   seeds only.
 *
 * Per claim and seed set: the mean and its BCa interval, the median, the sign-flip p and its Holm
 * adjustment, the exact sign test (ups, downs, p) and the minimal detectable difference at 80%
 * power (mde80), so "not confirmed" can be read as "no effect this large" or "too few seeds".
 * Every resample draws from the statistics' stream forked by `claim/<phase>/<id>`, so a results file
 * is the same bytes on every rerun.
 */
import { LabError } from '../core/errors.js';
import { Rng } from '../random.js';
import { holmAdjust } from '../stats/holm.js';
import { pairedComparison } from '../stats/paired.js';
import { type SignTestResult, signTest } from '../stats/signTest.js';
import { isCollapsed } from './collapsed.js';
import type { ClaimSide, FindingsClaim } from './findings.js';
import { STATS_SEED } from './seedStatistics.js';
import type { JsonValue, RunRecord } from './types.js';

/** The two seed sets of a manifest, in the order they are run. */
export const PHASES = ['discovery', 'confirmation'] as const;
export type Phase = (typeof PHASES)[number];

/** Holm-adjusted p below which (with an interval excluding 0) a claim counts as resolved on a seed set. */
export const CLAIM_ALPHA = 0.05;

/** One claim on one seed set. */
export interface ClaimEstimate {
  /** Seeds paired (both values finite; without collapsed seeds when that variant). */
  n: number;
  /** Mean over seeds of B − A. */
  mean: number;
  /** 95% paired bootstrap interval of the mean (BCa unless `ci_method` says percentile). */
  ci95: [number, number];
  ci_method: 'bca' | 'percentile';
  /** Median of the per-seed differences (beside the mean for heavy tails). */
  median: number;
  /** Two-sided sign-flip permutation p of mean 0. */
  p: number;
  p_method: 'exact' | 'monte-carlo';
  /** `p` Holm-adjusted over the manifest's claims on this seed set. */
  p_holm: number;
  /** Exact sign test: seeds up, down, tied, and its two-sided p. */
  sign: SignTestResult;
  /** Minimal detectable mean difference at 80% power (two-sided α 0.05) at this n; null for n < 2. */
  mde80: number | null;
}

export type ClaimStatus = 'confirmed' | 'not confirmed' | 'null on both' | 'pending';

export interface ClaimVariant {
  /** Null: the seed set has not run, or (listed in `empty`) no seed of it has both values. */
  discovery: ClaimEstimate | null;
  confirmation: ClaimEstimate | null;
  status: ClaimStatus;
  /** Seed sets that ran but left no seed to pair (every value not finite, or every seed collapsed). */
  empty?: Phase[];
  /** `confirmation only`: resolved on the confirmation seeds, not on the discovery seeds. */
  note?: 'confirmation only';
}

export interface ClaimResult extends ClaimVariant {
  id: string;
  label: string;
  /** B − A: `RUN:METRIC_KEY` of each side. */
  a: string;
  b: string;
  expect: FindingsClaim['expect'];
  /** The same claim with collapsed seeds left out (when the manifest asks), and which seeds those were. */
  without_collapsed?: ClaimVariant & { collapsed: Record<Phase, number[]> };
}

/** Per seed set: each run's per-seed records (any order), or null when the set has not run (yet). */
export type PhaseRuns = Record<Phase, ReadonlyMap<string, readonly RunRecord[]> | null>;

const statsRng = new Rng(STATS_SEED);
const sideName = (s: ClaimSide) => `${s.run}:${s.metric}`;
const finite = (v: JsonValue | undefined): v is number => typeof v === 'number' && Number.isFinite(v);

function median(xs: readonly number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * The per-seed differences B − A of `claim` on one seed set, paired by seed: seeds where either
 * value is not finite are left out; with `dropCollapsed` also seeds where either side's arm
 * collapsed (src/experiments/collapsed.ts), listed. Errors: BAD_CLI when a run is missing, the two
 * runs hold different seeds, or a metric key is in no record of its run (a typo in the manifest).
 */
export function claimDifferences(
  claim: FindingsClaim,
  runs: ReadonlyMap<string, readonly RunRecord[]>,
  dropCollapsed: boolean,
): { seeds: number[]; diffs: number[]; collapsed: number[] } {
  const side = (s: ClaimSide) => {
    const records = runs.get(s.run);
    if (!records)
      throw new LabError('BAD_CLI', `claim ${claim.id}: no records of run '${s.run}'`, {
        details: { field: `claims.${claim.id}` },
      });
    if (!records.some((r) => s.metric in r.metrics)) {
      const known = Object.keys(records[0]?.metrics ?? {}).filter((k) => !k.includes('_minus_'));
      throw new LabError(
        'BAD_CLI',
        `claim ${claim.id}: ${sideName(s)} is not a metric of run ${s.run} (its metrics: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', ...' : ''})`,
        { details: { field: `claims.${claim.id}`, key: s.metric } },
      );
    }
    return new Map(records.map((r) => [r.seed, r.metrics] as const));
  };
  const a = side(claim.a);
  const b = side(claim.b);
  const seeds = [...a.keys()].sort((x, y) => x - y);
  const onlyOne = [...seeds.filter((s) => !b.has(s)), ...[...b.keys()].filter((s) => !a.has(s))];
  if (onlyOne.length) {
    throw new LabError(
      'BAD_CLI',
      `claim ${claim.id}: runs ${claim.a.run} and ${claim.b.run} hold different seeds (${onlyOne.slice(0, 8).join(',')} in only one); a claim pairs by seed`,
      { details: { field: `claims.${claim.id}` } },
    );
  }
  const out = { seeds: [] as number[], diffs: [] as number[], collapsed: [] as number[] };
  for (const seed of seeds) {
    const ma = a.get(seed) as Record<string, JsonValue>;
    const mb = b.get(seed) as Record<string, JsonValue>;
    const va = ma[claim.a.metric];
    const vb = mb[claim.b.metric];
    if (!finite(va) || !finite(vb)) continue;
    if (dropCollapsed && (isCollapsed(ma, claim.a.metric) || isCollapsed(mb, claim.b.metric))) {
      out.collapsed.push(seed);
      continue;
    }
    out.seeds.push(seed);
    out.diffs.push(vb - va);
  }
  return out;
}

/** Mean, BCa interval, median, sign-flip and sign tests, mde80 of one claim's differences (Holm added later). */
function estimate(diffs: readonly number[], label: string): Omit<ClaimEstimate, 'p_holm'> | null {
  if (diffs.length === 0) return null;
  const zeros = new Array<number>(diffs.length).fill(0);
  const r = pairedComparison(diffs, zeros, statsRng.fork(label), { field: label });
  // Equal sides must read 0, not the 1e-19 that float differences of rates can sum to.
  const scale = Math.max(...diffs.map(Math.abs));
  const snap = (x: number) => (Math.abs(x) <= 1e-12 * scale ? 0 : x);
  return {
    n: r.n,
    mean: snap(r.diff),
    ci95: [snap(r.ci95[0]), snap(r.ci95[1])],
    ci_method: r.ci_method,
    median: median(diffs),
    p: r.p,
    p_method: r.p_method,
    sign: signTest(diffs, label),
    mde80: r.mde80,
  };
}

/** Resolved on a seed set: the interval excludes 0 and the Holm p is below {@link CLAIM_ALPHA}. */
export function isResolved(e: ClaimEstimate | null): boolean {
  return e !== null && (e.ci95[0] > 0 || e.ci95[1] < 0) && e.p_holm < CLAIM_ALPHA;
}

/** The status of a claim from its two estimates (see the header). */
export function claimStatus(
  discovery: ClaimEstimate | null,
  confirmation: ClaimEstimate | null,
  expect: FindingsClaim['expect'],
): ClaimStatus {
  if (!discovery || !confirmation) return 'pending';
  const d = isResolved(discovery);
  const c = isResolved(confirmation);
  if (!d && !c) return 'null on both';
  if (expect === 'none' || !c) return 'not confirmed';
  const sign = Math.sign(confirmation.mean);
  const wanted = expect === 'up' ? 1 : expect === 'down' ? -1 : Math.sign(discovery.mean);
  // Something to confirm: an effect found on the discovery seeds, or a direction the page stated.
  const claimed = d || (expect !== null && Math.sign(discovery.mean) === wanted);
  return claimed && sign !== 0 && sign === Math.sign(discovery.mean) && sign === wanted
    ? 'confirmed'
    : 'not confirmed';
}

/**
 * Estimates of every claim on one seed set, Holm-adjusted over them (one family per variant), and
 * per claim the seeds left out as collapsed (with `dropCollapsed`).
 */
function phaseEstimates(
  claims: readonly FindingsClaim[],
  runs: ReadonlyMap<string, readonly RunRecord[]> | null,
  phase: Phase,
  dropCollapsed: boolean,
): { estimates: (ClaimEstimate | null)[]; collapsed: number[][] } {
  if (!runs) return { estimates: claims.map(() => null), collapsed: claims.map(() => []) };
  const collapsed: number[][] = [];
  const raw = claims.map((c) => {
    const d = claimDifferences(c, runs, dropCollapsed);
    collapsed.push(d.collapsed);
    return estimate(d.diffs, `claim/${phase}/${c.id}${dropCollapsed ? '/without-collapsed' : ''}`);
  });
  const present = raw.flatMap((e) => (e ? [e.p] : []));
  const holm = holmAdjust(present);
  let k = 0;
  return { estimates: raw.map((e) => (e ? { ...e, p_holm: holm[k++] as number } : null)), collapsed };
}

/**
 * Every claim on both seed sets (a set not run yet gives null estimates and status `pending`),
 * with the without-collapsed variant for the claims that ask for it (their own Holm family).
 */
export function evaluateClaims(claims: readonly FindingsClaim[], runs: PhaseRuns): ClaimResult[] {
  const main = {
    discovery: phaseEstimates(claims, runs.discovery, 'discovery', false),
    confirmation: phaseEstimates(claims, runs.confirmation, 'confirmation', false),
  };
  const asked = claims.filter((c) => c.withoutCollapsed);
  const robust = {
    discovery: phaseEstimates(asked, runs.discovery, 'discovery', true),
    confirmation: phaseEstimates(asked, runs.confirmation, 'confirmation', true),
  };
  // A seed set that ran but left a claim no seed is not "pending": nothing there confirms it.
  const variant = (d: ClaimEstimate | null, f: ClaimEstimate | null, expect: FindingsClaim['expect']) => {
    const empty = PHASES.filter((ph, k) => runs[ph] !== null && [d, f][k] === null);
    const status: ClaimStatus = empty.length
      ? PHASES.some((ph) => runs[ph] === null)
        ? 'pending'
        : 'not confirmed'
      : claimStatus(d, f, expect);
    const only = status === 'not confirmed' && isResolved(f) && !isResolved(d);
    return {
      discovery: d,
      confirmation: f,
      status,
      ...(empty.length ? { empty } : {}),
      ...(only ? { note: 'confirmation only' as const } : {}),
    };
  };
  return claims.map((c, i) => {
    const result: ClaimResult = {
      id: c.id,
      label: c.label,
      a: sideName(c.a),
      b: sideName(c.b),
      expect: c.expect,
      ...variant(main.discovery.estimates[i] ?? null, main.confirmation.estimates[i] ?? null, c.expect),
    };
    const j = asked.indexOf(c);
    if (j >= 0) {
      result.without_collapsed = {
        ...variant(robust.discovery.estimates[j] ?? null, robust.confirmation.estimates[j] ?? null, c.expect),
        collapsed: {
          discovery: robust.discovery.collapsed[j] ?? [],
          confirmation: robust.confirmation.collapsed[j] ?? [],
        },
      };
    }
    return result;
  });
}
