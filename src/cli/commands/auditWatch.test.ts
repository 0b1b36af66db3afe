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

  it('rewrites the --html page as steps arrive; the final page is the one-shot page', async () => {
    const root = await mkdtemp(join(tmpdir(), 'labs-watch-html-'));
    const dir = join(root, 'dump');
    await mkdir(dir);
    const html = join(root, 'page.html');
    const child = spawn(
      process.execPath,
      [CLI, 'audit', dir, '--preset', 'verl', '--watch', '--watch-interval', '0.2', '--html', html],
      { stdio: ['ignore', 'pipe', 'pipe'] },
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
    let page = '';
    const readPage = () => page;
    const latencies: number[] = [];
    for (const step of [1, 2, 3]) {
      await writeFile(join(dir, `${step}.jsonl`), `${stepLines(step).join('\n')}\n`);
      const started = Date.now();
      // the live page's steps table and its note name the steps read so far
      for (;;) {
        page = await readFile(html, 'utf8').catch(() => '');
        if (page.includes(`LIVE page (labs audit --watch): ${step} step(s)`)) break;
        if (Date.now() - started > 10_000) throw new Error(`no live page with ${step} step(s):\n${stdout}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      latencies.push(Date.now() - started);
      expect(readPage()).toContain('LIVE audit (watching; final page after Ctrl-C)');
      expect(readPage()).toContain('<meta http-equiv="refresh" content="2">');
      expect(readPage()).toContain(`steps, ${step} rows</summary>`);
    }
    expect(Math.max(...latencies)).toBeLessThan(10_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    const final = await readFile(html, 'utf8');
    expect(final).not.toContain('LIVE');
    expect(final).not.toContain('http-equiv="refresh"');
    const html2 = join(root, 'once.html');
    const once = spawnSync(process.execPath, [CLI, 'audit', dir, '--preset', 'verl', '--html', html2], {
      encoding: 'utf8',
    });
    expect(once.status).toBe(0);
    // timing aside (the source line shows the audit's seconds), the pages are the same bytes
    expect(final).toMatch(/ · [0-9.]+ s<br>rerun/);
    const noTiming = (s: string) => s.replace(/ · [0-9.]+ s(<br>| *<\/li>)/g, '$1');
    expect(noTiming(final)).toBe(noTiming(await readFile(html2, 'utf8')));
  }, 60_000);

  it('refuses --watch on a file', () => {
    const r = spawnSync(process.execPath, [CLI, 'audit', 'examples/generic-rollouts.jsonl', '--watch'], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--watch: examples/generic-rollouts.jsonl is not a directory');
  });
});
