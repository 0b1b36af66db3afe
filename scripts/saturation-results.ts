/**
 * Paired results of the `saturation` experiment over many seeds, as docs/experiments/saturation.md
 * reports them.
 *
 *   npx tsx src/cli/main.ts run --experiment saturation --seeds 1..30 --json > /tmp/saturation.json
 *   npx tsx scripts/saturation-results.ts /tmp/saturation.json docs/experiments/saturation-seeds.json
 *   npx tsx scripts/saturation-results.ts docs/experiments/saturation-seeds.json   # tables only
 *
 * The first form reads a `--seeds` record and writes the per-seed arm rows (small: the arms table
 * and the <metric>.warmup_end metrics of every seed, no curves) to the second path; both forms print the
 * markdown tables. Per arm and measure: the mean over seeds, then against `binary` the mean paired
 * difference (arm − binary of the same seed), its 95% percentile bootstrap interval (10,000
 * resamples of seeds), the two-sided sign-flip permutation p (exact up to 20 seeds, else 100,000
 * random sign vectors) and Holm's adjustment over every (arm, measure) comparison of the table.
 * Resampling draws from streams of src/random.ts with fixed labels: the same input prints the same
 * numbers.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Rng } from '../src/random.js';

type Row = Record<string, number | string | null>;
interface SeedRows {
  seed: number;
  saturation: Record<string, number>;
  arms: Row[];
}

const MEASURES = [
  'gradient_group_fraction_after_saturation',
  'verify_rate',
  'mean_length',
  'eval_success',
  'eval_success_robust',
] as const;

function load(path: string): { config: Record<string, unknown>; seeds: SeedRows[] } {
  const raw = JSON.parse(readFileSync(path, 'utf8'));
  if (Array.isArray(raw.seeds) && raw.seeds.length && typeof raw.seeds[0] === 'object') return raw;
  if (!Array.isArray(raw.runs)) throw new Error(`${path}: neither a --seeds record nor a seed-rows file`);
  const seeds = raw.runs.map(
    (r: { seed: number; metrics: Record<string, number>; tables: { arms: Row[] } }) => ({
      seed: r.seed,
      saturation: Object.fromEntries(
        Object.entries(r.metrics)
          .filter(([k]) => k.endsWith('.warmup_end'))
          .map(([k, v]) => [k.slice(0, -'.warmup_end'.length), v]),
      ),
      arms: r.tables.arms,
    }),
  );
  return { config: raw.config, seeds };
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/** 95% percentile bootstrap interval of the mean of `d` (resampling seeds). */
function bootstrapCi(d: readonly number[], rng: Rng, resamples = 10_000): [number, number] {
  const n = d.length;
  const means = new Float64Array(resamples);
  for (let b = 0; b < resamples; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += d[rng.int(0, n - 1)] as number;
    means[b] = s / n;
  }
  means.sort();
  return [means[Math.floor(0.025 * resamples)] as number, means[Math.ceil(0.975 * resamples) - 1] as number];
}

/** Two-sided sign-flip permutation p of mean(d) = 0 (exact for n <= 20, else Monte Carlo with +1). */
function signFlipP(d: readonly number[], rng: Rng, permutations = 100_000): number {
  const n = d.length;
  const observed = Math.abs(mean(d));
  const tol = 1e-12 * (1 + observed);
  if (n <= 20) {
    let hits = 0;
    for (let mask = 0; mask < 2 ** n; mask++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += mask & (1 << i) ? -(d[i] as number) : (d[i] as number);
      if (Math.abs(s / n) >= observed - tol) hits++;
    }
    return hits / 2 ** n;
  }
  let hits = 0;
  for (let k = 0; k < permutations; k++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += rng.next() < 0.5 ? -(d[i] as number) : (d[i] as number);
    if (Math.abs(s / n) >= observed - tol) hits++;
  }
  return (hits + 1) / (permutations + 1);
}

