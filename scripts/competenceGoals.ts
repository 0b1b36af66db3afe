/**
 * The warm start's competence goals (issue 29), per seed, from the per-seed records of the
 * warm-start manifest (docs/findings/warm-start.json) that `labs findings warm-start` writes:
 *
 *     npx tsx scripts/competenceGoals.ts runs/findings/warm-start/discovery
 *     npx tsx scripts/competenceGoals.ts runs/findings/warm-start/confirmation
 *
 * Reads DIR/<run>/seeds/<seed>.json for every run in DIR (a `mask` record with `policy=neural`) and
 * prints one markdown row per run:
 * - after pretraining (init=sft only): the seeds whose held-out pass rate is inside [0.1, 0.8] at
 *   every level (`metrics.pretrain_pass_rate.level_k`), and each level's range over seeds;
 * - after RL (the `correct` arm): the seeds with level-3 success ≥ 0.5 (goal: ≥ 80% of seeds), and
 *   the between-seed sample sd of final held-out success (`eval_success.correct`) with its ratio to
 *   the run named `*scratch*` in the same directory (goal: ≤ 0.5).
 * A seed file without one of these metrics is an error naming the file and the key.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const LEVELS = [1, 2, 3] as const;
const BAND: [number, number] = [0.1, 0.8];

type Metrics = Record<string, number>;

function seedMetrics(dir: string, run: string): Map<number, Metrics> {
  const seedDir = join(dir, run, 'seeds');
  const out = new Map<number, Metrics>();
  for (const f of readdirSync(seedDir).filter((n) => /^\d+\.json$/.test(n))) {
    const record = JSON.parse(readFileSync(join(seedDir, f), 'utf8')) as { metrics?: Metrics };
    if (!record.metrics) throw new Error(`${join(seedDir, f)}: no metrics object`);
    out.set(Number(f.slice(0, -5)), record.metrics);
  }
  return new Map([...out].sort((a, b) => a[0] - b[0]));
}

function metric(m: Metrics, key: string, where: string): number {
  const v = m[key];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new Error(`${where}: metrics.${key} missing or not finite`);
  return v;
}

function sd(xs: number[]): number {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1));
}

const f3 = (x: number) => x.toFixed(3);
const out = (line: string) => process.stdout.write(`${line}\n`);

function main(dir: string): void {
  const runs = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const scratch = runs.find((r) => r.includes('scratch'));
  const sdOf = (run: string) =>
    sd([...seedMetrics(dir, run)].map(([s, m]) => metric(m, 'eval_success.correct', `${run} seed ${s}`)));
  const scratchSd = scratch ? sdOf(scratch) : null;
  out(
    '| run | seeds | pretrained pass rate in [0.1, 0.8] at every level | level 1 / 2 / 3 pretrained (min–max) | level-3 success ≥ 0.5 after RL | sd of final held-out success | ÷ scratch sd |',
  );
  out('|---|---|---|---|---|---|---|');
  for (const run of runs) {
    const seeds = seedMetrics(dir, run);
    const n = seeds.size;
    const rows = [...seeds];
    const pretrained = rows.every(([, m]) => 'pretrain_pass_rate.level_1' in m);
    let band = '—';
    let ranges = '—';
    if (pretrained) {
      const per = rows.map(([s, m]) =>
        LEVELS.map((l) => metric(m, `pretrain_pass_rate.level_${l}`, `${run} seed ${s}`)),
      );
      const inBand = per.filter((p) => p.every((x) => x >= BAND[0] && x <= BAND[1])).length;
      const outside = rows
        .filter((_, i) => !(per[i] as number[]).every((x) => x >= BAND[0] && x <= BAND[1]))
        .map(([s]) => s);
      band = `${inBand} of ${n}${outside.length ? ` (outside: seed ${outside.join(', ')})` : ''}`;
      ranges = LEVELS.map((_, k) => {
        const xs = per.map((p) => p[k] as number);
        return `${f3(Math.min(...xs))}–${f3(Math.max(...xs))}`;
      }).join(' / ');
    }
    const level3 = rows.filter(
      ([s, m]) => metric(m, 'eval_success_level_3.correct', `${run} seed ${s}`) >= 0.5,
    ).length;
    const runSd = sdOf(run);
    const ratio = scratchSd && run !== scratch ? f3(runSd / scratchSd) : '—';
    out(
      `| ${run} | ${n} | ${band} | ${ranges} | ${level3} of ${n} (${Math.round((100 * level3) / n)}%) | ${f3(runSd)} | ${ratio} |`,
    );
  }
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write(
    'usage: npx tsx scripts/competenceGoals.ts DIR   (a phase directory of labs findings warm-start)\n',
  );
  process.exit(2);
}
main(dir);
