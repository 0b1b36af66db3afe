import { describe, expect, it } from 'vitest';
import { agrees, compareWithLog, stepRanges } from './compare.js';
import { metricDefOf, nanstd, type RunSettings, SIGNATURES } from './definitions.js';
import type { DumpRow } from './dumpRows.js';
import type { ScalarLog } from './types.js';

const SETTINGS: RunSettings = { maxResponseLength: null, maxCompletionLength: null, scaleRewards: 'group' };

function rows(step: number, groups: number[][], tokens: number[] | null = null): DumpRow[] {
  const out: DumpRow[] = [];
  let i = 0;
  for (const [g, rewards] of groups.entries()) {
    for (const reward of rewards) {
      out.push({
        step,
        group: `${step}:${g}`,
        task: `t${g}`,
        reward,
        tokens: tokens ? (tokens[i] as number) : null,
        truncated: null,
        text: null,
        entropy: null,
      });
      i++;
    }
  }
  return out;
}

function log(values: [number, string, number][]): ScalarLog {
  return {
    files: ['x'],
    formats: ['tensorboard'],
    rows: values.map(([step, metric, value]) => ({ step, metric, value })),
    notes: [],
  };
}

describe('metric definitions', () => {
  it('matches the frameworks’ names, with the Trainer prefix and prime-rl paths', () => {
    expect(metricDefOf('train/frac_reward_zero_std')?.name).toBe('frac_reward_zero_std');
    expect(metricDefOf('critic/score/mean')?.framework).toBe('verl');
    expect(metricDefOf('train/agg/all/agent/solved_all')?.name).toBe('solved_all');
    expect(metricDefOf('solve_none')?.name).toBe('solved_none');
    expect(metricDefOf('critic/score/max')).toBeNull();
    expect(metricDefOf('actor/entropy')).toBeNull();
  });

  it('TRL: reward_std is Bessel-corrected; frac_reward_zero_std per group, or batch-level with its signature', () => {
    expect(nanstd([0, 1])).toBeCloseTo(Math.SQRT1_2, 15);
    expect(nanstd([1, Number.NaN, 3])).toBeCloseTo(Math.SQRT2, 15);
    const r = rows(1, [
      [1, 1],
      [0, 1],
      [0, 0],
    ]);
    const def = metricDefOf('frac_reward_zero_std');
    expect(def?.compute(r, SETTINGS).value).toBeCloseTo(4 / 6, 15);
    const batch = def?.compute(r, { ...SETTINGS, scaleRewards: 'batch' });
    expect(batch?.value).toBe(0);
    expect(batch?.caveat).toContain('batch-level');
    // A log that is batch-level under scale_rewards="group": the disagreement names the signature.
    const cmp = compareWithLog(log([[1, 'frac_reward_zero_std', 0]]), r, SETTINGS);
    expect(cmp.rows[0]).toMatchObject({ agrees: false, signature: SIGNATURES.trlBatchZeroStd });
    // A wrong log that matches no known bug has no signature.
    const other = compareWithLog(log([[1, 'frac_reward_zero_std', 0.5]]), r, SETTINGS);
    expect(other.rows[0]).toMatchObject({ agrees: false, signature: null });
  });

  it('prime-rl: solve rates per group; non-binary rewards carry the #3566 signature even when they agree', () => {
    const binary = rows(1, [
      [1, 1],
      [0, 0],
      [1, 0],
      [1, 0],
    ]);
    expect(metricDefOf('solved_all')?.compute(binary, SETTINGS)).toEqual({ value: 0.25 });
    expect(metricDefOf('solved_none')?.compute(binary, SETTINGS)).toEqual({ value: 0.25 });
    const graded = rows(1, [
      [0.9, 1],
      [-1, 1],
    ]);
    const cmp = compareWithLog(log([[1, 'solve_none', 0.5]]), graded, SETTINGS);
    expect(cmp.rows[0]).toMatchObject({
      recomputed: 0.5,
      agrees: true,
      signature: SIGNATURES.primeNonBinary,
    });
  });

  it('clip ratio: from token lengths and the setting, or not recomputable with the reason', () => {
    const r = rows(1, [[1, 0, 1, 0]], [8, 8, 3, 2]);
    const def = metricDefOf('response_length/clip_ratio');
    expect(def?.compute(r, { ...SETTINGS, maxResponseLength: 8 }).value).toBe(0.5);
    expect(def?.compute(r, SETTINGS).why).toContain('--max-response-length');
    expect(def?.compute(rows(1, [[1]]), SETTINGS).why).toContain('no token lengths');
    // A clip ratio constant 1 while the dump says otherwise: the signature; a one-step log is not "constant".
    const many = [...r, ...rows(2, [[1, 0]], [3, 3])];
    const cmp = compareWithLog(
      log([
        [1, 'completions/clipped_ratio', 1],
        [2, 'completions/clipped_ratio', 1],
      ]),
      many,
      { ...SETTINGS, maxCompletionLength: 8 },
    );
    expect(cmp.rows.map((x) => x.signature === SIGNATURES.clipConstant)).toEqual([true, true]);
    const one = compareWithLog(log([[1, 'completions/clipped_ratio', 1]]), r, {
      ...SETTINGS,
      maxCompletionLength: 8,
    });
    expect(one.rows[0]?.signature).toBeNull();
  });

  it('agreement tolerance admits float32 rounding and refuses one sample in 1000', () => {
    expect(agrees(Math.fround(0.175), 0.175)).toBe(true);
    expect(agrees(Math.fround(1234.567), 1234.567)).toBe(true);
    expect(agrees(0.5, 0.501)).toBe(false);
    expect(stepRanges([5, 1, 2, 3, 9, 10])).toBe('1-3, 5, 9-10');
  });

  it('names log steps missing from the dump and dump steps missing from the log', () => {
    const r = [...rows(1, [[1, 0]]), ...rows(2, [[1, 1]])];
    const cmp = compareWithLog(
      log([
        [2, 'reward', 1],
        [7, 'reward', 0.5],
        [1, 'weird/name', 3],
      ]),
      r,
      SETTINGS,
    );
    expect(cmp.notes).toEqual([
      "'reward' is not logged at dump step(s) 1",
      'log step(s) not in the dump: 7',
      'dump step(s) not in the log: 1',
    ]);
    expect(cmp.unmatched).toEqual([{ metric: 'weird/name', steps: 1 }]);
    expect(cmp.rows.map((x) => [x.step, x.logged, x.agrees])).toEqual([
      [1, null, null],
      [2, 1, true],
    ]);
  });
});
