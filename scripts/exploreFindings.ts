/**
 * Paired results of the explore experiment over seeds, from the per-seed JSON records written by
 * `bash scripts/exploreSeeds.sh DIR POLICY FIRST LAST [...]`:
 *
 *   npx tsx scripts/exploreFindings.ts DIR [CONTROL_DIR]
 *
 * For each section present in the records it prints the per-arm means over seeds (with the
 * project's summary interval: percentile bootstrap over seeds for a rate, t otherwise;
 * `summarizeAcrossSeeds`; tokens per success, heavy-tailed and undefined in a seed without a
 * success, as the median over the seeds that have one) and the family of paired comparisons of that section (`compareSeries`):
 * diff = mean over seeds of arm − baseline, paired by seed (seeds where either value is missing
 * are left out; n says how many remain), ci95 = paired BCa bootstrap (10,000 resamples), p =
 * two-sided sign-flip permutation test (exact up to 20 seeds), p_holm = Holm's adjustment across
 * that section's family. `*` marks p_holm < 0.05. Families:
 *
 * - levers: every arm vs tau 1, beta 0, IS off on valid_action_rate, train_success, entropy and
 *   eval_success; plus IS on vs IS off at each (tau, beta) on eval_success. IS-on arms at tau 1
 *   are left out (the IS weights are exactly 1 there: they repeat the IS-off arm).
 * - task_classes: each arm vs uniform on the final pass rate of each class (sometimes, never).
 * - curriculum: each arm vs uniform on forgetting_easy, gain_hard, eval_auc and final_level_1 (the
 *   easy skill at the end: forgetting_easy, a drop from the peak, is small when the peak is);
 *   plus each replay arm vs staged (no replay) on the same four.
 * - policy contrast (with CONTROL_DIR, records of the other policy on the same seeds): per
 *   curriculum arm, forgetting_easy of DIR's policy − CONTROL_DIR's, paired by seed (both policies
 *   draw the same tasks for the same seed, except hardest_variance_first, whose draws follow the
 *   policy's results); only seeds present in both directories.
 *
 * All resampling draws from the statistics' own seeded stream, so reruns print the same numbers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareSeries, type PairedSeries, summarizeAcrossSeeds } from '../src/experiments/seedStatistics.js';
import type { Comparison, JsonValue, RunRecord } from '../src/experiments/types.js';

type Row = Record<string, JsonValue>;

const dir = process.argv[2];
const controlDir = process.argv[3];
if (!dir) {
  process.stderr.write('usage: npx tsx scripts/exploreFindings.ts DIR [CONTROL_DIR]\n');
  process.exit(2);
}
const readRecords = (d: string): RunRecord[] =>
  readdirSync(d)
    .filter((f) => f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(d, f), 'utf8')) as RunRecord)
    .sort((a, b) => a.seed - b.seed);
const records = readRecords(dir);
if (records.length === 0) {
  process.stderr.write(`no records in ${dir}\n`);
  process.exit(1);
}
const out = (s: string) => process.stdout.write(`${s}\n`);
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(1) : x.toFixed(3));
const sign = (x: number) => (x > 0 ? `+${fmt(x)}` : fmt(x));
const num = (v: JsonValue | undefined): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : null;

out(`${records.length} seeds: ${records.map((r) => r.seed).join(',')} (policy ${records[0]?.config.policy})`);

/** Mean [interval] over the seeds where the value is a finite number; the count when some lack it. */
function cell(values: (number | null)[], key: string): string {
  const xs = values.filter((v): v is number => v !== null);
  if (xs.length === 0) return 'n/a';
  const s = summarizeAcrossSeeds(xs, key);
  const n = xs.length < values.length ? ` (${xs.length} seeds)` : '';
  return xs.length < 2 ? `${fmt(s.mean)}${n}` : `${fmt(s.mean)} [${fmt(s.ci95[0])}, ${fmt(s.ci95[1])}]${n}`;
}

/** Median over the seeds with a finite value (tokens per success: heavy-tailed, undefined without a success). */
function median(values: (number | null)[]): string {
  const xs = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (xs.length === 0) return 'n/a';
  const m =
    xs.length % 2
      ? (xs[(xs.length - 1) / 2] as number)
      : ((xs[xs.length / 2 - 1] as number) + (xs[xs.length / 2] as number)) / 2;
  return `median ${fmt(m)}${xs.length < values.length ? ` (${xs.length} seeds)` : ''}`;
}

