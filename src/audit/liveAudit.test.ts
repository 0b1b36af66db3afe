/**
 * The live record of `--watch --html` (liveAudit.ts): built from the files audited one by one, its
 * step table and the metrics it carries equal the one-shot audit of the whole directory, and a file
 * that is re-read (it grew) replaces its earlier rows instead of adding to them.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runAudit } from './audit.js';
import { LiveAudit } from './liveAudit.js';

function stepLines(step: number, n = 6): string {
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify({
        input: `q${i % 3}`,
        output: 'y'.repeat(5 + step + i),
        gts: 'a',
        score: step === 2 ? (i % 3 === 0 ? 1 : 0) : (i * step) % 4 === 0 ? 1 : 0.25 * (i % 3),
        step,
      }),
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('LiveAudit', () => {
  it('adds the per-file step rows up to the one-shot step table and run metrics', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-live-'));
    const sub = join(dir, 'dump');
    await mkdir(sub);
    const live = new LiveAudit();
    for (const step of [1, 2, 3, 4]) {
      const file = join(sub, `${step}.jsonl`);
      // step 3 is first seen half-written, then grown: its second read must replace the first
      if (step === 3) {
        await writeFile(file, stepLines(step, 3));
        live.addFile(file, (await runAudit(file, { preset: 'verl' })).tables.steps ?? []);
      }
      await writeFile(file, stepLines(step));
      live.addFile(file, (await runAudit(file, { preset: 'verl' })).tables.steps ?? []);
    }
    const once = await runAudit(sub, { preset: 'verl' });
    const rec = live.record(sub, 'verl', 0);
    expect(rec.config.live).toBe(true);
    expect(rec.tables.steps?.length).toBe(4);
    const close = (a: unknown, b: unknown) =>
      typeof a === 'number' && typeof b === 'number' ? Math.abs(a - b) <= 1e-12 : a === b;
    for (const [i, row] of (rec.tables.steps ?? []).entries()) {
      const want = once.tables.steps?.[i] as Record<string, unknown>;
      for (const [k, v] of Object.entries(row)) expect(close(v, want[k]), `step row ${i} ${k}`).toBe(true);
    }
    for (const [k, v] of Object.entries(rec.metrics)) {
      expect(close(v, once.metrics[k]), `metric ${k}: ${v} vs ${once.metrics[k]}`).toBe(true);
    }
    // a step whose groups are not all zero-variance, so the check above is not vacuous
    expect(rec.metrics.zero_variance_group_fraction).toBeGreaterThan(0);
    expect(rec.metrics.zero_variance_group_fraction).toBeLessThan(1);
    expect(rec.metrics.rows).toBe(24);
    expect(rec.curves['zero_variance.total']).toEqual(once.curves['zero_variance.total']);
    expect(rec.notes?.[0]).toContain('LIVE page');
  }, 60_000);
});
