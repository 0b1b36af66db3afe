// End-to-end checks of the `labs` binary's contract: exit codes, one-line errors, --debug stacks.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../src/experiments/version.js';

function labs(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('labs CLI', () => {
  it('prints help and version and exits 0', () => {
    const h = labs('--help');
    expect(h.code).toBe(0);
    for (const cmd of ['list', 'run', 'conformance', 'audit', 'report']) expect(h.stdout).toContain(cmd);
    const v = labs('--version');
    expect(v.stdout.trim()).toBe(VERSION);
  });

  it('rejects an unknown command with one line and exit code 2; --debug adds the stack', () => {
    const r = labs('frobnicate');
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^labs: error \[BAD_CLI\]: unknown command 'frobnicate'/);
    const d = labs('frobnicate', '--debug');
    expect(d.stderr.split('\n').length).toBeGreaterThan(3);
    expect(d.stderr).toContain('at ');
  });

  it('rejects an unknown experiment with a non-zero exit and the known names', () => {
    const r = labs('run', '--experiment', 'no-such-experiment');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/\[UNKNOWN_EXPERIMENT\]: unknown experiment 'no-such-experiment'; known: /);
  });

  it('keeps the package version and the recorded version in sync', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(pkg.version).toBe(VERSION);
  });
});