function printComparisons(title: string, items: PairedSeries[]): void {
  const rows: Comparison[] = compareSeries(items);
  out(`\n${title}: ${rows.length} paired comparisons, Holm across them; * = p_holm < 0.05`);
  for (const r of rows) {
    const star = r.p_holm < 0.05 ? ' *' : '';
    out(
      `  ${r.metric.padEnd(25)} ${`${r.arm} − ${r.baseline}`.padEnd(58)} ${sign(r.diff)} [${fmt(r.ci95[0])}, ${fmt(r.ci95[1])}] p_holm ${r.p_holm.toPrecision(2)} n=${r.n}${star}`,
    );
  }
}

/** Per seed, the row of `table` that `pick` selects (null when the seed has none). */
const perSeed = (table: string, pick: (r: Row) => boolean) =>
  records.map((rec) => (rec.tables[table] ?? []).find(pick) ?? null);
const values = (rows: (Row | null)[], key: string) => rows.map((r) => num(r?.[key]));

// --- (a) levers -------------------------------------------------------------------------------------
if (records.every((r) => r.tables.levers)) {
  // the arms every record has (records run on different grids are compared on their common arms;
  // an arm's numbers do not depend on the grid: each arm starts from the seed's own streams)
  const arms = (records[0]?.tables.levers ?? [])
    .filter((r) => records.every((rec) => (rec.tables.levers ?? []).some((x) => x.arm === r.arm)))
    .map((r) => ({
      arm: r.arm as string,
      tau: r.temperature as number,
      beta: r.entropy_coef as number,
      is: r.is_correction as string,
    }));
  const dropped = (records[0]?.tables.levers ?? []).length - arms.length;
  if (dropped > 0)
    out(`\n(a) levers: ${dropped} arms of seed ${records[0]?.seed} are missing in some records: left out`);
  const metrics = ['valid_action_rate', 'train_success', 'tokens_per_success', 'entropy', 'eval_success'];
  out('\n(a) levers: mean over seeds [interval]');
  out(`| tau | beta | IS | ${metrics.join(' | ')} | eval level 1 / 2 / 3 |`);
  out(`|${'---|'.repeat(metrics.length + 4)}`);
  for (const a of arms) {
    const rows = perSeed('levers', (r) => r.arm === a.arm);
    const levels = [1, 2, 3].map((l) => {
      const xs = values(rows, `eval_success_level_${l}`).filter((v): v is number => v !== null);
      return fmt(xs.reduce((s, x) => s + x, 0) / xs.length);
    });
    out(
      `| ${a.tau} | ${a.beta} | ${a.is} | ${metrics.map((m) => (m === 'tokens_per_success' ? median(values(rows, m)) : cell(values(rows, m), m))).join(' | ')} | ${levels.join(' / ')} |`,
    );
  }
  const base = arms.find((a) => a.tau === 1 && a.beta === 0 && a.is === 'off') ?? arms[0];
  const items: PairedSeries[] = [];
  if (base) {
    const baseRows = perSeed('levers', (r) => r.arm === base.arm);
    for (const m of ['valid_action_rate', 'train_success', 'entropy', 'eval_success'])
      for (const a of arms) {
        // at tau 1 the IS weights are exactly 1: the IS-on arm repeats the IS-off one
        if (a.arm === base.arm || (a.tau === 1 && a.is === 'on')) continue;
        const rows = perSeed('levers', (r) => r.arm === a.arm);
        items.push({
          arm: a.arm,
          baseline: base.arm,
          metric: m,
          armValues: values(rows, m),
          baselineValues: values(baseRows, m),
        });
      }
  }
  for (const a of arms.filter((x) => x.is === 'on' && x.tau !== 1)) {
    const off = a.arm.replace(/_is_on$/, '_is_off');
    items.push({
      arm: a.arm,
      baseline: off,
      metric: 'eval_success',
      armValues: values(
        perSeed('levers', (r) => r.arm === a.arm),
        'eval_success',
      ),
      baselineValues: values(
        perSeed('levers', (r) => r.arm === off),
        'eval_success',
      ),
    });
  }
  printComparisons('(a) levers', items);
}

