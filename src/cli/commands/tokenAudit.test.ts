/**
 * `labs audit DIR --preset nemo-rl|prime-rl --what-if ... --json --html FILE` from the command line
 * (parsed and run in process): the JSON record carries the golden sample's values, the page is
 * written with the dump in its title and a rerun line, and token-only flags are usage errors
 * elsewhere.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LabError } from '../../core/errors.js';
import { exitCodeFor } from '../errorOutput.js';
import { parseCli } from '../parse.js';
import { output } from '../stdout.js';
import { auditCommand } from './audit.js';

const golden = fileURLToPath(new URL('../../../test/golden/mismatch-sample/', import.meta.url));
const expected = JSON.parse(readFileSync(`${golden}expected.json`, 'utf8'));
const WHAT_IFS = [
  ['is_token', 'rollout_is=token,rollout_is_threshold=2.0'],
  ['rs_token_k1', 'rollout_rs=token_k1,rollout_rs_threshold=0.5_2.0'],
  ['rs_seq_mean_k3', 'rollout_rs=seq_mean_k3,rollout_rs_threshold=0.002'],
  ['is_sequence', 'rollout_is=sequence,rollout_is_threshold=2.0'],
] as const;

afterEach(() => {
  vi.restoreAllMocks();
});

async function run(argv: string[]): Promise<string> {
  const p = parseCli(argv);
  if (p.command !== 'audit') throw new Error('expected audit');
  let out = '';
  vi.spyOn(output, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  await auditCommand(p);
  return out;
}

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-300);

describe('labs audit --preset nemo-rl / prime-rl (CLI)', () => {
  for (const layout of ['nemo-rl', 'prime-rl']) {
    it(`${layout}: --json reproduces the golden overall values and the four what-if rows`, async () => {
      const html = join(mkdtempSync(join(tmpdir(), 'labs-page-')), 'audit.html');
      const argv = ['audit', `${golden}${layout}`, '--preset', layout, '--json', '--html', html];
      for (const [, w] of WHAT_IFS) argv.push('--what-if', w);
      const record = JSON.parse(await run(argv));
      for (const [k, v] of Object.entries(expected.overall.float64.offpolicy as Record<string, number>))
        expect(rel(record.metrics[`rollout_corr/${k}`], v), k).toBeLessThan(1e-9);
      for (const [i, [name, spec]] of WHAT_IFS.entries()) {
        const row = record.tables.corrections[i];
        expect(row.what_if).toBe(spec);
        for (const [k, v] of Object.entries(expected.overall.float64[name].metrics as Record<string, number>))
          expect(v === 0 ? Math.abs(row[k]) : rel(row[k], v), `${name} ${k}`).toBeLessThan(1e-9);
      }
      expect(record.tables.mismatch_by_step.map((r: { step: number }) => r.step)).toEqual([1, 2]);
      const page = readFileSync(html, 'utf8');
      expect(page).toContain(`<title>audit — dump ${golden}${layout}</title>`);
      expect(page).toMatch(
        /rerun: <code class="rerun">labs audit \S+ --preset \S+ --what-if rollout_is=token,rollout_is_threshold=2.0/,
      );
    }, 60_000);
  }

  it('the terminal summary says where the gap sits and what each correction masks', async () => {
    const text = await run([
      'audit',
      `${golden}nemo-rl`,
      '--preset',
      'nemo-rl',
      '--what-if',
      'rollout_rs=token_k1,rollout_rs_threshold=0.5_2.0',
    ]);
    expect(text).toMatch(/drift: k3 KL fell from 0\.6 \(step 1\) to 3\.49e-4 \(step 2\)/);
    expect(text).toMatch(/where the gap sits: mean \|Δ\| is largest for rollout probability in \[0, 0\.01\)/);
    expect(text).toMatch(/rollout_rs=token_k1,rollout_rs_threshold=0\.5_2\.0\s+0\.0890%\s+1/);
    expect(text).toMatch(/note: sequence-level IS: longest sequence × mean token KL/);
  }, 60_000);

  it('token-only flags on a reward preset, and a bad --what-if, are usage errors (exit 2)', () => {
    const code = (argv: string[]) => {
      try {
        parseCli(argv);
      } catch (e) {
        return [(e as LabError).code, exitCodeFor(e)];
      }
      return ['none', 0];
    };
    expect(code(['audit', 'd/', '--preset', 'verl', '--what-if', 'rollout_is=token'])).toEqual([
      'BAD_CLI',
      2,
    ]);
    expect(code(['audit', 'd/', '--preset', 'nemo-rl', '--loss-mask', 'm'])).toEqual(['BAD_CLI', 2]);
    expect(code(['audit', 'd/', '--preset', 'nemo-rl', '--prob-bins', '0,x'])).toEqual(['BAD_CLI', 2]);
  });
});
