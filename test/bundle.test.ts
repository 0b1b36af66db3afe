// The built `labs` (scripts/build.mjs into a private directory): `labs run` runs from the CommonJS
// bundle with V8's code cache written by the build, and gives the same record as the source; without
// the cache, or when V8 refuses it, the same record again; other commands still work.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dist = join('test-output', 'bundle-dist');
const out = mkdtempSync(join(tmpdir(), 'labs-bundle-'));
const RUN = ['run', '-e', 'agent', '--seed', '5', '--set', 'updates=20', '--set', 'eval_tasks=50', '--json'];

function node(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The record without its timing field (wall time differs from run to run). */
function withoutTiming(json: string): string {
  const record = JSON.parse(json) as { timing?: unknown };
  delete record.timing;
  return JSON.stringify(record);
}

const cacheFiles = () => readdirSync(join(dist, 'cli')).filter((f) => f.endsWith('.v8cache'));

beforeAll(() => {
  const r = spawnSync(process.execPath, ['scripts/build.mjs', dist, '--cli-only'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
}, 120_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('the built labs', () => {
  it('runs from the bundle with the code cache, and prints the record the source prints', () => {
    expect(cacheFiles()).toHaveLength(1);
    const built = node([join(dist, 'cli', 'main.js'), ...RUN, '--out', join(out, 'built')], {
      LABS_STARTUP_MARKS: '1',
    });
    expect(built.code).toBe(0);
    expect(built.stderr).toMatch(/^code cache .*\.v8cache: used$/m);
    const source = node(['--import', 'tsx', 'src/cli/main.ts', ...RUN, '--out', join(out, 'source')]);
    expect(source.code).toBe(0);
    expect(withoutTiming(built.stdout)).toBe(withoutTiming(source.stdout));
    // V8 refuses a cache made with other V8 flags; the bundle is then compiled as usual.
    const flagged = node(['--no-opt', join(dist, 'cli', 'main.js'), ...RUN, '--out', join(out, 'flags')], {
      LABS_STARTUP_MARKS: '1',
    });
    expect(flagged.stderr).toMatch(/^code cache .*\.v8cache: rejected$/m);
    expect(withoutTiming(flagged.stdout)).toBe(withoutTiming(source.stdout));
  }, 120_000);

  it('keeps errors, exit codes and the other commands', () => {
    const bin = join(dist, 'cli', 'main.js');
    const unknown = node([bin, 'run', '-e', 'nope', '--out', join(out, 'nope')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^labs: error \[UNKNOWN_EXPERIMENT\]: unknown experiment 'nope'/);
    const bad = node([bin, 'run', '-e', 'agent', '--set', 'lr=-1', '--out', join(out, 'bad')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'labs: error [BAD_OPTION_VALUE]: agent: option lr=-1: out of range (lr accepts number > 0)\n',
    );
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(node([bin, '--version']).stdout).toBe(`${pkg.version}\n`);
    const help = node([bin, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toBe(node(['--import', 'tsx', 'src/cli/main.ts', '--help']).stdout);
  }, 120_000);

  it('answers --help from the grammar file, without the ES module chunks, and without it as before', () => {
    const bin = join(dist, 'cli', 'main.js');
    const expected = node(['--import', 'tsx', 'src/cli/main.ts', 'audit', '--help']).stdout;
    const modules = join(out, 'modules.txt');
    const fast = node(['-r', resolve('bench', 'moduleProbe.cjs'), bin, 'audit', '--help'], {
      LABS_MODULE_LIST: modules,
    });
    expect(fast.code).toBe(0);
    expect(fast.stdout).toBe(expected);
    // Node's ES module loader (which the chunks need) was never started
    expect(readFileSync(modules, 'utf8')).not.toMatch(/internal\/modules\/esm\/translators/);
    rmSync(join(dist, 'cli', 'labs.grammar.js'));
    const fallback = node([bin, 'audit', '--help']);
    expect(fallback.code).toBe(0);
    expect(fallback.stdout).toBe(expected);
  }, 120_000);

  it('without its cache the bundle still runs (compiled as usual)', () => {
    for (const f of cacheFiles()) rmSync(join(dist, 'cli', f));
    const r = node([join(dist, 'cli', 'main.js'), ...RUN, '--out', join(out, 'nocache')], {
      LABS_STARTUP_MARKS: '1',
    });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/code cache/);
    expect(JSON.parse(r.stdout).experiment).toBe('agent');
  }, 120_000);
});
