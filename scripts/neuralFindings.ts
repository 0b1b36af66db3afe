/**
 * Builds the tabular-vs-neural findings table of docs/experiments/neural.md from single-seed
 * records: for each experiment and each `paired.<arm>_minus_<baseline>.<measure>` metric, the mean
 * paired difference over seeds with its t-based 95% interval (core `summarize`), once for the
 * records with policy=table and once for policy=neural.
 *
 *   npx tsx scripts/neuralFindings.ts DIR
 *
 * DIR holds one folder per run, each with a record.json written by
 * `labs run --experiment E --seed S --set policy=P --out DIR/E_P_S` (scripts/neuralSeeds.sh).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { summarize } from '../src/core/stats.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: tsx scripts/neuralFindings.ts DIR');

type Rec = {
  experiment: string;
  seed: number;
  config: { policy?: string };
  metrics: Record<string, unknown>;
};
const byKey = new Map<string, Map<string, Map<number, number>>>(); // experiment|metric -> policy -> seed -> value
for (const name of readdirSync(dir).sort()) {
  let rec: Rec;
  try {
    rec = JSON.parse(readFileSync(join(dir, name, 'record.json'), 'utf8')) as Rec;
  } catch {
    continue;
  }
  const policy = rec.config.policy ?? 'table';
  for (const [metric, value] of Object.entries(rec.metrics)) {
    if (!metric.startsWith('paired.') || typeof value !== 'number') continue;
    const key = `${rec.experiment}|${metric.slice('paired.'.length)}`;
    const perPolicy = byKey.get(key) ?? new Map<string, Map<number, number>>();
    byKey.set(key, perPolicy);
    const perSeed = perPolicy.get(policy) ?? new Map<number, number>();
    perPolicy.set(policy, perSeed);
    perSeed.set(rec.seed, value);
  }
}

const cell = (values: number[] | undefined) => {
  if (!values || values.length === 0) return 'not run';
  const s = summarize(values);
  const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3));
  return `${f(s.mean)} [${f(s.ci95[0])}, ${f(s.ci95[1])}] (n=${s.n})`;
};
const lines = [
  '| experiment | paired difference | tabular: mean [95% CI] | neural: mean [95% CI] |',
  '|---|---|---|---|',
];
for (const [key, perPolicy] of [...byKey].sort()) {
  const [experiment, metric] = key.split('|');
  const values = (p: string) => {
    const m = perPolicy.get(p);
    return m ? [...m.values()] : undefined;
  };
  lines.push(`| ${experiment} | ${metric} | ${cell(values('table'))} | ${cell(values('neural'))} |`);
}
process.stdout.write(`${lines.join('\n')}\n`);