/** Holm's step-down adjustment (monotone, capped at 1), in the input order. */
function holm(ps: readonly number[]): number[] {
  const order = ps.map((p, i) => [p, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(ps.length);
  let running = 0;
  order.forEach(([p, i], k) => {
    running = Math.max(running, Math.min(1, (ps.length - k) * p));
    out[i] = running;
  });
  return out;
}

const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

function main(): void {
  const [input, output] = process.argv.slice(2);
  if (!input) {
    process.stderr.write('usage: npx tsx scripts/saturation-results.ts RECORD.json [SEED_ROWS_OUT.json]\n');
    process.exit(2);
  }
  const data = load(input);
  if (output) writeFileSync(output, `${JSON.stringify(data, null, 1)}\n`);
  const { seeds } = data;
  const arms = (seeds[0]?.arms ?? []).map((r) => String(r.arm));
  const value = (s: SeedRows, arm: string, m: string) =>
    Number(s.arms.find((r) => r.arm === arm)?.[m] ?? Number.NaN);
  const lines: string[] = [];
  const sat = (k: string) => seeds.map((s) => s.saturation[k] as number);
  lines.push(
    `${seeds.length} seeds (${seeds[0]?.seed}..${seeds[seeds.length - 1]?.seed}). At the branch point (last 10 warm-up updates): train success ${f(mean(sat('train_success')))} (seed range ${f(Math.min(...sat('train_success')))}..${f(Math.max(...sat('train_success')))}), all-right groups ${f(mean(sat('all_right_fraction')))} (${f(Math.min(...sat('all_right_fraction')))}..${f(Math.max(...sat('all_right_fraction')))}), verify rate ${f(mean(sat('verify_rate')))} (${f(Math.min(...sat('verify_rate')))}..${f(Math.max(...sat('verify_rate')))}).`,
    '',
  );
  // means per arm
  lines.push(`| arm | ${[...MEASURES, 'ranker_spearman'].join(' | ')} |`);
  lines.push(`|---|${[...MEASURES, 'ranker_spearman'].map(() => '---').join('|')}|`);
  for (const arm of arms) {
    const cells = [...MEASURES, 'ranker_spearman'].map((m) => {
      const xs = seeds.map((s) => value(s, arm, m)).filter(Number.isFinite);
      return xs.length ? `${f(mean(xs))}${xs.length < seeds.length ? ` (${xs.length} seeds)` : ''}` : 'n/a';
    });
    lines.push(`| ${arm} | ${cells.join(' | ')} |`);
  }
  // paired differences against binary
  const rng = new Rng(20260101);
  const rows: { arm: string; m: string; diff: number; ci: [number, number]; p: number }[] = [];
  for (const arm of arms.filter((a) => a !== 'binary')) {
    for (const m of MEASURES) {
      const d = seeds.map((s) => value(s, arm, m) - value(s, 'binary', m));
      rows.push({
        arm,
        m,
        diff: mean(d),
        ci: bootstrapCi(d, rng.fork(`bootstrap/${arm}/${m}`)),
        p: signFlipP(d, rng.fork(`signflip/${arm}/${m}`)),
      });
    }
  }
  const adjusted = holm(rows.map((r) => r.p));
  lines.push(
    '',
    '| arm − binary | measure | mean diff | 95% CI (bootstrap) | p (sign-flip) | p Holm |',
    '|---|---|---|---|---|---|',
  );
  rows.forEach((r, i) => {
    const digits = r.m === 'mean_length' ? 2 : 3;
    lines.push(
      `| ${r.arm} | ${r.m} | ${f(r.diff, digits)} | [${f(r.ci[0], digits)}, ${f(r.ci[1], digits)}] | ${r.p < 1e-4 ? r.p.toExponential(1) : f(r.p, 4)} | ${f(adjusted[i] as number, 4)} |`,
    );
  });
  // per-seed signs of the robust-success difference: how consistent
  lines.push('');
  for (const arm of arms.filter((a) => a !== 'binary')) {
    const d = seeds.map(
      (s) => value(s, arm, 'eval_success_robust') - value(s, 'binary', 'eval_success_robust'),
    );
    const v = seeds.map((s) => value(s, arm, 'verify_rate') - value(s, 'binary', 'verify_rate'));
    lines.push(
      `- ${arm}: robust success above binary in ${d.filter((x) => x > 0).length}, equal in ${d.filter((x) => x === 0).length}, below in ${d.filter((x) => x < 0).length} of ${d.length} seeds; verify rate above / equal / below in ${v.filter((x) => x > 0).length} / ${v.filter((x) => x === 0).length} / ${v.filter((x) => x < 0).length}.`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

main();
