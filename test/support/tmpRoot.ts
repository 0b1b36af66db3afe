/**
 * Vitest global setup: every test's temporary files go under one directory made for this test run,
 * removed when the run ends. Tests call `mkdtemp(join(tmpdir(), ...))` and leave their directories
 * behind (checkpoints, records, dumps: thousands per run); `os.tmpdir()` reads TMPDIR on every
 * call, and the forked test workers and the CLI processes they spawn inherit it, so one setting
 * here cleans up after all of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'labs-test-run-'));
  process.env.TMPDIR = root;
  return () => rmSync(root, { recursive: true, force: true });
}
