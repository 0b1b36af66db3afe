import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runSeeds } from '../../experiments/multiSeed.js';
import { resolveConfig } from '../../experiments/options.js';
import { truncation } from '../../experiments/truncation/truncation.js';
import { writeRecord } from '../../report/records.js';
import { output } from '../stdout.js';
import { compareCommand } from './compare.js';

describe('labs compare', () => {
  it('prints the paired differences of two --seeds records and draws them with --html', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-compare-'));
    const sets = ['updates=10', 'eval_tasks=20', 'tasks_per_update=4'];
    const paths: string[] = [];
    for (const budget of [24, 30]) {
      const config = resolveConfig(truncation, [...sets, `budget=${budget}`]);
      const rec = await runSeeds(truncation, config, [1, 2, 3]);
      paths.push(await writeRecord(rec, { dir: join(dir, String(budget)) }));
    }
    const out: string[] = [];
    const write = vi.spyOn(output, 'write').mockImplementation((s) => {
      out.push(String(s));
      return true;
    });
    const html = join(dir, 'c.html');
    try {
      const code = await compareCommand({
        command: 'compare',
        a: paths[0] as string,
        b: paths[1] as string,
        metrics: [],
        pairs: [],
        json: false,
        html,
        debug: false,
      });
      expect(code).toBe(0);
    } finally {
      write.mockRestore();
    }
    const text = out.join('');
    expect(text).toContain('B = budget=30');
    expect(text).toContain('options that differ: budget: 24 -> 30');
    expect(text).toContain('verify_rate.drop');
    // verify_rate of drop and mask is 0.05 in every seed of both: listed, not tested (Holm over 14, not 16).
    expect(text).toContain('Holm across these 14 comparisons');
    const constants =
      'the same in every seed of both records (not compared, not plotted): verify_rate.drop = 0.05, verify_rate.mask = 0.05';
    expect(text).toContain(constants);
    const page = await readFile(html, 'utf8');
    expect(page).toContain('data-family="comparison.verify_rate"');
    expect(page).toContain('Paired differences');
    expect(page).toContain(constants);
  });

  it('calls an audit record an audit record, not "single-seed (seed 0)"', async () => {
    const audit = new URL('../../../docs/records/audit-generic-example.json', import.meta.url).pathname;
    const err = await compareCommand({
      command: 'compare',
      a: audit,
      b: audit,
      metrics: [],
      pairs: [],
      json: false,
      html: null,
      debug: false,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BAD_CLI' });
    const message = (err as Error).message;
    expect(message).toContain('is an audit record (labs audit of examples/generic-rollouts.jsonl)');
    expect(message).not.toContain('seed 0');
  });

  it('says what it can compare when given a sweep record', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'labs-compare-'));
    const path = join(dir, 'sweep.json');
    const sweep = { experiment: 'truncation', sweep: { key: 'budget', values: [24, 30] }, seeds: [1, 2] };
    await writeFile(path, JSON.stringify({ ...sweep, points: [], dose_response: [], config: {} }));
    const err = await compareCommand({
      command: 'compare',
      a: path,
      b: path,
      metrics: [],
      pairs: [],
      json: false,
      html: null,
      debug: false,
    }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'BAD_CLI' });
    expect((err as Error).message).toContain(
      `${path} is a sweep record (truncation, budget = 24, 30); labs compare pairs two --seeds records`,
    );
    expect((err as Error).message).not.toContain('metrics');
  });
});
