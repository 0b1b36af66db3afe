/**
 * `npm run bench`: runs every `bench/*.bench.ts` (each exports `run(): Promise<BenchRow[]>`),
 * prints one table and writes `bench/results.json`. Never part of `npm test`.
 * Ratios are measured in the same run as their floor (the machine is shared and noisy).
 */
import { readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { table } from '../src/report/text.js';

export interface BenchRow {
  group: string;
  name: string;
  /** Median wall time of one call, milliseconds. */
  ms: number;
  /** The floor this row is compared with (e.g. a typed-array copy of the same bytes), ms. */
  floor_ms?: number;
  ratio?: number;
  note?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv[2];
const files = (await readdir(here))
  .filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only)))
  .sort();
const rows: BenchRow[] = [];
for (const f of files) {
  process.stderr.write(`bench: ${f}\n`);
  const mod = (await import(pathToFileURL(join(here, f)).href)) as { run: () => Promise<BenchRow[]> };
  rows.push(...(await mod.run()));
}
const fmt = (v: number | undefined) => (v === undefined ? '-' : v < 10 ? v.toFixed(3) : v.toFixed(1));
const header = ['group', 'name', 'ms', 'floor ms', 'ratio', 'note'];
const body = rows.map((r) => [
  r.group,
  r.name,
  fmt(r.ms),
  fmt(r.floor_ms),
  r.ratio === undefined ? '-' : `${r.ratio.toFixed(2)}x`,
  r.note ?? '',
]);
console.log(table(header, body)); // every cell is text: left-aligned columns
await writeFile(
  join(here, 'results.json'),
  `${JSON.stringify({ date: new Date().toISOString(), node: process.version, rows }, null, 2)}\n`,
);
console.log(`\nwrote ${join('bench', 'results.json')}`);
