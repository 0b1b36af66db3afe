// scripts/test.mjs (`npm test`) on fixture suites, in a child process: its closing line counts a
// file that fails in beforeAll and a file that fails to import as failed, and agrees with the exit code.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const FIXTURES = resolve('test/fixtures/test-script');
const SCRIPT = resolve('scripts/test.mjs');

function runScript(...files: string[]) {
  const r = spawnSync(process.execPath, [SCRIPT, ...files], { cwd: FIXTURES, encoding: 'utf8' });
  const lines = r.stdout.trim().split('\n');
  return { code: r.status, closing: lines.at(-1), stdout: r.stdout };
}

describe('scripts/test.mjs closing line', () => {
  it('counts a beforeAll failure and an import failure as failed files, and exits 1', () => {
    const r = runScript();
    expect(r.closing).toBe('1 passed, 2 failed, 1 skipped');
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /failed file failing-before-all\.fixture\.ts: no browser here \(fixture\) \(2 tests not run\)/,
    );
    expect(r.stdout).toMatch(
      /failed file failing-import\.fixture\.ts: cannot import this module \(fixture\)/,
    );
  }, 60_000);

  it('a passing file alone: 0 failed and exit 0', () => {
    const r = runScript('passing.fixture.ts');
    expect(r.closing).toBe('1 passed, 0 failed, 1 skipped');
    expect(r.code).toBe(0);
  }, 60_000);
});
