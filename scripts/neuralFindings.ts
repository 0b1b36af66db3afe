/**
 * Builds the tabular-vs-neural findings table of docs/experiments/neural.md from single-seed
 * records: for each experiment and each `<measure>.<arm>_minus_<baseline>` metric, the mean
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
    if (!metric.includes('_minus_') || typeof value !== 'number') continue;
    // `<measure>.<arm>_minus_<baseline>`; older records wrote `paired.<arm>_minus_<baseline>.<measure>`
    const old = /^paired\.([^.]+)\.(.+)$/.exec(metric);
    const key = `${rec.experiment}|${old ? `${old[2]}.${old[1]}` : metric}`;
    const perPolicy = byKey.get(key) ?? new Map<string, Map<number, number>>();
    byKey.set(key, perPolicy);
    const perSeed = perPolicy.get(policy) ?? new Map<number, number>();
    perPolicy.set(policy, perSeed);
    perSeed.set(rec.seed, value);
  }
}

/** A difference of two rates lies in [-1, 1]; its interval is clipped there (few seeds give wide t intervals). */
const isRate = (metric: string) => /^(eval_success|success|[a-z_]*rate)\b/.test(metric);
const cell = (metric: string, values: number[] | undefined) => {
  if (!values || values.length === 0) return 'not run';
  const s = summarize(values);
  const f = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3));
  const [lo, hi] = isRate(metric) ? [Math.max(-1, s.ci95[0]), Math.min(1, s.ci95[1])] : s.ci95;
  return `${f(s.mean)} [${f(lo)}, ${f(hi)}] (n=${s.n})`;
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
  lines.push(
    `| ${experiment} | ${metric} | ${cell(metric as string, values('table'))} | ${cell(metric as string, values('neural'))} |`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
