import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LabError } from '../../core/errors.js';
import { exitCodeFor } from '../errorOutput.js';
import { parseCli } from '../parse.js';
import { output } from '../stdout.js';
import { auditCommand } from './audit.js';

const example = fileURLToPath(new URL('../../../examples/generic-rollouts.jsonl', import.meta.url));

function parseAudit(argv: string[]) {
  const p = parseCli(argv);
  if (p.command !== 'audit') throw new Error(`expected an audit command, got ${p.command}`);
  return p;
}

function cliCode(argv: string[]): string {
  try {
    parseCli(argv);
  } catch (e) {
    return (e as LabError).code;
  }
  return 'none';
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('labs audit (CLI)', () => {
  it('parses the thresholds and the memory limit, and rejects bad values', () => {
    const p = parseAudit([
      'audit',
      'd/',
      '--pass-value',
      '0.5',
      '--fail-value',
      '-1',
      '--memory-limit',
      '1GB',
    ]);
    expect([p.passValue, p.failValue, p.memoryLimit]).toEqual([0.5, -1, '1GB']);
    const defaults = parseAudit(['audit', 'd/']);
    expect([defaults.preset, defaults.passValue, defaults.failValue, defaults.memoryLimit]).toEqual([
      'generic',
      1,
      0,
      null,
    ]);
    expect(cliCode(['audit', 'd/', '--pass-value', 'high'])).toBe('BAD_CLI');
    expect(cliCode(['audit', 'd/', '--memory-limit', 'lots'])).toBe('BAD_CLI');
  });

  it('refuses a pass value that is not above the fail value (exit 2): groups would be misclassified', () => {
    // --pass-value 0 --fail-value 1 used to run and call every all-right group all_wrong; with
    // pass == fail an all-equal group at that value would be all_wrong while its samples count as correct
    for (const [pass, fail] of [
      ['0', '1'],
      ['0.5', '0.5'],
    ] as const) {
      const argv = ['audit', 'd/', '--pass-value', pass, '--fail-value', fail];
      expect(() => parseCli(argv)).toThrow(
        new RegExp(`^--pass-value ${pass} must be greater than --fail-value ${fail}`),
      );
      expect(cliCode(argv)).toBe('BAD_CLI');
      let err: unknown = null;
      try {
        parseCli(argv);
      } catch (e) {
        err = e;
      }
      expect(exitCodeFor(err)).toBe(2);
    }
    expect(parseAudit(['audit', 'd/', '--pass-value', '0.5', '--fail-value', '0.4']).passValue).toBe(0.5);
  });

  it('parses the TRL and zero-variance options, and rejects bad values naming the option', () => {
    const p = parseAudit([
      'audit',
      'd/',
      '--preset',
      'trl',
      '--group-size',
      '8',
      '--reward-weights',
      '1,0.5',
      '--scale-rewards',
      'none',
      '--zero-std-tol',
      '1e-6',
      '--quality',
      'q',
      '--independent',
      'r',
    ]);
    expect(p.auditExtra).toMatchObject({
      groupSize: 8,
      rewardWeights: [1, 0.5],
      scaleRewards: 'none',
      zeroStdTol: 1e-6,
      rankColumns: { quality: 'q', independent: 'r' },
    });
    expect(parseAudit(['audit', 'd/']).auditExtra).toMatchObject({ groupSize: null, zeroStdTol: null });
    for (const bad of [
      ['--zero-std-tol=-1', /--zero-std-tol expects a finite number >= 0/],
      ['--zero-std-tol=abc', /--zero-std-tol/],
      ['--group-size=1', /--group-size expects an integer >= 2/],
      ['--reward-weights=1,,2', /--reward-weights/],
      ['--scale-rewards=batchy', /scale-rewards/],
      ['--quality=q', /--independent is needed too/],
      ['--group-size=8', /--group-size applies to --preset trl/],
    ] as const) {
      expect(() => parseCli(['audit', 'd/', bad[0]])).toThrow(bad[1]);
      expect(cliCode(['audit', 'd/', bad[0]])).toBe('BAD_CLI');
    }
  });

  it('prints the record as JSON with --json', async () => {
    const out: string[] = [];
    vi.spyOn(output, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    const code = await auditCommand(parseAudit(['audit', example, '--json']));
    expect(code).toBe(0);
    const rec = JSON.parse(out.join('')) as { experiment: string; metrics: Record<string, unknown> };
    expect(rec.experiment).toBe('audit');
    // 61 rows in 16 groups (examples/README.md); the denominators need the token columns
    expect(rec.metrics.rows).toBe(61);
    expect(rec.metrics.groups).toBe(16);
    expect(Object.keys(rec.metrics.denominators as object)).toEqual([
      'token-mean',
      'seq-mean-token-sum',
      'seq-mean-token-mean',
      'seq-mean-token-sum-norm',
    ]);
  });

  it('an --out that cannot be written is refused before the audit runs, and nothing is created', async () => {
    const { mkdtemp, writeFile, rm, readdir } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const root = await mkdtemp(join(tmpdir(), 'labs-audit-out-'));
    try {
      const file = join(root, 'a-file');
      await writeFile(file, 'x');
      // the dump does not exist: an error about it would mean the audit ran before the check
      for (const out of [join(file, 'sub', 'dir'), file]) {
        const e = await auditCommand(parseAudit(['audit', '/nonexistent/dump', '--out', out])).then(
          () => null,
          (err: LabError) => err,
        );
        expect(e?.code).toBe('BAD_CLI');
        expect(e?.message).toMatch(/^--out .*nothing was run$/);
      }
      expect(await readdir(root)).toEqual(['a-file']);
      // a writable place passes the check (and then the missing dump is the error)
      await expect(
        auditCommand(parseAudit(['audit', '/nonexistent/dump', '--out', join(root, 'new', 'dir')])),
      ).rejects.toThrow(/\/nonexistent\/dump: cannot read/);
      expect(await readdir(root)).toEqual(['a-file']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a --reward-weights count that does not match the reward columns is a usage error (exit 2)', async () => {
    const e = await auditCommand(parseAudit(['audit', example, '--reward-weights', '1,2'])).then(
      () => null,
      (err: LabError) => err,
    );
    expect(e?.code).toBe('BAD_CLI');
    expect(e?.message).toMatch(/^--reward-weights: 2 weight\(s\) for 1 reward column\(s\)/);
    expect(exitCodeFor(e)).toBe(2);
  });

  it('a missing path is an IO error naming it', async () => {
    await expect(auditCommand(parseAudit(['audit', '/nonexistent/dump']))).rejects.toThrow(
      /\/nonexistent\/dump: cannot read/,
    );
  });
});