// --- (b) task classes ---------------------------------------------------------------------------------
if (records.every((r) => r.tables.task_classes)) {
  const arms = [...new Set((records[0]?.tables.task_classes ?? []).map((r) => r.arm as string))];
  const counts = perSeed('task_classes', (r) => r.arm === 'uniform' && r.class === 'sometimes').map(
    (r) => num(r?.tasks) ?? 0,
  );
  const hist = new Map<number, number>();
  for (const c of counts) hist.set(c, (hist.get(c) ?? 0) + 1);
  out(
    `\n(b) task classes: sometimes-solved tasks at init per seed: ${[...hist.entries()]
      .sort((x, y) => x[0] - y[0])
      .map(([c, n]) => `${c} in ${n} seeds`)
      .join(', ')}`,
  );
  out('| arm | sometimes-solved | never-solved |\n|---|---|---|');
  for (const arm of arms) {
    const cls = (c: string) =>
      cell(
        values(
          perSeed('task_classes', (r) => r.arm === arm && r.class === c),
          'final_pass_rate',
        ),
        'final_pass_rate',
      );
    out(`| ${arm} | ${cls('sometimes')} | ${cls('never')} |`);
  }
  const items: PairedSeries[] = [];
  for (const c of ['sometimes', 'never'])
    for (const arm of arms.filter((a) => a !== 'uniform'))
      items.push({
        arm,
        baseline: 'uniform',
        metric: `final_pass_rate_${c}`,
        armValues: values(
          perSeed('task_classes', (r) => r.arm === arm && r.class === c),
          'final_pass_rate',
        ),
        baselineValues: values(
          perSeed('task_classes', (r) => r.arm === 'uniform' && r.class === c),
          'final_pass_rate',
        ),
      });
  printComparisons('(b) task classes', items);
}

// --- (c) curriculum -------------------------------------------------------------------------------------
if (records.every((r) => r.tables.curriculum)) {
  const arms = (records[0]?.tables.curriculum ?? []).map((r) => r.arm as string);
  const metrics = ['forgetting_easy', 'gain_hard', 'eval_auc', 'final_level_1', 'final_level_3'];
  out(`\n(c) curriculum: mean over seeds [interval]\n| arm | ${metrics.join(' | ')} |`);
  out(`|${'---|'.repeat(metrics.length + 1)}`);
  for (const arm of arms) {
    const rows = perSeed('curriculum', (r) => r.arm === arm);
    // gain_hard is a difference (in [-1, 1]): summarised with the t interval
    out(
      `| ${arm} | ${metrics.map((m) => cell(values(rows, m), m === 'gain_hard' ? 'gain_hard_minus_init' : m)).join(' | ')} |`,
    );
  }
  const items: PairedSeries[] = [];
  const pairs = [
    ...arms.filter((a) => a !== 'uniform').map((a) => [a, 'uniform']),
    ...arms.filter((a) => a.startsWith('staged_replay')).map((a) => [a, 'staged']),
  ];
  for (const m of ['forgetting_easy', 'gain_hard', 'eval_auc', 'final_level_1'])
    for (const [arm, baseline] of pairs)
      items.push({
        arm: arm as string,
        baseline: baseline as string,
        metric: m,
        armValues: values(
          perSeed('curriculum', (r) => r.arm === arm),
          m,
        ),
        baselineValues: values(
          perSeed('curriculum', (r) => r.arm === baseline),
          m,
        ),
      });
  printComparisons('(c) curriculum', items);
}

// --- policy contrast on forgetting -------------------------------------------------------------------
if (controlDir && records.every((r) => r.tables.curriculum)) {
  const control = new Map(readRecords(controlDir).map((r) => [r.seed, r]));
  const both = records.filter((r) => control.get(r.seed)?.tables.curriculum);
  const ours = records[0]?.config.policy as string;
  const theirs = control.get(both[0]?.seed ?? -1)?.config.policy as string;
  const arms = (records[0]?.tables.curriculum ?? []).map((r) => r.arm as string);
  const pick = (rec: RunRecord | undefined, arm: string) =>
    num((rec?.tables.curriculum ?? []).find((r) => r.arm === arm)?.forgetting_easy);
  printComparisons(
    `(c) forgetting_easy, ${ours} − ${theirs} policy on seeds ${both.map((r) => r.seed).join(',')}`,
    arms.map((arm) => ({
      arm: `${ours}:${arm}`,
      baseline: `${theirs}:${arm}`,
      metric: 'forgetting_easy',
      armValues: both.map((r) => pick(r, arm)),
      baselineValues: both.map((r) => pick(control.get(r.seed), arm)),
    })),
  );
}
