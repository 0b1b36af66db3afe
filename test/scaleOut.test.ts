// The GNU parallel recipe of docs/scale-out.md, run as written (at a tiny size): with GNU parallel
// when it is installed, else with its `parallel ... ::: 1 2 3` line run the way parallel runs it
// (one subprocess per argument, concurrently, `{}` replaced and PARALLEL_SEQ set). The merged record
// must equal a one-process run of the same seeds (timing aside).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const dist = resolve('test-output', 'scaleout-dist');
const work = mkdtempSync(join(tmpdir(), 'labs-scaleout-'));
const bin = join(work, 'bin');
/** The mask experiment at tens of ms a seed, instead of the recipe's full size. */
const SMALL = '--set updates=10 --set tasks_per_update=4 --set group_size=4 --set eval_tasks=20';

/** The first ```bash block under `## GNU parallel` in docs/scale-out.md. */
function recipe(): string {
  const section = readFileSync('docs/scale-out.md', 'utf8').split('## GNU parallel')[1] ?? '';
  const block = /```bash\n([\s\S]*?)```/.exec(section)?.[1];
  if (!block) throw new Error('docs/scale-out.md: no bash block under "## GNU parallel"');
  return block;
}

const env = () => ({ ...process.env, PATH: `${bin}${delimiter}${process.env.PATH}` });
const bash = (script: string, extra: Record<string, string> = {}) =>
  spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: work,
    encoding: 'utf8',
    env: { ...env(), ...extra },
  });

/** Runs `parallel [opts] CMD ::: A B C` as GNU parallel does: every argument at once, {} replaced. */
async function emulateParallel(line: string, out: string): Promise<void> {
  const m = /^parallel(?: --jobs \d+)? (.*) ::: (.*)$/.exec(line.trim());
  if (!m) throw new Error(`not a parallel line this test can run: ${line}`);
  const [, template, args] = m as unknown as [string, string, string];
  const runs = args.split(/\s+/).map(
    (arg, i) =>
      new Promise<number | null>((done) => {
        const child = spawn('bash', ['-euo', 'pipefail', '-c', template.replaceAll('{}', arg)], {
          cwd: work,
          env: { ...env(), OUT: out, PARALLEL_SEQ: String(i + 1) },
          stdio: 'ignore',
        });
        child.on('close', done);
      }),
  );
  expect(await Promise.all(runs)).toEqual(args.split(/\s+/).map(() => 0));
}

beforeAll(() => {
  const r = spawnSync(process.execPath, ['scripts/build.mjs', dist, '--cli-only'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`build failed: ${r.stderr}`);
  mkdirSync(bin);
  // `labs` on PATH, as after npm install -g
  writeFileSync(
    join(bin, 'labs'),
    `#!/bin/sh\nexec "${process.execPath}" "${join(dist, 'cli', 'main.js')}" "$@"\n`,
  );
  chmodSync(join(bin, 'labs'), 0o755);
}, 120_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('docs/scale-out.md, GNU parallel', () => {
  it('three shards and labs merge give the one-process record', async () => {
    const script = recipe().replaceAll('--seeds 1..40', `--seeds 1..7 ${SMALL}`);
    expect(script).toContain('--shard {}/3');
    const hasParallel = spawnSync('bash', ['-c', 'command -v parallel'], { env: env() }).status === 0;
    if (hasParallel) {
      const r = bash(script);
      expect(r.status, r.stderr).toBe(0);
    } else {
      const lines = script.split('\n').filter((l) => l.trim() !== '');
      const [assign, par, mergeLine] = lines as [string, string, string];
      expect(assign).toMatch(/^OUT=/);
      await emulateParallel(par, assign.slice('OUT='.length));
      const r = bash(`${assign}\n${mergeLine}`);
      expect(r.status, r.stderr).toBe(0);
    }
    const whole = bash(`labs run -e mask --seeds 1..7 ${SMALL} --out whole --no-progress`);
    expect(whole.status, whole.stderr).toBe(0);
    const strip = (file: string) => {
      const r = JSON.parse(readFileSync(join(work, file), 'utf8'));
      delete r.timing;
      for (const run of r.runs) delete run.timing;
      return r;
    };
    const merged = strip('runs/mask-1-40/record.json');
    expect(merged.seeds).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(merged).toEqual(strip('whole/record.json'));
  }, 120_000);
});
