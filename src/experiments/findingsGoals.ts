/**
 * The goals of a findings manifest (`goals`, format 2): thresholds a page sets for a run, checked on
 * the discovery and on the confirmation seeds separately, e.g. issue 29's competence goals for the
 * warm start ("after pretraining every level's pass rate is in [0.1, 0.8]", "level-3 success ≥ 0.5 on
 * at least 80% of seeds", "the between-seed sd at most half of scratch's"). A goal is not a claim:
 * it has no effect size and no test, only a measured value and whether it meets the threshold.
 *
 * Two kinds:
 * - `seeds`: a seed passes when every one of `keys` lies in [`min`, `max`] (either bound may be
 *   absent); the goal is met when the share of passing seeds is at least `share` (1 = every seed).
 *   Reported: passing / n, the seeds that fail, and each key's range over the seeds.
 * - `sd_ratio`: the between-seed sample sd (n − 1) of `key` in `run` divided by the same in
 *   `baseline`; met when the ratio is at most `max`.
 * A seed whose value is not finite fails a `seeds` goal (and counts in n); an `sd_ratio` needs at
 * least two finite values in each run.
 */
import { LabError } from '../core/errors.js';
import type { FindingsGoal } from './findings.js';
import type { Phase, PhaseRuns } from './findingsClaims.js';
import { finiteValues } from './findingsTables.js';
import type { RunRecord } from './types.js';

export type { FindingsGoal } from './findings.js';
/** A `seeds` goal, as the manifest declares it (checked by findings.ts). */
export type SeedsGoal = Extract<FindingsGoal, { kind: 'seeds' }>;
/** An `sd_ratio` goal, as the manifest declares it. */
export type SdRatioGoal = Extract<FindingsGoal, { kind: 'sd_ratio' }>;

/** A `seeds` goal on one seed set. */
export interface SeedsGoalPhase {
  n: number;
  passing: number;
  /** The seeds that fail, ascending. */
  failing: number[];
  /** Per key (in `keys` order): [min, max] over the seeds' finite values (null: none finite). */
  ranges: ([number, number] | null)[];
  met: boolean;
}

/** An `sd_ratio` goal on one seed set. */
export interface SdRatioGoalPhase {
  sd: number;
  baseline_sd: number;
  /** sd ÷ baseline_sd; null when the baseline's sd is 0 (then met only if sd is 0 too). */
  ratio: number | null;
  met: boolean;
}

export type GoalResult =
  | (SeedsGoal & { discovery: SeedsGoalPhase | null; confirmation: SeedsGoalPhase | null })
  | (SdRatioGoal & { discovery: SdRatioGoalPhase | null; confirmation: SdRatioGoalPhase | null });

function missingKey(goal: string, key: string, run: string): LabError {
  return new LabError('BAD_CLI', `goal ${goal}: ${key} is not a metric of run ${run}`, {
    details: { field: `goals.${goal}`, key, run },
  });
}

function value(r: RunRecord, key: string): number | null {
  const v = r.metrics[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function seedsPhase(g: SeedsGoal, records: readonly RunRecord[]): SeedsGoalPhase {
  for (const key of g.keys) if (!records.some((r) => key in r.metrics)) throw missingKey(g.id, key, g.run);
  const lo = g.min ?? Number.NEGATIVE_INFINITY;
  const hi = g.max ?? Number.POSITIVE_INFINITY;
  const failing = records
    .filter((r) =>
      g.keys.some((key) => {
        const v = value(r, key);
        return v === null || v < lo || v > hi;
      }),
    )
    .map((r) => r.seed)
    .sort((a, b) => a - b);
  const ranges = g.keys.map((key): [number, number] | null => {
    const xs = finiteValues(records, key);
    return xs.length ? [Math.min(...xs), Math.max(...xs)] : null;
  });
  const n = records.length;
  const passing = n - failing.length;
  return { n, passing, failing, ranges, met: n > 0 && passing >= g.share * n };
}

/** Sample sd (n − 1) of the finite values of `key`. */
function sdOf(goal: string, records: readonly RunRecord[], key: string, run: string): number {
  if (!records.some((r) => key in r.metrics)) throw missingKey(goal, key, run);
  const xs = finiteValues(records, key);
  if (xs.length < 2) {
    throw new LabError(
      'BAD_CLI',
      `goal ${goal}: ${key} of run ${run} has ${xs.length} finite value(s); an sd needs 2`,
      {
        details: { field: `goals.${goal}`, key, run },
      },
    );
  }
  const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (xs.length - 1));
}

/**
 * Every goal on both seed sets (null: the set has not run). Errors: BAD_CLI when a goal's key is in
 * no record of a run that ran (a typo would otherwise read as a failed goal), or an sd has fewer
 * than two values.
 */
export function evaluateGoals(goals: readonly FindingsGoal[], runs: PhaseRuns): GoalResult[] {
  return goals.map((g): GoalResult => {
    if (g.kind === 'seeds') {
      const at = (phase: Phase) => {
        const records = runs[phase]?.get(g.run);
        return records ? seedsPhase(g, records) : null;
      };
      return { ...g, discovery: at('discovery'), confirmation: at('confirmation') };
    }
    const at = (phase: Phase): SdRatioGoalPhase | null => {
      const records = runs[phase]?.get(g.run);
      const base = runs[phase]?.get(g.baseline);
      if (!records || !base) return null;
      const sd = sdOf(g.id, records, g.key, g.run);
      const baselineSd = sdOf(g.id, base, g.key, g.baseline);
      if (baselineSd === 0) return { sd, baseline_sd: 0, ratio: null, met: sd === 0 };
      const ratio = sd / baselineSd;
      return { sd, baseline_sd: baselineSd, ratio, met: ratio <= g.max };
    };
    return { ...g, discovery: at('discovery'), confirmation: at('confirmation') };
  });
}
