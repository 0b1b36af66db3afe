import { describe, expect, it } from 'vitest';
import type { Comparison } from '../experiments/types.js';
import { comparisonPlotSpecs } from './comparisonPlots.js';

const cmp = (arm: string, metric: string, diff: number): Comparison => ({
  arm,
  baseline: 'base',
  metric,
  n: 10,
  diff,
  ci95: [diff - 0.1, diff + 0.1],
  ci_method: 'bca',
  p: 0.01,
  p_method: 'exact',
  p_holm: 0.04,
  mde80: 0.05,
});

describe('comparisonPlotSpecs', () => {
  it('draws one bar plot per metric, a bar per arm with its CI as whiskers', () => {
    const specs = comparisonPlotSpecs([
      cmp('x', 'success', 0.2),
      cmp('y', 'success', -0.1),
      cmp('x', 'len', 3),
    ]);
    expect(specs.map((s) => s.family)).toEqual(['comparison.success', 'comparison.len']);
    const s = specs[0]!;
    expect(s.kind).toBe('bar');
    expect(s.band).toBe(true);
    expect(s.points).toEqual([
      { x: 'x', y: 0.2, series: 'success: arm − base', lo: 0.2 - 0.1, hi: 0.2 + 0.1 },
      { x: 'y', y: -0.1, series: 'success: arm − base', lo: -0.1 - 0.1, hi: -0.1 + 0.1 },
    ]);
    expect(s.notes.join(' ')).toContain('x: p 0.01, Holm p 0.04, mde80 0.05');
    expect(comparisonPlotSpecs([])).toEqual([]);
  });
});
