#!/usr/bin/env node
// `npm test`: runs vitest once, then prints a plain closing line "N passed, N failed[, N skipped]"
// that any CI can read, and exits non-zero exactly when that line counts a failure.
//
// "failed" counts every failed test plus every test file that failed without a failed test: a file
// that could not be imported, or whose beforeAll/afterAll threw (vitest then marks its tests
// skipped, and they are not counted as skipped here). The line and the exit code always agree: a
// non-zero vitest exit with nothing counted (an unhandled error outside any test) is one failure,
// and any failure makes the exit code 1 even if vitest exited 0. Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';

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
const vitestCode = res.status ?? 1;

/** The counts of the closing line from vitest's JSON report, and why each failed file failed. */
function count(r) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failedFiles = [];
  for (const file of r.testResults ?? []) {
    const tests = file.assertionResults ?? [];
    const failedTests = tests.filter((t) => t.status === 'failed').length;
    passed += tests.filter((t) => t.status === 'passed').length;
    failed += failedTests;
    const notRun = tests.filter((t) => ['skipped', 'pending', 'todo'].includes(t.status)).length;
    if (file.status === 'failed' && failedTests === 0) {
      failed += 1; // the file itself: import error or a failing hook; its tests never ran
      const why = String(file.message ?? 'failed').split('\n')[0];
      failedFiles.push(
        `${relative(process.cwd(), file.name)}: ${why}${notRun ? ` (${notRun} tests not run)` : ''}`,
      );
    } else {
      skipped += notRun;
    }
  }
  return { passed, failed, skipped, failedFiles };
}

let line;
let code = vitestCode;
try {
  const { passed, failed: counted, skipped, failedFiles } = count(JSON.parse(readFileSync(report, 'utf8')));
  let failed = counted;
  const notes = failedFiles.map((f) => `failed file ${f}`);
  if (vitestCode !== 0 && failed === 0) {
    failed = 1;
    notes.push(
      `vitest exited with code ${vitestCode} although no test or file failed (see its output above)`,
    );
  }
  if (failed > 0 && code === 0) code = 1;
  if (notes.length) process.stdout.write(`\n${notes.join('\n')}\n`);
  line = `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
} catch (e) {
  line = `0 passed, 1 failed`;
  process.stdout.write(`\nno vitest report (${e.message})\n`);
  code = code || 1;
}
process.stdout.write(`\n${line}\n`);
process.exit(code);
