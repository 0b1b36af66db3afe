#!/usr/bin/env node
// `npm test`: runs vitest once, then prints a plain closing line "N passed, N failed[, N skipped]"
// that any CI can read, and exits with vitest's own exit code (non-zero when a test fails).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const outDir = 'test-output';
const report = join(outDir, 'vitest-report.json');
mkdirSync(outDir, { recursive: true });
rmSync(report, { force: true });
const args = [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...process.argv.slice(2),
];
const res = spawnSync('npx', args, { stdio: 'inherit' });
let code = res.status ?? 1;
try {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  const skipped = (r.numPendingTests ?? 0) + (r.numTodoTests ?? 0);
  const failedSuites = (r.testResults ?? []).filter(
    (s) => s.status === 'failed' && (s.assertionResults ?? []).length === 0,
  ).length;
  const failed = r.numFailedTests + failedSuites;
  if (failed > 0 && code === 0) code = 1;
  process.stdout.write(
    `\n${r.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
  );
} catch (e) {
  process.stdout.write(`\n0 passed, 1 failed (no vitest report: ${e.message})\n`);
  code = code || 1;
}
process.exit(code);
