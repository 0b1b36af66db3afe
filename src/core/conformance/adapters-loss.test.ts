import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lossAdapters } from './adapters-loss.js';
import { parseGoldenFile, runConformance } from './runner.js';

const here = dirname(fileURLToPath(import.meta.url));
const golden = parseGoldenFile(
  JSON.parse(readFileSync(join(here, '../../../test/golden/verl-core-algos.json'), 'utf8')),
  'test/golden/verl-core-algos.json',
);

describe('loss adapters vs verl golden vectors', () => {
  const mine = { ...golden, cases: golden.cases.filter((c) => c.fn in lossAdapters) };
  const result = runConformance(mine, lossAdapters);

  it('every golden case of the loss functions matches (or is a documented deviation)', () => {
    const bad = result.cases.filter((c) => c.status === 'mismatched').map((c) => `${c.name}: ${c.detail}`);
    expect(bad).toEqual([]);
    expect(result.unsupported).toBe(0);
  });

  it('covers every golden case of each adapted function', () => {
    for (const fn of Object.keys(lossAdapters)) {
      expect(
        golden.cases.some((c) => c.fn === fn),
        `golden file has cases for ${fn}`,
      ).toBe(true);
    }
    expect(result.matched + result.deviations).toBe(mine.cases.length);
    expect(result.matched).toBeGreaterThanOrEqual(144);
  });

  it('deviations carry a reason', () => {
    for (const c of result.cases.filter((r) => r.status === 'deviation')) expect(c.detail).toBeTruthy();
  });
});
