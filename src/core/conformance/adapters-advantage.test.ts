import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { advantageAdapters, matrix, nested } from './adapters-advantage.js';
import { parseGoldenFile, runConformance } from './runner.js';

const here = dirname(fileURLToPath(import.meta.url));
const golden = parseGoldenFile(
  JSON.parse(readFileSync(join(here, '../../../test/golden/verl-core-algos.json'), 'utf8')),
  'test/golden/verl-core-algos.json',
);

describe('advantage adapters vs verl golden vectors', () => {
  const mine = { ...golden, cases: golden.cases.filter((c) => c.fn in advantageAdapters) };
  const result = runConformance(mine, advantageAdapters);

  it('zero mismatches over every golden case of the adapted functions', () => {
    const bad = result.cases.filter((c) => c.status === 'mismatched').map((c) => `${c.name}: ${c.detail}`);
    expect(bad).toEqual([]);
    expect(result.unsupported).toBe(0);
    expect(result.matched + result.deviations).toBe(mine.cases.length);
    expect(mine.cases.length).toBe(52);
  });

  it('every adapted function has golden cases (no adapter is tested by nothing)', () => {
    for (const fn of Object.keys(advantageAdapters)) {
      expect(
        golden.cases.some((c) => c.fn === fn),
        `golden cases for ${fn}`,
      ).toBe(true);
    }
  });

  it('the comparison is not vacuous: a perturbed GRPO output is reported as a mismatch', () => {
    const grpo = advantageAdapters.compute_grpo_outcome_advantage;
    if (!grpo) throw new Error('missing adapter');
    const perturbed = {
      compute_grpo_outcome_advantage: {
        run: (i: Record<string, unknown>, c: Record<string, unknown>, gc: (typeof mine.cases)[number]) => {
          const out = grpo.run(i, c, gc) as { advantages: number[][] };
          const row = out.advantages[6] ?? out.advantages[0];
          if (row) row[0] = (row[0] ?? 0) + 1e-3;
          return out;
        },
      },
    };
    const r = runConformance(
      { ...golden, cases: golden.cases.filter((c) => c.fn === 'compute_grpo_outcome_advantage') },
      perturbed,
    );
    expect(r.mismatched).toBe(r.cases.length);
  });

  it('matrix/nested round-trip a [2,3] list and read non-finite strings', () => {
    const m = matrix(
      [
        [1, 2, 3],
        [4, 'NaN', '-Infinity'],
      ],
      'x',
    );
    expect(m.shape).toEqual({ rows: 2, cols: 3 });
    expect(Number.isNaN(m.data[4])).toBe(true);
    expect(m.data[5]).toBe(Number.NEGATIVE_INFINITY);
    expect(nested(Float32Array.from([1, 2, 3, 4, 5, 6]), { rows: 2, cols: 3 })).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
  });
});
