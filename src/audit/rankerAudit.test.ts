import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LabError } from '../core/errors.js';
import type { JsonValue } from '../experiments/types.js';
import { runAudit } from './audit.js';

const example = fileURLToPath(new URL('../../examples/ranker-rollouts.jsonl', import.meta.url));
const rank = { quality: 'quality', independent: 'independent' };

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'labs-ranker-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('labs audit --quality --independent (the ranker audit)', () => {
  it('reports the correlations of examples/ranker-rollouts.jsonl as computed by hand', async () => {
    // All-right groups: s1-a (q ranks [4,2,3,1], r ranks [3,2,4,1]: rho 0.8, tau 4/6),
    // s1-b (q all tied: counted, not correlated), s2-a (reversed: -1, -1),
    // s2-c (q [3,1,2,2], r [2,1,3,3]: rho 1.5/4.5, tau-b 1/5). Pooled within groups:
    // rho = (4 - 5 + 1.5) / (5 + 5 + 4.5) = 0.5/14.5; tau-b = (4 - 6 + 1) / (6 + 6 + 5) = -1/17.
    const rec = await runAudit(example, { preset: 'generic', rankColumns: rank });
    expect(rec.metrics).toMatchObject({
      ranker_all_right_groups: 4,
      ranker_groups_turned_into_gradient: 3,
      ranker_groups_quality_tied: 1,
      ranker_groups_correlated: 3,
      ranker_negative_correlation: true,
    });
    expect(rec.metrics.ranker_spearman as number).toBeCloseTo(0.5 / 14.5, 12);
    expect(rec.metrics.ranker_kendall_tau_b as number).toBeCloseTo(-1 / 17, 12);
    const steps = rec.tables.ranker_per_step as Record<string, JsonValue>[];
    expect(steps.map((s) => [s.step, s.groups_correlated])).toEqual([
      [1, 1],
      [2, 2],
    ]);
    expect(steps[0]?.spearman as number).toBeCloseTo(0.8, 12);
    expect(steps[0]?.kendall_tau_b as number).toBeCloseTo(4 / 6, 12);
    expect(steps[1]?.spearman as number).toBeCloseTo((-5 + 1.5) / 9.5, 12);
    expect(steps[1]?.kendall_tau_b as number).toBeCloseTo(-5 / 11, 12);
    const tasks = Object.fromEntries(
      (rec.tables.ranker_per_task as Record<string, JsonValue>[]).map((t) => [t.task, t]),
    );
    expect(tasks['prove lemma A']?.spearman as number).toBeCloseTo(-0.1, 12);
    expect(tasks['prove lemma A']?.kendall_tau_b as number).toBeCloseTo(-2 / 12, 12);
    expect(tasks['sort list B']).toMatchObject({
      groups_quality_tied: 1,
      spearman: null,
      kendall_tau_b: null,
    });
    expect(tasks['parse log C']?.kendall_tau_b as number).toBeCloseTo(0.2, 12);
    expect(rec.notes?.some((n) => n.includes('negative rank correlation'))).toBe(true);
    // the quality and independent columns never become reward columns or change the other numbers
    const plain = await runAudit(example, { preset: 'generic' });
    expect(plain.metrics.groups).toBe(rec.metrics.groups);
    expect(plain.metrics.ranker_spearman).toBeUndefined();
  });

  it('a non-numeric or missing quality names file and line; --skip-bad-rows skips and counts', async () => {
    const file = join(dir, 'bad-quality.jsonl');
    const row = (reward: number, quality: unknown, independent: unknown) =>
      JSON.stringify({ step: 1, group: 'g', task: 't', reward, quality, independent });
    await writeFile(
      file,
      [
        row(1, 0.2, 0.1),
        '',
        row(1, 'high', 0.3),
        row(1, 0.5, 0.9),
        JSON.stringify({ step: 1, group: 'g', task: 't', reward: 1, quality: 0.9 }),
        '',
      ].join('\n'),
    );
    const e = await runAudit(file, { rankColumns: rank }).catch((x: unknown) => x as LabError);
    expect(e).toBeInstanceOf(LabError);
    expect((e as LabError).message).toMatch(
      /bad-quality\.jsonl line 3: quality is not a finite number: high \(2 bad rows in all\)/,
    );
    const rec = await runAudit(file, { rankColumns: rank, skipBadRows: true });
    expect(rec.metrics).toMatchObject({ rows: 2, bad_rows_skipped: 2, ranker_all_right_groups: 1 });
    expect((rec.tables.bad_rows as Record<string, JsonValue>[]).map((b) => [b.line, b.problem])).toEqual([
      [3, 'quality is not a finite number: high'],
      [5, 'missing independent (field "independent")'],
    ]);
    // the two good rows: q [0.2, 0.5], r [0.1, 0.9]: both rise, +1
    expect(rec.metrics.ranker_kendall_tau_b).toBe(1);
  });

  it('a quality column absent from every row is a missing-column error naming it', async () => {
    const e = await runAudit(example, { rankColumns: { quality: 'nope', independent: 'independent' } }).catch(
      (x: unknown) => x as LabError,
    );
    expect((e as LabError).code).toBe('MISSING_COLUMN');
    expect((e as LabError).message).toMatch(/column 'nope' \(--quality\) is missing in every row/);
  });
});
