import { describe, expect, it } from 'vitest';
import type { ArmResult } from '../train/tokenMeasures.js';
import { armTable, pairedDifferences, trajectoryAccounting } from './armReport.js';

describe('trajectoryAccounting', () => {
  it("lists every arm's last-group rows in arm order, tagged with the arm", () => {
    const arm = (name: string, lastGroup: Record<string, number | string>[]) =>
      ({ spec: { arm: name }, lastGroup }) as unknown as ArmResult;
    const rows = trajectoryAccounting([
      arm('correct', [
        { trajectory: 0, score: 1 },
        { trajectory: 1, score: 0 },
      ]),
      arm('empty', []),
      arm('flipped', [{ trajectory: 0, score: 0.5 }]),
    ]);
    expect(rows).toEqual([
      { arm: 'correct', trajectory: 0, score: 1 },
      { arm: 'correct', trajectory: 1, score: 0 },
      { arm: 'flipped', trajectory: 0, score: 0.5 },
    ]);
    expect(Object.keys(rows[0] ?? {})[0]).toBe('arm'); // the arm column comes first in the table
  });
});

describe('metric keys: <metric>.<arm>', () => {
  it('armTable flattens every numeric cell as <column>.<arm>', () => {
    const arm = (name: string) => ({ spec: { arm: name } }) as unknown as ArmResult;
    const { arms, metrics } = armTable([arm('a'), arm('b')], (r) => ({
      arm: r.spec.arm,
      eval_success: r.spec.arm === 'a' ? 0.5 : 0.75,
    }));
    expect(arms).toHaveLength(2);
    expect(metrics).toEqual({ 'eval_success.a': 0.5, 'eval_success.b': 0.75 });
  });

  it('pairedDifferences names <measure>.<arm>_minus_<baseline> and leaves out non-finite differences', () => {
    const rows = [
      { arm: 'zero_score', eval_success: 0.5, length: 10 },
      { arm: 'drop', eval_success: 0.75, length: Number.NaN },
    ];
    expect(pairedDifferences(rows, 'zero_score', ['eval_success', 'length'])).toEqual({
      'eval_success.drop_minus_zero_score': 0.25,
    });
  });
});
