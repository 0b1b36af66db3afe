/**
 * `labs audit` on a verl-style dump: 200 `<step>.jsonl` files, 1,000,000 rows in all (5,000 per step,
 * groups of 8, ~3,000 tasks of varied difficulty, outputs of 50-350 characters), generated into a
 * temp directory. Runs the built CLI (`dist/cli/main.js`, so `npm run build` first) under
 * `/usr/bin/time -v` when available, and reports wall time and peak RSS of the whole process.
 * The requirement it tracks: "well under a minute" for this size.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/random.js';
import type { BenchRow } from './run.js';

const STEPS = 200;
const ROWS_PER_STEP = 5000;
const GROUP_SIZE = 8;

/** Writes the dump; task difficulty (success probability) is (task mod 10)/10. */
async function generate(dir: string): Promise<void> {
  const rng = new Rng(1);
  for (let step = 1; step <= STEPS; step++) {
    const lines: string[] = [];
    for (let i = 0; i < ROWS_PER_STEP; i++) {
      const task = (step * 7 + Math.floor(i / GROUP_SIZE)) % 3000;
      const score = rng.next() < (task % 10) / 10 ? 1 : 0;
      lines.push(
        JSON.stringify({
          input: `Problem ${task}: compute ${task} + ${task * 3} and explain the steps.`,
          output: 'x'.repeat(50 + Math.floor(rng.next() * 300)),
          gts: String(task * 4),
          score,
          step,
          acc: score === 1,
        }),
      );
    }
    await writeFile(join(dir, `${step}.jsonl`), `${lines.join('\n')}\n`);
  }
}

export async function run(): Promise<BenchRow[]> {
  const root = dirname(dirname(fileURLToPath(import.meta.url)));
  const cli = join(root, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error('bench/audit: run `npm run build` first (needs dist/cli/main.js)');
  const dir = await mkdtemp(join(tmpdir(), 'labs-audit-bench-'));
  try {
    const g0 = performance.now();
    await generate(dir);
    const genMs = performance.now() - g0;
    const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
    const args = [cli, 'audit', dir, '--preset', 'verl', '--json'];
    const t0 = performance.now();
    const out = timeBin
      ? spawnSync(timeBin, ['-v', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 })
      : spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
    const wallMs = performance.now() - t0;
    if (out.status !== 0) throw new Error(`labs audit failed: ${out.stderr}`);
    const rssKb = /Maximum resident set size \(kbytes\): (\d+)/.exec(out.stderr ?? '')?.[1];
    const record = JSON.parse(out.stdout) as { metrics: { rows: number; groups: number } };
    return [
      {
        group: 'audit',
        name: `verl ${STEPS} files, ${record.metrics.rows} rows, ${record.metrics.groups} groups`,
        ms: wallMs,
        note: `${rssKb ? `peak RSS ${(Number(rssKb) / 1024).toFixed(0)} MB; ` : ''}generating the dump took ${(genMs / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
