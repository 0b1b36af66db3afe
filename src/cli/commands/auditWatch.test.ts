/**
 * `labs audit DIR --watch` through the built CLI (dist/; run `npm run build`): a directory the test
 * keeps writing, step by step (one step first written without its last newline), is reported step
 * by step; after SIGINT the record written equals a one-shot audit of the finished directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFile, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = resolve('dist/cli/main.js');

function stepLines(step: number): string[] {
  return [0, 1, 2, 3].map((i) =>
    JSON.stringify({
      input: `q${i % 2}`,
      output: 'y'.repeat(5 + step + i),
      gts: 'a',
      score: (i + step) % 3 === 0 ? 1 : 0,
      step,
    }),
  );
}

async function waitFor(get: () => string, needle: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!get().includes(needle)) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out waiting for '${needle}'; got:\n${get()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - started;
}

describe('labs audit --watch (built CLI)', () => {
  it('reports each new step within seconds and ends with the one-shot audit', async () => {
    const root = await mkdtemp(join(tmpdir(), 'labs-watch-'));
    const dir = join(root, 'dump');
    await mkdir(dir);
    const out = join(root, 'out');
    const child = spawn(
      process.execPath,
      [CLI, 'audit', dir, '--preset', 'verl', '--watch', '--watch-interval', '0.2', '--out', out],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await waitFor(() => stdout, 'watching', 20_000);
    const latencies: number[] = [];
    for (const step of [1, 2, 3]) {
      const lines = stepLines(step);
      if (step === 2) {
        // A step file still being written: its last line has no newline yet.
        await writeFile(join(dir, `${step}.jsonl`), `${lines.join('\n')}`);
        await new Promise((r) => setTimeout(r, 600));
        expect(stdout).not.toContain('step 2:');
        await appendFile(join(dir, `${step}.jsonl`), '\n');
      } else {
        await writeFile(join(dir, `${step}.jsonl`), `${lines.join('\n')}\n`);
      }
      latencies.push(await waitFor(() => stdout, `step ${step}: 4 rows, 2 groups`, 10_000));
    }
    expect(Math.max(...latencies)).toBeLessThan(10_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain('watch stopped: auditing the whole directory');
    const recordPath = /record: (.+)/.exec(stdout)?.[1] as string;
    const watched = JSON.parse(await readFile(recordPath, 'utf8'));
    const once = spawnSync(process.execPath, [CLI, 'audit', dir, '--preset', 'verl', '--json'], {
      encoding: 'utf8',
    });
    expect(once.status).toBe(0);
    const oneShot = JSON.parse(once.stdout);
    for (const r of [watched, oneShot]) delete r.timing;
    expect(watched).toEqual(oneShot);
    expect(watched.metrics.steps).toBe(3);
  }, 60_000);

  it('refuses --watch on a file', () => {
    const r = spawnSync(process.execPath, [CLI, 'audit', 'examples/generic-rollouts.jsonl', '--watch'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--watch: examples/generic-rollouts.jsonl is not a directory');
  });
});
