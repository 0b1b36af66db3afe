/**
 * `npm run bench`: runs every `bench/*.bench.ts` (each exports `run(): Promise<BenchRow[]>`),
 * prints one table and writes `bench/results.json`. Never part of `npm test`.
 * Ratios are measured in the same run as their floor (the machine is shared and noisy).
 *
 * `npx tsx bench/run.ts GROUP` runs only the bench files whose name contains GROUP and replaces only
 * those groups' rows in `bench/results.json`, keeping the other groups' rows and dates (the format and
 * the merge are in bench/results.ts); a GROUP that every file name contains is a full run. A GROUP
 * that matches no file exits with code 2 and lists the groups.
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { table } from '../src/experiments/text.js';
import {
  BENCH_SUFFIX,
  type BenchResults,
  type BenchRow,
  benchGroups,
  mergeResults,
  parseResults,
  selectGroups,
  unknownGroupMessage,
} from './results.js';

export type { BenchRow } from './results.js';

const here = dirname(fileURLToPath(import.meta.url));
const resultsPath = join(here, 'results.json');
const only = process.argv[2];
const available = benchGroups(await readdir(here));
const groups = selectGroups(available, only);
if (only !== undefined && groups.length === 0) {
  process.stderr.write(unknownGroupMessage(only, available));
  process.exit(2);
}
const full = groups.length === available.length;
// A partial run merges into the existing file: read (and validate) it before spending time on benches.
let previous: BenchResults | undefined;
if (!full) {
  const text = await readFile(resultsPath, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });
  if (text !== undefined) previous = parseResults(JSON.parse(text));
}
const rows: BenchRow[] = [];
for (const g of groups) {
  const f = `${g}${BENCH_SUFFIX}`;
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
const results = mergeResults(previous, {
  groups,
  rows,
  date: new Date().toISOString(),
  node: process.version,
  full,
});
await writeFile(resultsPath, `${JSON.stringify(results, null, 2)}\n`);
const keptGroups = Object.keys(results.groups).filter((g) => !groups.includes(g));
console.log(
  `\nwrote ${join('bench', 'results.json')}` +
    (full ? '' : ` (rows of ${groups.join(', ')} replaced; kept ${keptGroups.join(', ') || 'none'})`),
);
