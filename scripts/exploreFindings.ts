/**
 * Paired results of the explore experiment over seeds: reads the per-seed JSON records written by
 * `bash scripts/exploreSeeds.sh DIR POLICY FIRST LAST` and prints, for every paired difference in
 * the records' metrics (`<metric>.<arm>_minus_<baseline>`, each computed within one seed), the mean
 * over seeds with its t 95% interval (core `summarize`), and the per-arm means of the main metrics.
 *
 *   npx tsx scripts/exploreFindings.ts DIR [POLICY]
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarize } from '../src/core/stats.js';
import type { RunRecord } from '../src/experiments/types.js';

const dir = process.argv[2];
const policy = process.argv[3] ?? '';
if (!dir) {
  process.stderr.write('usage: npx tsx scripts/exploreFindings.ts DIR [POLICY]\n');
  process.exit(2);
}
const records: RunRecord[] = readdirSync(dir)
  .filter((f) => f.endsWith('.json') && f.startsWith(policy))
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as RunRecord);
if (records.length === 0) {
  process.stderr.write(`no records in ${dir}\n`);
  process.exit(1);
}
const keys = Object.keys(records[0]?.metrics ?? {});
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3));
process.stdout.write(
  `${records.length} seeds: ${records
    .map((r) => r.seed)
    .sort((a, b) => a - b)
    .join(',')}\n`,
);
for (const key of keys) {
  const values = records.map((r) => r.metrics[key]).filter((v): v is number => typeof v === 'number');
  if (values.length < 2) continue;
  const s = summarize(values, key);
  const paired = key.includes('_minus_');
  const excludesZero = paired && (s.ci95[0] > 0 || s.ci95[1] < 0);
  process.stdout.write(
    `${key}\t${fmt(s.mean)} [${fmt(s.ci95[0])}, ${fmt(s.ci95[1])}] n=${s.n}${values.length < records.length ? ` (of ${records.length})` : ''}${excludesZero ? ' *' : ''}\n`,
  );
}
