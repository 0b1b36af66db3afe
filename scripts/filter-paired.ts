/**
 * Prints the paired tables of docs/experiments/filter.md from the records that
 * scripts/filter-seeds.sh writes (runs/filter-seeds/<name>/record.json, one MultiSeedRecord each):
 * per arm the mean over seeds of every `tables.arms` column, and per arm and measure the paired
 * difference against `keep` (same seed): mean, t-based 95% CI (core `summarize`), and in how many
 * seeds it is > 0 / < 0. Then the zero_variance_rules table summed over the seeds.
 *   npx tsx scripts/filter-paired.ts [name ...]
 */
import { existsSync, readFileSync } from 'node:fs';
import { summarize } from '../src/core/stats.js';
import { FILTER_ARMS } from '../src/experiments/filter/filter.js';
import type { MultiSeedRecord } from '../src/experiments/types.js';

const ARMS = FILTER_ARMS;
const COLUMNS = [
  'success_per_update_auc',
  'success_per_generated_auc',
  'eval_success',
  'generated_per_update',
  'gradient_sample_fraction',
  'denominator_mean',
  'kl_ref',
];
const PAIRED = ['success_per_update_auc', 'success_per_generated_auc', 'eval_success', 'kl_ref'];
const f = (x: number, d = 4) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');

const names = process.argv.slice(2).length
  ? process.argv.slice(2)
  : ['agent_binary', 'token_binary', 'agent_noisy_exact', 'agent_noisy_range', 'token_noisy_range'];
for (const name of names) {
  const path = `runs/filter-seeds/${name}/record.json`;
  if (!existsSync(path)) {
    process.stdout.write(`## ${name}: ${path} missing\n\n`);
    continue;
  }
  const rec = JSON.parse(readFileSync(path, 'utf8')) as MultiSeedRecord;
  const runs = rec.runs;
  const value = (run: (typeof runs)[number], col: string, arm: string) =>
    run.metrics[`${col}.${arm}`] as number;
  const c = rec.config;
  process.stdout.write(
    `## ${name}: env=${c.env}, ${c.updates} updates x ${c.groups_per_update} x ${c.group_size}, reward=${c.reward}, rule=${c.zero_variance_rule}, seeds ${rec.seeds[0]}..${rec.seeds[rec.seeds.length - 1]} (n=${runs.length})\n\n`,
  );
  process.stdout.write(`| arm | ${COLUMNS.join(' | ')} |\n|---|${COLUMNS.map(() => '---').join('|')}|\n`);
  for (const arm of ARMS) {
    const cells = COLUMNS.map((col) => f(summarize(runs.map((r) => value(r, col, arm))).mean));
    process.stdout.write(`| ${arm} | ${cells.join(' | ')} |\n`);
  }
  process.stdout.write('\npaired difference arm - keep (same seed): mean [t 95% CI] (seeds >0 / <0)\n\n');
  process.stdout.write(`| arm | ${PAIRED.join(' | ')} |\n|---|${PAIRED.map(() => '---').join('|')}|\n`);
  for (const arm of ARMS.slice(1)) {
    const cells = PAIRED.map((col) => {
      const d = runs.map((r) => value(r, col, arm) - value(r, col, 'keep'));
      const s = summarize(d);
      const up = d.filter((x) => x > 0).length;
      const down = d.filter((x) => x < 0).length;
      return `${f(s.mean)} [${f(s.ci95[0])}, ${f(s.ci95[1])}] (${up}/${down})`;
    });
    process.stdout.write(`| ${arm} | ${cells.join(' | ')} |\n`);
  }
  {
    // the KL masking question on its own: kl_masked against kl (same seed)
    const cells = PAIRED.map((col) => {
      const d = runs.map((r) => value(r, col, 'kl_masked') - value(r, col, 'kl'));
      const s = summarize(d);
      return `${f(s.mean)} [${f(s.ci95[0])}, ${f(s.ci95[1])}] (${d.filter((x) => x > 0).length}/${d.filter((x) => x < 0).length})`;
    });
    process.stdout.write(`| kl_masked - kl | ${cells.join(' | ')} |\n`);
  }
  const caps = runs.map((r) => r.metrics['cap_hit_updates.dynamic_sampling'] as number);
  process.stdout.write(
    `\ndynamic_sampling hit its cap in ${f(summarize(caps).mean, 1)} of ${c.updates} updates on average (min ${Math.min(...caps)}, max ${Math.max(...caps)})\n`,
  );
  const rules = new Map<string, Record<string, number>>();
  for (const r of runs) {
    for (const row of r.tables.zero_variance_rules ?? []) {
      const key = `${row.rule} | ${row.scope}`;
      const acc = rules.get(key) ?? {};
      for (const k of [
        'groups',
        'zero_variance_groups',
        'zeroed_rows',
        'signal_rows_zeroed',
        'noise_only_groups',
        'noise_only_groups_with_advantage',
      ]) {
        acc[k] = (acc[k] ?? 0) + (row[k] as number);
      }
      acc.max_abs = Math.max(acc.max_abs ?? 0, row.noise_only_max_abs_advantage as number);
      acc.mean_abs_sum = (acc.mean_abs_sum ?? 0) + (row.noise_only_mean_abs_advantage as number);
      rules.set(key, acc);
    }
  }
  process.stdout.write(
    `\nzero_variance_rules summed over seeds (tol ${c.zero_variance_tol}, noise ${c.reward_noise}):\n\n| rule | scope | groups | zero_variance_groups | zeroed_rows | signal_rows_zeroed | noise_only_groups | noise_only_groups_with_advantage | max abs adv (noise-only) | mean abs adv (noise-only, mean over seeds) |\n|---|---|---|---|---|---|---|---|---|---|\n`,
  );
  for (const [key, a] of rules) {
    process.stdout.write(
      `| ${key} | ${a.groups} | ${a.zero_variance_groups} | ${a.zeroed_rows} | ${a.signal_rows_zeroed} | ${a.noise_only_groups} | ${a.noise_only_groups_with_advantage} | ${f(a.max_abs as number, 3)} | ${f((a.mean_abs_sum as number) / runs.length, 3)} |\n`,
    );
  }
  process.stdout.write('\n');
}
