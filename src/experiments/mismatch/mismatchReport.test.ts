/**
 * The printed conclusions and tables of `mismatch` from hand-made arm results: each sentence carries
 * the measured numbers of its source, says when a bin had no sampled token, and says when a source
 * was not measured; the arms row reports collapse with its update.
 */
import { describe, expect, it } from 'vitest';
import type { MismatchArm } from '../../train/mismatchCorrections.js';
import type { MismatchArmResult, MismatchUpdate } from '../../train/mismatchLearner.js';
import type { DoseSetting } from './mismatchDose.js';
import { armSummaryRow, binMeans, sourceConclusions } from './mismatchReport.js';

function update(k3: number, bins: number[]): MismatchUpdate {
  return {
    update: 1,
    staleness: 0,
    k3,
    chi2Token: 2 * k3,
    maxRatio: 1 + k3,
    meanAbsDelta: k3,
    binTokens: bins.map((b) => (Number.isNaN(b) ? 0 : 10)),
    binMeanAbsDelta: bins,
    ess: 1,
    maskedFraction: 0,
    gradNorm: 0.5,
    loss: 0.1,
    entropy: 0.4,
    trainSuccess: 0.5,
    evalSuccess: 0.6,
  };
}

function result(arm: MismatchArm, k3: number, bins: number[], finalEval: number): MismatchArmResult {
  return {
    arm,
    updates: [update(k3, bins), update(k3, bins)],
    collapse: null,
    finalEval,
    bestEval: finalEval,
    stopped: null,
  };
}

const exact: DoseSetting = {
  source: 'exact',
  dose: 'fp64, top_p 1, lag 0',
  precision: 'fp64',
  topP: 1,
  lag: 0,
};
const flat = [0, 0, 0, 0, 0];

describe('sourceConclusions', () => {
  it('states k3 per dose, |delta| by bin at the largest dose, and success of none vs the best correction', () => {
    const rows = [
      { setting: exact, arm: 'none' as const, r: result('none', 0, flat, 0.9) },
      {
        setting: { ...exact, source: 'precision' as const, dose: 'fp8', precision: 'fp8' as const },
        arm: 'none' as const,
        r: result('none', 0.0003, [0.04, 0.01, 0.005, 0.002, 0.0008], 0.8),
      },
      {
        setting: { ...exact, source: 'precision' as const, dose: 'fp8', precision: 'fp8' as const },
        arm: 'icepop' as const,
        r: result('icepop', 0.0003, flat, 0.85),
      },
      {
        setting: { ...exact, source: 'top_p' as const, dose: '0.9', topP: 0.9 },
        arm: 'none' as const,
        r: result('none', 0.001, [Number.NaN, 0.1, 0.1, 0.1, 0.05], 0.7),
      },
    ];
    const [precision, topP, lag] = sourceConclusions(rows, 'icepop');
    expect(precision).toBe(
      'precision: mean k3 over updates 0.00 (exact engine) -> 0.000300 (fp8); at fp8 mean |delta| 0.0400 on tokens with rollout p < 0.01 vs 0.000800 on tokens with p >= 0.9; held-out success none 0.800 vs icepop 0.850 (one seed).',
    );
    expect(topP).toContain('n/a (no sampled token with rollout p < 0.01)');
    expect(topP).toContain('held-out success none 0.700 (one seed)');
    expect(lag).toBe('lag: not measured in this run (no dose rows for it).');
  });
});

describe('armSummaryRow and binMeans', () => {
  it('reports the collapse update and reason, and token-weighted bin means (NaN for an empty bin)', () => {
    const r = result('geo', 0.01, [Number.NaN, 0.2, 0.1, 0.05, 0.01], 0.3);
    r.collapse = { update: 7, reason: 'success_drop' };
    const row = armSummaryRow(r);
    expect(row).toMatchObject({
      arm: 'geo',
      collapsed: 1,
      collapse_update: 7,
      collapse_reason: 'success_drop',
    });
    expect(row.k3_end).toBe(0.01);
    const bins = binMeans(r);
    expect(Number.isNaN(bins[0])).toBe(true);
    expect(bins.slice(1)).toEqual([0.2, 0.1, 0.05, 0.01]);
  });
});
