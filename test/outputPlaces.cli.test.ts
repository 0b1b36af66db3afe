// Output places through the real binary (issue 25 items 1, 2, 8, 13): no hang on procfs, no input
// overwritten, every place checked before anything runs, one exit code for one mistake.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { toJson } from '../src/report/records.js';
import { agentLikeMultiSeed } from './e2e/syntheticRecords.js';

const example = resolve('examples/generic-rollouts.jsonl');

function labs(...args: string[]) {
  // The timeout turns the old hang (mkdir -p on /proc) into a failed assertion instead of a stuck suite.
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function oneError(r: ReturnType<typeof labs>, pattern: RegExp) {
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr.trim().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
}

describe('output places (labs run, audit, report, compare)', () => {
  const root = mkdtempSync(join(tmpdir(), 'labs-places-cli-'));

  it.skipIf(!existsSync('/proc/self'))(
    'an --out under /proc fails at once with exit 2 (it hung)',
    () => {
      oneError(
        labs('run', '-e', 'advantage', '--out', '/proc/nope'),
        /^labs: error \[BAD_CLI\]: --out \/proc\/nope: cannot create/,
      );
      oneError(
        labs('audit', example, '--out', '/proc/x'),
        /^labs: error \[BAD_CLI\]: --out \/proc\/x: cannot create/,
      );
      oneError(
        labs('run', '-e', 'advantage', '--html', '/proc/x.html', '--out', join(root, 'r')),
        /--html \/proc\/x\.html: /,
      );
      expect(existsSync(join(root, 'r'))).toBe(false);
    },
    180_000,
  );

  it('refuses an output that is one of the inputs, even through a link; the input is unchanged', () => {
    const record = join(root, 'R.json');
    const text = toJson(agentLikeMultiSeed([1, 2]));
    writeFileSync(record, text);
    symlinkSync(record, join(root, 'link.json'));
    oneError(
      labs('report', record, '--html', record),
      /--html .*R\.json: would overwrite the input .*R\.json; nothing was written$/m,
    );
    oneError(labs('report', record, '--html', join(root, 'link.json')), /would overwrite the input/);
    oneError(labs('compare', record, record, '--html', join(root, 'link.json')), /would overwrite the input/);
    expect(readFileSync(record, 'utf8')).toBe(text);
    // audit: an --out whose record.json is the dump being read
    const dumpDir = join(root, 'dump');
    mkdirSync(dumpDir);
    writeFileSync(join(dumpDir, 'record.json'), readFileSync(example));
    oneError(
      labs('audit', join(dumpDir, 'record.json'), '--out', dumpDir),
      /--out .*dump: would overwrite the input/,
    );
    expect(readFileSync(join(dumpDir, 'record.json'), 'utf8')).toBe(readFileSync(example, 'utf8'));
  }, 120_000);

  it('checks --html and --png before running or writing anything', () => {
    const dir = join(root, 'existing-dir');
    mkdirSync(dir);
    oneError(
      labs('run', '-e', 'advantage', '--html', dir, '--out', join(root, 'run1')),
      /--html .*existing-dir: is a directory; give a file name; nothing was run$/m,
    );
    expect(existsSync(join(root, 'run1'))).toBe(false);
    const record = join(root, 'R2.json');
    writeFileSync(record, toJson(agentLikeMultiSeed([1, 2])));
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    oneError(
      labs('report', record, '--html', join(root, 'ok.html'), '--png', file),
      /--png .*a-file: exists and is not a directory; nothing was written$/m,
    );
    expect(existsSync(join(root, 'ok.html'))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  }, 120_000);

  it('an --out that cannot be written is the same usage error (exit 2) for run and audit', () => {
    const file = join(root, 'blocker');
    writeFileSync(file, 'x');
    const run = labs('run', '-e', 'advantage', '--out', join(file, 'out'));
    const audit = labs('audit', example, '--out', join(file, 'out'));
    oneError(
      run,
      /^labs: error \[BAD_CLI\]: --out .*blocker\/out: a parent directory is a file; nothing was run$/m,
    );
    oneError(
      audit,
      /^labs: error \[BAD_CLI\]: --out .*blocker\/out: a parent directory is a file; nothing was run$/m,
    );
  }, 120_000);
});
