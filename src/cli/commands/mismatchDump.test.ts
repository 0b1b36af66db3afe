/**
 * `labs run --experiment mismatch --dump DIR` then `labs audit DIR/<arm> --preset prime-rl` (both
 * parsed and run in process): the audit of the run's own dump reports the mismatch the run logged,
 * step by step (k3_kl and mean |Δ|). The dump's log-probs pass through float32 (prime-rl's writer),
 * so the values agree to float32 precision, not bit for bit: relative 1e-5 allows it and still fails
 * for a misaligned or missing token. Also: --dump is refused with --seeds and for an experiment that
 * records no tokens.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LabError } from '../../core/errors.js';
import { parseCli } from '../parse.js';
import { output } from '../stdout.js';
import { auditCommand } from './audit.js';
import { runCommand } from './run.js';

afterEach(() => {
  vi.restoreAllMocks();
});

async function run(argv: string[]): Promise<string> {
  const p = parseCli(argv);
  let out = '';
  vi.spyOn(output, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  if (p.command === 'run') await runCommand(p);
  else if (p.command === 'audit') await auditCommand(p);
  else throw new Error(`unexpected command ${p.command}`);
  vi.restoreAllMocks();
  return out;
}

const SMALL = [
  'init=scratch',
  'updates=3',
  'tasks_per_update=2',
  'group_size=4',
  'eval_tasks=10',
  'arms=none,icepop',
  'engine_precision=fp8',
  'top_p=0.9',
  'dose_precisions=',
  'dose_top_p=',
  'dose_lags=',
].flatMap((s) => ['--set', s]);

const rel = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(b), 1e-12);

describe('labs run --experiment mismatch --dump, then labs audit --preset prime-rl', () => {
  it('the audit of the dump reports the k3 and mean |delta| the run logged, per step and arm', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'labs-mismatch-dump-'));
    const dump = join(tmp, 'dump');
    const argv = ['run', '-e', 'mismatch', '--seed', '5', ...SMALL, '--dump', dump];
    const record = JSON.parse(await run([...argv, '--out', join(tmp, 'out'), '--json', '--no-progress']));
    expect(readdirSync(dump).sort()).toEqual(['icepop', 'none']);
    for (const arm of ['none', 'icepop']) {
      expect(readdirSync(join(dump, arm, 'token_exports')).sort()).toEqual(['step_1', 'step_2', 'step_3']);
      const audit = JSON.parse(await run(['audit', join(dump, arm), '--preset', 'prime-rl', '--json']));
      const steps = audit.tables.mismatch_by_step as Record<string, number>[];
      expect(steps.map((s) => s.step)).toEqual([1, 2, 3]);
      const k3 = record.curves[`k3.${arm}`] as number[];
      const absDelta = record.curves[`mean_abs_delta.${arm}`] as number[];
      steps.forEach((s, i) => {
        expect(k3[i] as number, `${arm} step ${s.step}`).toBeGreaterThan(0);
        expect(
          rel(s['rollout_corr/k3_kl'] as number, k3[i] as number),
          `${arm} k3 step ${s.step}`,
        ).toBeLessThan(1e-5);
        expect(
          rel(s.mean_abs_delta as number, absDelta[i] as number),
          `${arm} |delta| ${s.step}`,
        ).toBeLessThan(1e-5);
      });
    }
  }, 120_000);

  it('refuses --dump with --sweep or --seeds, and for an experiment that records no tokens', async () => {
    const dump = join(mkdtempSync(join(tmpdir(), 'labs-mismatch-dump-')), 'd');
    await expect(
      run(['run', '-e', 'mismatch', '--seeds', '1..2', ...SMALL, '--dump', dump, '--jobs', '1']),
    ).rejects.toSatisfy(
      (e: unknown) => e instanceof LabError && e.code === 'BAD_CLI' && e.message.includes('--dump'),
    );
    await expect(run(['run', '-e', 'agent', '--dump', dump])).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof LabError && e.code === 'BAD_CLI' && e.message.includes('records no tokens'),
    );
  });
});
