// `labs report` through the real binary: files written, lines printed, one-line errors for bad records.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toJson } from '../../src/report/records.js';
import { agentLikeMultiSeed } from './syntheticRecords.js';

const OUT = resolve('test-output/report-cli');

function labs(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('labs report', () => {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });

  it('renders a --seeds record to HTML and PNGs and lists them', () => {
    const record = join(OUT, 'seeds.json');
    writeFileSync(record, toJson(agentLikeMultiSeed([1, 2, 3])));
    const html = join(OUT, 'seeds.html');
    const r = labs('report', record, '--html', html, '--png', join(OUT, 'png'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toBe(
      `report: ${html} (4 plots: group_kind, success, lag, zero_advantage)`,
    );
    expect(readdirSync(join(OUT, 'png'))).toEqual([
      '01-group_kind.png',
      '02-success.png',
      '03-lag.png',
      '04-zero_advantage.png',
    ]);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain('agent — 3 seeds (1, 2, 3)');
    expect(page).not.toContain('<script');
  });

  it('fails with one line naming the file for malformed JSON and for a bad curve', () => {
    const broken = join(OUT, 'broken.json');
    writeFileSync(broken, '{"experiment": "agent", ');
    const r = labs('report', broken, '--html', join(OUT, 'x.html'));
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(
      new RegExp(`^labs: error \\[BAD_RECORD\\]: ${broken.replace(/[.]/g, '\\.')}: not valid JSON`),
    );

    const badCurve = join(OUT, 'bad-curve.json');
    writeFileSync(
      badCurve,
      JSON.stringify({ experiment: 'agent', seed: 1, metrics: {}, curves: { update: [0], 'a.b': ['x'] } }),
    );
    const r2 = labs('report', badCurve, '--html', join(OUT, 'y.html'));
    expect(r2.code).toBe(1);
    expect(r2.stderr.trim()).toBe(
      `labs: error [BAD_RECORD]: ${badCurve}: curves.a.b[0] is "x" (expected a number)`,
    );
  });
});
