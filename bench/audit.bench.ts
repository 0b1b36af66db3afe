/**
 * `labs audit` on verl-style dumps of 100k and 1M rows (10,000 rows per `<step>.jsonl`, groups of
 * 8, ~3,000 tasks of varied difficulty, outputs of 50-350 characters), generated once under
 * `bench/out/` (ignored by git), against the same-statistics DuckDB SQL bound (bench/audit-bound.mjs:
 * one read_json, the group kinds, per-step, per-task, group-size, reward and length tables the audit
 * reports). Both run as child processes under `/usr/bin/time -v` (wall time and peak RSS of the
 * whole process), alternately, and the ratio is the median of the per-pair ratios. The earlier,
 * narrower bound (`audit-bound.mjs DIR counts`: kinds and the number of steps and tasks, which
 * DuckDB computes without reading the responses) is timed in the same pairs for comparison. Runs the built CLI (`npm run build` first); `LABS_AUDIT_CLI`
 * points it at another build, and `LABS_AUDIT_BEFORE_CLI` adds a third timed process per pair (an
 * older commit's build), so before and after are measured in the same run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Rng } from '../src/random.js';
import type { BenchRow } from './run.js';
import { median } from './timing.js';

const ROWS_PER_STEP = 10_000;
const GROUP_SIZE = 8;
const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** Writes the dump (once: a complete dump is reused); task difficulty is (task mod 10)/10. */
async function generate(dir: string, steps: number): Promise<void> {
  if (existsSync(join(dir, 'complete'))) return;
  await mkdir(dir, { recursive: true });
  const rng = new Rng(1);
  for (let step = 1; step <= steps; step++) {
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
  await writeFile(join(dir, 'complete'), '');
}

interface Measured {
  ms: number;
  rssMb: number | null;
  /** User + system CPU seconds of the process (the machine is shared: CPU is steadier than wall). */
  cpuS: number;
  stdout: string;
}

function measure(args: string[]): Measured {
  const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
  const t0 = performance.now();
  const out = timeBin
    ? spawnSync(timeBin, ['-v', process.execPath, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 })
    : spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  const ms = performance.now() - t0;
  if (out.status !== 0) throw new Error(`bench/audit: ${args.join(' ')} failed: ${out.stderr}`);
  const rssKb = /Maximum resident set size \(kbytes\): (\d+)/.exec(out.stderr ?? '')?.[1];
  const cpu = (label: string) =>
    Number(new RegExp(`${label} time \\(seconds\\): ([\\d.]+)`).exec(out.stderr ?? '')?.[1] ?? 0);
  return {
    ms,
    rssMb: rssKb ? Number(rssKb) / 1024 : null,
    cpuS: cpu('User') + cpu('System'),
    stdout: out.stdout,
  };
}

export async function run(): Promise<BenchRow[]> {
  const cli = process.env.LABS_AUDIT_CLI ?? join(root, 'dist', 'cli', 'main.js');
  if (!existsSync(cli)) throw new Error('bench/audit: run `npm run build` first (needs dist/cli/main.js)');
  const bound = join(root, 'bench', 'audit-bound.mjs');
  const rows: BenchRow[] = [];
  for (const [steps, repeats] of [
    [10, 3],
    [100, 2],
  ] as const) {
    const dir = join(root, 'bench', 'out', `audit-verl-${steps * ROWS_PER_STEP}`);
    await generate(dir, steps);
    const labs: Measured[] = [];
    const sql: Measured[] = [];
    const counts: Measured[] = [];
    const countsRatios: number[] = [];
    const before: Measured[] = [];
    const ratios: number[] = [];
    const beforeRatios: number[] = [];
    const beforeCountsRatios: number[] = [];
    const beforeCli = process.env.LABS_AUDIT_BEFORE_CLI;
    for (let i = 0; i < repeats; i++) {
      const s = measure([bound, dir]);
      const c = measure([bound, dir, 'counts']);
      const l = measure([cli, 'audit', dir, '--preset', 'verl', '--json']);
      sql.push(s);
      counts.push(c);
      labs.push(l);
      ratios.push(l.ms / s.ms);
      countsRatios.push(l.ms / c.ms);
      if (beforeCli) {
        const b = measure([beforeCli, 'audit', dir, '--preset', 'verl', '--json']);
        before.push(b);
        beforeRatios.push(b.ms / s.ms);
        beforeCountsRatios.push(b.ms / c.ms);
      }
    }
    const record = JSON.parse(labs[0]?.stdout ?? '{}') as { metrics: { rows: number; groups: number } };
    const peak = (ms: Measured[]) => Math.max(...ms.map((m) => m.rssMb ?? 0));
    rows.push({
      group: 'audit',
      name: `labs audit verl, ${record.metrics.rows} rows, ${record.metrics.groups} groups`,
      ms: median(labs.map((m) => m.ms)),
      floor_ms: median(sql.map((m) => m.ms)),
      ratio: median(ratios),
      note: `floor: same-statistics DuckDB SQL; peak RSS labs ${peak(labs).toFixed(0)} MB, SQL ${peak(sql).toFixed(0)} MB; CPU s labs ${median(labs.map((m) => m.cpuS)).toFixed(2)}, SQL ${median(sql.map((m) => m.cpuS)).toFixed(2)}; ${repeats} pairs`,
    });
    rows.push({
      group: 'audit',
      name: '  vs the counts-only SQL (no response lengths)',
      ms: median(labs.map((m) => m.ms)),
      floor_ms: median(counts.map((m) => m.ms)),
      ratio: median(countsRatios),
      note: `peak RSS SQL ${peak(counts).toFixed(0)} MB; CPU s SQL ${median(counts.map((m) => m.cpuS)).toFixed(2)}`,
    });
    if (beforeCli) {
      rows.push({
        group: 'audit',
        name: `  before (LABS_AUDIT_BEFORE_CLI), same dump`,
        ms: median(before.map((m) => m.ms)),
        floor_ms: median(sql.map((m) => m.ms)),
        ratio: median(beforeRatios),
        note: `peak RSS ${peak(before).toFixed(0)} MB; CPU s ${median(before.map((m) => m.cpuS)).toFixed(2)}; ${median(beforeCountsRatios).toFixed(2)}x the counts-only SQL`,
      });
    }
  }
  return rows;
}
