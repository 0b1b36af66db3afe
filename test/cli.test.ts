// End-to-end checks of the `labs` binary's contract: exit codes, one-line errors, --debug stacks.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockFileOf } from '../src/cli/outputLock.js';
import { VERSION } from '../src/experiments/version.js';

function labs(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Starts `labs ARGS --out OUT`, waits for OUT's lock (the checks passed, the computation under way),
 * then `settle` ms, sends SIGINT and resolves with the exit, the stderr and the ms from signal to exit.
 */
async function interruptMidRun(args: string[], out: string, settle: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args, '--out', out], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  const closed = new Promise<[number | null, string | null]>((r) => child.on('close', (c, s) => r([c, s])));
  const lock = lockFileOf(out);
  for (let t = 0; t < 120 && !existsSync(lock); t++) await new Promise((r) => setTimeout(r, 250));
  expect(existsSync(lock)).toBe(true);
  await new Promise((r) => setTimeout(r, settle));
  const sent = Date.now();
  child.kill('SIGINT');
  const [code, signal] = await closed;
  return { code, signal, stderr, lock, elapsed: Date.now() - sent };
}

describe('labs CLI', () => {
  it('prints help and version and exits 0', () => {
    const h = labs('--help');
    expect(h.code).toBe(0);
    for (const cmd of ['list', 'run', 'conformance', 'audit', 'report', 'compare'])
      expect(h.stdout).toContain(cmd);
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

  it('rejects an unknown experiment with exit 2 (usage) and the known names', () => {
    const r = labs('run', '--experiment', 'no-such-experiment');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/\[UNKNOWN_EXPERIMENT\]: unknown experiment 'no-such-experiment'; known: /);
  });

  it.each([
    [['--set', 'lr=abc'], 'BAD_OPTION_VALUE', /option lr=abc: /],
    [['--set', 'no_such_key=1'], 'UNKNOWN_OPTION', /unknown option 'no_such_key'/],
    [['--seed', 'abc'], 'BAD_CLI', /--seed expects an integer/],
    [['--set', 'operand_min=5', '--set', 'operand_max=4'], 'BAD_OPTION_VALUE', /operand_min <= operand_max/],
  ])('usage error %j exits 2 with one line naming it', (args, code, message) => {
    const r = labs('run', '-e', 'agent', ...(args as string[]));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`[${code}]`);
    expect(r.stderr).toMatch(message as RegExp);
  });

  it("a bad --set value says what was given and what is accepted; a bad sweep point is no seed's error", () => {
    const nan = labs('run', '-e', 'agent', '--set', 'lr=NaN');
    expect(nan.code).toBe(2);
    expect(nan.stderr).toBe(
      'labs: error [BAD_OPTION_VALUE]: agent: option lr=NaN: expected a number, got NaN, which is not a finite number (lr accepts number > 0)\n',
    );
    // operand_min=200 > operand_max=99 is a config error: refused before the first point runs, and
    // not reported as "seed 7: ..." as it was
    const sweep = labs(
      'run',
      '-e',
      'agent',
      '--sweep',
      'operand_min=0,200',
      '--out',
      join(mkdtempSync(join(tmpdir(), 'labs-sw-')), 'o'),
    );
    expect(sweep.code).toBe(2);
    expect(sweep.stderr).toBe(
      'labs: error [BAD_OPTION_VALUE]: operand range: expected integers with operand_min <= operand_max, got [200, 99]\n',
    );
  });

  it('--set lr=1e309 echoes what was typed (not lr=null)', () => {
    const r = labs('run', '-e', 'agent', '--set', 'lr=1e309');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/option lr=1e309: /);
    expect(r.stderr).not.toContain('null');
  });

  it('a run-time failure exits 1; an error quoting a multi-line file stays on one line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'labs-cli-'));
    expect(labs('conformance', join(dir, 'missing.json')).code).toBe(1);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{\n  "cases": oops\n}\n');
    const r = labs('conformance', bad);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^labs: error \[PARSE_ERROR\]: .*bad\.json: not valid JSON .*\\n/),
    ]);
  });

  it('documents the exit codes in labs --help', () => {
    expect(labs('--help').stdout).toMatch(/Exit codes: 0 success; 1 failure while running.*\n2 usage error/);
  });

  it('a run interrupted with SIGINT says what it kept, exits 130 and leaves only finished seeds, no lock', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'labs-sigint-')), 'out');
    // The lock appears once the checks have passed and the run is under way (the Ctrl-C handler is
    // installed by then); startup takes seconds on a loaded machine, the 50 seeds minutes.
    const { code, stderr, lock } = await interruptMidRun(
      ['run', '-e', 'aggregation', '--seeds', '1..50'],
      out,
      0,
    );
    // It used to die silently by the signal (code null).
    expect(code).toBe(130);
    expect(existsSync(lock)).toBe(false);
    // Absent (no seed had finished), or the plan and one whole record per finished seed, no aggregate.
    if (!existsSync(out)) {
      expect(stderr).toBe('labs: interrupted (Ctrl-C); nothing was written\n');
      return;
    }
    // the record comes first, the plan right after it: a kill in between leaves no plan yet
    expect(['plan.json,seeds', 'seeds']).toContain(readdirSync(out).sort().join());
    const seeds = readdirSync(join(out, 'seeds'));
    expect(seeds.length).toBeGreaterThan(0);
    for (const f of seeds) {
      expect(f).toMatch(/^\d+\.json$/);
      expect(JSON.parse(readFileSync(join(out, 'seeds', f), 'utf8')).experiment).toBe('aggregation');
    }
    expect(stderr).toBe(
      `labs: interrupted (Ctrl-C); kept ${seeds.length} finished seed record(s) in ${join(out, 'seeds')} (the same command resumes); nothing else was written\n`,
    );
  }, 90_000);

  it('a single-seed run interrupted mid-computation says nothing was written and exits 130 at once', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'labs-sigint1-')), 'out');
    // a long single seed (20-70 s on an idle machine), computed synchronously on the main thread
    const { code, signal, stderr, elapsed } = await interruptMidRun(
      ['run', '-e', 'mask', '--set', 'policy=neural', '--seed', '1'],
      out,
      1000,
    );
    // It used to die by the signal in silence (code null, signal SIGINT): a SIGINT handler could only
    // have run once the seed had ended. Now the computation is broken off at once.
    expect({ code, signal }).toEqual({ code: 130, signal: null });
    expect(stderr).toBe('labs: interrupted (Ctrl-C); nothing was written\n');
    expect(elapsed).toBeLessThan(10_000);
    // nothing written: the --out directory the run created is removed again, with its lock
    expect(existsSync(out)).toBe(false);
  }, 90_000);

  it('a --seeds run interrupted mid-seed stops at once, keeping only the seeds already finished', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'labs-sigintn-')), 'out');
    // neural seeds (20-70 s each on an idle machine), one after another on the main thread
    const { code, signal, stderr, elapsed } = await interruptMidRun(
      ['run', '-e', 'mask', '--set', 'policy=neural', '--seeds', '1..3', '--jobs', '1'],
      out,
      1000,
    );
    // It used to answer only once the seed under way had ended (tens of seconds), then keep it.
    expect({ code, signal }).toEqual({ code: 130, signal: null });
    expect(elapsed).toBeLessThan(10_000);
    expect(stderr).toBe('labs: interrupted (Ctrl-C); nothing was written\n');
    expect(existsSync(out)).toBe(false);
  }, 90_000);

  it('two runs into one --out: the second is refused while the first runs; a finished record is kept', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'labs-lock-')), 'out');
    const first = spawn(
      process.execPath,
      ['--import', 'tsx', 'src/cli/main.ts', 'run', '-e', 'aggregation', '--seeds', '1..3', '--out', out],
      { stdio: 'ignore' },
    );
    const firstCode = new Promise((r) => first.on('close', (c) => r(c)));
    const lock = lockFileOf(out);
    for (let t = 0; t < 120 && !existsSync(lock); t++) await new Promise((r) => setTimeout(r, 250));
    const second = labs('run', '-e', 'advantage', '--out', out);
    // Both used to exit 0, leaving one run's record beside the other's report.
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(
      /^labs: error \[OUTPUT_LOCKED\]: --out .*out is being written by labs \(pid \d+ /,
    );
    expect(await firstCode).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'record.json'), 'utf8')).experiment).toBe('aggregation');
    // The record is never replaced silently: refused (exit 2) without --force.
    const again = labs('run', '-e', 'advantage', '--out', out);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds a record .*add --force to replace it; nothing was run/);
    expect(JSON.parse(readFileSync(join(out, 'record.json'), 'utf8')).experiment).toBe('aggregation');
    expect(labs('run', '-e', 'advantage', '--out', out, '--force').code).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'record.json'), 'utf8')).experiment).toBe('advantage');
    expect(existsSync(lock)).toBe(false);
  }, 120_000);

  it('keeps the package version and the recorded version in sync', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(pkg.version).toBe(VERSION);
  });
});
