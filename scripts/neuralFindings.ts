/**
 * Builds the tabular-vs-neural findings table of docs/experiments/neural.md from single-seed
 * records. Each record already holds its own paired differences `<measure>.<arm>_minus_<baseline>`
 * (arm minus baseline within the seed); over seeds, per policy, this prints their mean, the BCa
 * bootstrap 95% interval and the sign-flip p-value (src/stats `pairedComparison` against a zero
 * baseline: the same statistics as `labs run --seeds` records), with Holm's adjustment across all
 * comparisons of one experiment and one policy. Per-arm means of the headline measures follow.
 *
 *   npx tsx scripts/neuralFindings.ts DIR [DIR...] [--seeds FIRST..LAST]
 *
 * Each DIR holds one folder per run, each with a record.json written by
 * `labs run --experiment E --seed S --set policy=P --out DIR/E_P_S` (scripts/neuralSeeds.sh).
 * `--seeds` keeps only those seeds, so a table can be restricted to the seeds every run finished.
 * Streams: `Rng(0)` forked by `experiment|policy|metric`, so the numbers are reproducible.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from '../src/random.js';
import { holmAdjust } from '../src/stats/holm.js';
import { type PairedComparison, pairedComparison } from '../src/stats/paired.js';

const args = process.argv.slice(2);
const seedsAt = args.indexOf('--seeds');
const seedsArg = seedsAt >= 0 ? args[seedsAt + 1] : undefined;
const dirs = seedsAt >= 0 ? [...args.slice(0, seedsAt), ...args.slice(seedsAt + 2)] : args;
if (dirs.length === 0)
  throw new Error('usage: tsx scripts/neuralFindings.ts DIR [DIR...] [--seeds FIRST..LAST]');
const seedRange = seedsArg ? (/^(\d+)\.\.(\d+)$/.exec(seedsArg)?.slice(1).map(Number) ?? null) : null;
if (seedsArg && !seedRange) throw new Error(`--seeds: expected FIRST..LAST, got ${seedsArg}`);
const keepSeed = (seed: number) =>
  !seedRange || (seed >= (seedRange[0] as number) && seed <= (seedRange[1] as number));

type Rec = {
  experiment: string;
  seed: number;
  config: { policy?: string };
  metrics: Record<string, unknown>;
};
/** experiment -> policy -> metric -> seed -> value */
const values = new Map<string, Map<string, Map<string, Map<number, number>>>>();
const at = <K, V>(m: Map<K, V>, k: K, make: () => V): V => {
  const v = m.get(k) ?? make();
  m.set(k, v);
  return v;
};
const runDirs = dirs.flatMap((dir) => readdirSync(dir).map((name) => join(dir, name)));
for (const runDir of runDirs.sort()) {
  let rec: Rec;
  try {
    rec = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as Rec;
  } catch {
    continue;
  }
  if (!keepSeed(rec.seed)) continue;
  const policy = rec.config.policy ?? 'table';
  const perMetric = at(
    at(values, rec.experiment, () => new Map()),
    policy,
    () => new Map(),
  );
  for (const [metric, value] of Object.entries(rec.metrics)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    at(perMetric, metric, () => new Map()).set(rec.seed, value);
  }
}

const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3));
const pFmt = (p: number) => (p < 0.001 ? '<0.001' : p.toFixed(3));

/** Paired comparisons of one experiment and policy, Holm-adjusted across them. */
function comparisons(experiment: string, policy: string) {
  const perMetric = values.get(experiment)?.get(policy) ?? new Map<string, Map<number, number>>();
  const rows: { metric: string; c: PairedComparison }[] = [];
  for (const [metric, perSeed] of [...perMetric].sort(([a], [b]) => a.localeCompare(b))) {
    if (!metric.includes('_minus_') || perSeed.size < 2) continue;
    const d = [...perSeed.values()];
    const rng = new Rng(0).fork(`${experiment}|${policy}|${metric}`);
    rows.push({ metric, c: pairedComparison(d, new Array(d.length).fill(0), rng, { field: metric }) });
  }
  const adjusted = holmAdjust(rows.map((r) => r.c.p));
  return new Map(rows.map((r, i) => [r.metric, { ...r.c, pHolm: adjusted[i] as number }]));
}

const cell = (c: (PairedComparison & { pHolm: number }) | undefined) =>
  c
    ? `${f(c.diff)} [${f(c.ci95[0])}, ${f(c.ci95[1])}] p=${pFmt(c.pHolm)} (n=${c.n})${c.pHolm < 0.05 ? ' *' : ''}`
    : 'not run';

const lines = [
  '| experiment | paired difference | tabular: mean [95% BCa CI] Holm p (n) | neural: mean [95% BCa CI] Holm p (n) |',
  '|---|---|---|---|',
];
for (const experiment of [...values.keys()].sort()) {
  const table = comparisons(experiment, 'table');
  const neural = comparisons(experiment, 'neural');
  const metrics = [...new Set([...table.keys(), ...neural.keys()])].sort();
  for (const metric of metrics) {
    lines.push(`| ${experiment} | ${metric} | ${cell(table.get(metric))} | ${cell(neural.get(metric))} |`);
  }
}
lines.push('', '`*`: Holm-adjusted sign-flip p < 0.05 within the experiment and policy.', '');

// Per-arm means of every non-difference measure that has one value per seed.
lines.push('| experiment | measure | tabular mean (n) | neural mean (n) |', '|---|---|---|---|');
for (const experiment of [...values.keys()].sort()) {
  const byPolicy = values.get(experiment) as Map<string, Map<string, Map<number, number>>>;
  const metrics = new Set<string>();
  for (const perMetric of byPolicy.values())
    for (const metric of perMetric.keys()) if (!metric.includes('_minus_')) metrics.add(metric);
  for (const metric of [...metrics].sort()) {
    const mean = (policy: string) => {
      const perSeed = byPolicy.get(policy)?.get(metric);
      if (!perSeed || perSeed.size === 0) return 'not run';
      const v = [...perSeed.values()];
      return `${f(v.reduce((a, b) => a + b, 0) / v.length)} (${v.length})`;
    };
    lines.push(`| ${experiment} | ${metric} | ${mean('table')} | ${mean('neural')} |`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
