import { describe, expect, it } from 'vitest';
import type { SweepRecord } from '../../experiments/sweep.js';
import { sweepConstants, sweepPlotSpecs } from '../sweepPlots.js';
import { formatSweep } from './sweep.js';

const rec: SweepRecord = {
  experiment: 'truncation',
  sweep: { key: 'budget', values: [24, 27] },
  seeds: [1, 2, 3],
  version: '0.1.0',
  config: {},
  baseline: 'zero_score',
  points: [],
  dose_response: [
    {
      metric: 'verify_rate',
      arm: 'zero_score',
      value: 24,
      mean: 0.5,
      ci95: [0.4, 0.6],
      interval: 'bootstrap-percentile',
      n: 3,
    },
    {
      metric: 'verify_rate',
      arm: 'drop',
      value: 24,
      mean: 0.8,
      ci95: [0.7, 0.9],
      interval: 'bootstrap-percentile',
      n: 3,
      diff: 0.3,
      diff_ci95: [0.2, 0.4],
      p_holm: 0.25,
    },
    {
      metric: 'verify_rate',
      arm: 'zero_score',
      value: 27,
      mean: 0.9,
      ci95: [0.85, 0.95],
      interval: 'bootstrap-percentile',
      n: 3,
    },
  ],
  timing: { wall_ms: 1000 },
};

describe('sweep summaries', () => {
  it('prints one dose-response row per value and the paired differences, with the interval named', () => {
    const text = formatSweep(rec);
    expect(text).toContain('sweep budget = 24, 27  seeds 1..3');
    expect(text).toContain('percentile bootstrap over seeds (a rate: stays in [0, 1])');
    const lines = text.split('\n');
    const at24 = lines.find((l) => l.startsWith('24  ') && l.includes('[0.4, 0.6]')) ?? '';
    expect(at24.split(/\s{2,}/)).toEqual(['24', '0.5 [0.4, 0.6]', '0.8 [0.7, 0.9]']);
    expect(lines.find((l) => l.startsWith('27  ') && l.includes('0.9'))?.split(/\s{2,}/)).toEqual([
      '27',
      '0.9 [0.85, 0.95]',
      '-',
    ]);
    expect(text).toContain('0.3 [0.2, 0.4] p_holm 0.25');
  });

  it('plots the metric against the value, one line per arm with bands, and the differences', () => {
    const specs = sweepPlotSpecs(rec);
    expect(specs.map((s) => s.family)).toEqual(['sweep.verify_rate', 'sweep_diff.verify_rate']);
    expect(specs[0]?.series).toEqual(['zero_score', 'drop']);
    expect(specs[0]?.points[0]).toEqual({ x: 24, y: 0.5, series: 'zero_score', lo: 0.4, hi: 0.6 });
    expect(specs[1]?.points).toEqual([{ x: 24, y: 0.3, series: 'drop − zero_score', lo: 0.2, hi: 0.4 }]);
  });

  it('leaves a metric constant at every value and seed out of the plots and lists it', () => {
    const flat = (value: number) => ({
      metric: 'eval_tasks',
      arm: '',
      value,
      mean: 400,
      ci95: [400, 400] as [number, number],
      interval: 't' as const,
      n: 3,
    });
    const withConstant: SweepRecord = {
      ...rec,
      baseline: null,
      dose_response: [...rec.dose_response.map((r) => ({ ...r, arm: '' })), flat(24), flat(27)],
    };
    expect(sweepPlotSpecs(withConstant).map((s) => s.family)).toEqual(['sweep.verify_rate']);
    expect(sweepConstants(withConstant)).toEqual([{ metric: 'eval_tasks', value: 400 }]);
    expect(sweepConstants(rec)).toEqual([]);
  });
});
