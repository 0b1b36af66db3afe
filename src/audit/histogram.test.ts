import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DuckSession, openDuckSession } from './duckdb.js';
import { lengthByCorrectness, rewardDistribution } from './histogram.js';

let db: DuckSession;
beforeAll(async () => {
  db = await openDuckSession();
});
afterAll(() => db.close());

/** Loads rows as `audit_rows_raw` and their histogram as `audit_hist`, as the reader builds it. */
async function load(rows: readonly { reward: number; length: number | null }[]) {
  const values = rows.map((r) => `(${r.reward}::DOUBLE, ${r.length === null ? 'NULL' : r.length}::DOUBLE)`);
  await db.exec(
    `CREATE OR REPLACE TEMP TABLE audit_rows_raw AS SELECT * FROM (VALUES ${values.join(', ')}) t(reward, length)`,
  );
  await db.exec(
    'CREATE OR REPLACE TEMP TABLE audit_hist AS SELECT reward, length, count(*) AS n FROM audit_rows_raw GROUP BY reward, length',
  );
}

const row = (rewards: fc.Arbitrary<number>) =>
  fc.record({ reward: rewards, length: fc.option(fc.integer({ min: 0, max: 400 }), { freq: 8 }) });

describe('histogram: the row-level summaries from (reward, length) counts', () => {
  it("length by correctness equals count, avg and DuckDB's quantile_cont over the rows, bit for bit", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(row(fc.constantFrom(0, 0.5, 1, 2)), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 1),
        async (rows, pass) => {
          await load(rows);
          const got = await lengthByCorrectness(db, pass);
          const want = await db.all(`
            SELECT reward >= ${pass} AS correct, count(*) AS samples, avg(length) AS mean,
              quantile_cont(length, [0.5, 0.9]) AS q
            FROM audit_rows_raw WHERE length IS NOT NULL GROUP BY 1 ORDER BY correct DESC`);
          expect(got).toEqual(
            want.map((w) => ({
              correct: Boolean(w.correct),
              samples: Number(w.samples),
              mean: Number(w.mean),
              median: Number((w.q as number[])[0]),
              p90: Number((w.q as number[])[1]),
            })),
          );
        },
      ),
      { numRuns: 40, seed: 15 },
    );
  });

  it('the reward distribution: value counts up to 20 distinct rewards, else 10 equal-width bins', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.array(row(fc.integer({ min: 0, max: 15 }).map((k) => k / 4)), { minLength: 1, maxLength: 200 }),
          fc.array(row(fc.integer({ min: -500, max: 500 }).map((k) => k / 37)), {
            minLength: 1,
            maxLength: 200,
          }),
        ),
        async (rows) => {
          await load(rows);
          const got = await rewardDistribution(db);
          const rewards = rows.map((r) => r.reward);
          const distinct = [...new Set(rewards)].sort((a, b) => a - b);
          if (distinct.length <= 20) {
            expect(got).toEqual(
              distinct.map((v) => ({ value: v, samples: rewards.filter((r) => r === v).length })),
            );
          } else {
            const lo = distinct[0] as number;
            const width = ((distinct.at(-1) as number) - lo) / 10;
            const bins = new Map<number, number>();
            for (const r of rewards) {
              const b = Math.min(Math.floor((r - lo) / width), 9);
              bins.set(b, (bins.get(b) ?? 0) + 1);
            }
            expect(got).toEqual(
              [...bins.entries()]
                .sort((a, b) => a[0] - b[0])
                .map(([b, n]) => ({ bin_lo: lo + b * width, bin_hi: lo + (b + 1) * width, samples: n })),
            );
          }
        },
      ),
      { numRuns: 40, seed: 15 },
    );
  });
});
