/**
 * Prints the result tables of docs/experiments/clip.md from a multi-seed record of the clip
 * experiment (`labs run --experiment clip --seeds 1..20 --out DIR`, then
 * `npx tsx scripts/clipDocTables.ts DIR/record.json`). Every interval is the t-based 95% CI of the
 * mean across seeds (core `summarize`); "paired" intervals are over the per-seed differences of two
 * arms that share the seed's warm-up, batches and streams.
 */
import { readFileSync } from 'node:fs';
import { summarize } from '../src/core/stats.js';
import {
  CLIP_TAIL_METRICS,
  inHeadlineSlice,
  klMinusNoneKey,
  sweepMetricKey,
} from '../src/experiments/clip/clipRecord.js';
import type { JsonValue, MultiSeedRecord } from '../src/experiments/types.js';

type Row = Record<string, JsonValue>;

const path = process.argv[2];
if (!path) {
  process.stderr.write(
    'usage: tsx scripts/clipDocTables.ts RECORD.json (a --seeds record of the clip experiment)\n',
  );
  process.exit(2);
}
const record = JSON.parse(readFileSync(path, 'utf8')) as MultiSeedRecord;
if (record.experiment !== 'clip' || !Array.isArray(record.runs)) {
  process.stderr.write(`${path}: not a multi-seed record of the clip experiment\n`);
  process.exit(2);
}
const runs = record.runs;
const n = runs.length;

function sig(x: number, digits = 3): string {
  if (!Number.isFinite(x)) return 'n/a';
  if (x !== 0 && Math.abs(x) < 1e-3) return x.toExponential(digits - 1);
  return Number(x.toPrecision(digits)).toString();
}

/** `mean [lo, hi]` of finite values across seeds (n/a when fewer than 2). */
function ci(values: number[]): string {
  const xs = values.filter(Number.isFinite);
  if (xs.length < 2) return 'n/a';
  const s = summarize(xs);
  return `${sig(s.mean)} [${sig(s.ci95[0])}, ${sig(s.ci95[1])}]${xs.length < n ? ` (n=${xs.length})` : ''}`;
}

function metric(key: string): number[] {
  return runs.map((r) => r.metrics[key] as number);
}

/** The sweep row of each seed matching `where`. */
function rows(where: (r: Row) => boolean): Row[][] {
  return runs.map((r) => (r.tables.sweep ?? []).filter(where));
}

function column(where: (r: Row) => boolean, field: string): number[] {
  return rows(where).map((rs) => {
    const v = rs[0]?.[field];
    return typeof v === 'number' ? v : Number.NaN;
  });
}

function diff(a: number[], b: number[]): number[] {
  return a.map((x, i) => x - (b[i] as number));
}

function table(headers: string[], body: string[][]): string {
  return [
    `| ${headers.join(' | ')} |`,
    `|${headers.map(() => '---').join('|')}|`,
    ...body.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

const first = runs[0];
if (!first) process.exit(1);
const cfg = record.config as Record<string, JsonValue>;
const sweep0 = first.tables.sweep ?? [];
const head0 = sweep0[0] as Row;
const clips = [...new Set(sweep0.map((r) => r.clip as string))];
const epochs = [...new Set(sweep0.map((r) => r.epochs as number))];
const last = Math.max(...epochs);
const prev = epochs[epochs.length - 2] as number;
const headline = (r: Row) => inHeadlineSlice(head0, r);

const out: string[] = [];
out.push(
  `Seeds ${record.seeds[0]}..${record.seeds[n - 1]} (${n} runs); headline slice: ${head0.optimizer} lr ${head0.lr}, ${head0.mini_batches} mini-batch, dual clip ${head0.dual_clip ? 'on' : 'off'}; mean [95% CI] across seeds.`,
);
out.push('', '### True KL(pi_old || pi_new) by PPO epochs', '');
out.push(
  table(
    ['epochs', ...clips],
    epochs.map((e) => [String(e), ...clips.map((c) => ci(metric(sweepMetricKey('kl_true_mean', c, e))))]),
  ),
);
out.push('', '### Paired: clip minus no clip, true KL', '');
const clipped = clips.filter((c) => c !== 'none');
out.push(
  table(
    ['epochs', ...clipped],
    epochs.map((e) => [String(e), ...clipped.map((c) => ci(metric(klMinusNoneKey(c, e))))]),
  ),
);
out.push(
  '',
  `### Does the KL level off? KL after ${last} minus after ${prev} epochs (paired within seed)`,
  '',
);
out.push(
  table(
    [
      'clip',
      `KL(${prev})`,
      `KL(${last})`,
      `KL(${last}) − KL(${prev})`,
      `ratio ${last}/${prev} (mean of per-seed ratios)`,
    ],
    clips.map((c) => {
      const a = metric(sweepMetricKey('kl_true_mean', c, prev));
      const b = metric(sweepMetricKey('kl_true_mean', c, last));
      return [c, ci(a), ci(b), ci(diff(b, a)), ci(b.map((x, i) => x / (a[i] as number)))];
    }),
  ),
);
const tails = CLIP_TAIL_METRICS;
out.push('', `### After ${last} epochs, headline slice`, '');
out.push(
  table(
    ['clip', ...tails],
    clips.map((c) => [
      c,
      ...tails.map((f) => ci(column((r) => headline(r) && r.clip === c && r.epochs === last, f))),
    ]),
  ),
);
out.push('', '### After 1 and 16 epochs, headline slice', '');
for (const e of epochs.filter((x) => x === 1 || x === 16)) {
  out.push(
    table(
      ['clip', 'epochs', 'kl_true_mean', 'ratio_max', 'frac_outside_clip', 'update_norm'],
      clips.map((c) => [
        c,
        String(e),
        ...['kl_true_mean', 'ratio_max', 'frac_outside_clip', 'update_norm'].map((f) =>
          ci(column((r) => headline(r) && r.clip === c && r.epochs === e, f)),
        ),
      ]),
    ),
    '',
  );
}
out.push(`### verl's ppo_kl vs the true KL (clip 0.2, headline slice)`, '');
out.push(
  table(
    ['epochs', 'true KL', 'ppo_kl at the policy', 'ppo_kl − true (paired)', 'ppo_kl as verl logs it'],
    epochs.map((e) => {
      const w = (r: Row) => headline(r) && r.clip === 'eps_0.2' && r.epochs === e;
      const t = column(w, 'kl_true_mean');
      const p = column(w, 'ppo_kl');
      return [String(e), ci(t), ci(p), ci(diff(p, t)), ci(column(w, 'ppo_kl_logged'))];
    }),
  ),
);
out.push('', `### The grid at clip 0.2 and ${last} epochs`, '');
const grid = sweep0.filter((r) => r.clip === 'eps_0.2' && r.epochs === last);
out.push(
  table(
    [
      'optimizer',
      'lr',
      'mini_batches',
      'dual_clip',
      'kl_true_mean',
      'ratio_max',
      'frac_outside_clip',
      'update_norm',
      'KL no clip',
    ],
    grid.map((g) => {
      const same = (r: Row) =>
        r.optimizer === g.optimizer &&
        r.lr === g.lr &&
        r.mini_batches === g.mini_batches &&
        r.dual_clip === g.dual_clip &&
        r.epochs === last;
      return [
        String(g.optimizer),
        String(g.lr),
        String(g.mini_batches),
        g.dual_clip ? 'on' : 'off',
        ...['kl_true_mean', 'ratio_max', 'frac_outside_clip', 'update_norm'].map((f) =>
          ci(column((r) => same(r) && r.clip === 'eps_0.2', f)),
        ),
        ci(column((r) => same(r) && r.clip === 'none', 'kl_true_mean')),
      ];
    }),
  ),
);
out.push(
  '',
  `### Paired: 4 mini-batches minus 1, and dual clip on minus off (clip 0.2 and none, ${last} epochs, true KL)`,
  '',
);
const pairedRows: string[][] = [];
for (const c of ['eps_0.2', 'none']) {
  for (const opt of [...new Set(grid.map((g) => `${g.optimizer} ${g.lr}`))]) {
    const [o, lr] = opt.split(' ');
    const k = (mb: number, dual: boolean) =>
      column(
        (r) =>
          r.clip === c &&
          r.epochs === last &&
          r.optimizer === o &&
          String(r.lr) === lr &&
          r.mini_batches === mb &&
          r.dual_clip === dual,
        'kl_true_mean',
      );
    pairedRows.push([
      c,
      opt,
      ci(diff(k(4, true), k(1, true))),
      ci(diff(k(1, true), k(1, false))),
      ci(diff(k(4, true), k(4, false))),
    ]);
  }
}
out.push(
  table(
    ['clip', 'optimizer lr', 'mb4 − mb1 (dual on)', 'dual on − off (mb 1)', 'dual on − off (mb 4)'],
    pairedRows,
  ),
);

out.push('', '### Behaviour != old (clip 0.2 and none, headline slice)', '');
const beh = (first.tables.behaviour_shift ?? []).filter(
  (r) => r.epochs === 1 || r.epochs === 16 || r.epochs === last,
);
const behCols = [
  'kl_behav_old',
  'kl_behav_new',
  'kl_old_new',
  'behav_frac_outside_before',
  'behav_frac_outside_after',
  'frac_outside_clip',
];
out.push(
  table(
    ['source', 'temperature', 'lag', 'clip', 'epochs', ...behCols],
    beh.map((b) => [
      String(b.source),
      String(b.temperature),
      String(b.lag),
      String(b.clip),
      String(b.epochs),
      ...behCols.map((f) =>
        ci(
          runs.map((r) => {
            const x = (r.tables.behaviour_shift ?? []).find(
              (y) => y.source === b.source && y.clip === b.clip && y.epochs === b.epochs,
            );
            return typeof x?.[f] === 'number' ? (x[f] as number) : Number.NaN;
          }),
        ),
      ),
    ]),
  ),
);
out.push('', `### Reference KL (${cfg.kl_loss_type}, ${cfg.ref_updates} updates)`, '');
const refArms = [...new Set((first.tables.reference_kl ?? []).map((r) => r.arm as string))];
out.push(
  table(
    [
      'arm',
      'KL to ref (last 10% of updates)',
      'KL to old per update',
      'held-out success',
      'paired vs no_kl_loss: KL to ref',
      'paired: success',
    ],
    refArms.map((a) => [
      a,
      ci(metric(`final_kl_to_ref.${a}`)),
      ci(metric(`mean_kl_to_old.${a}`)),
      ci(metric(`eval_success.${a}`)),
      a === 'no_kl_loss' ? '—' : ci(metric(`final_kl_to_ref.${a}_minus_no_kl_loss`)),
      a === 'no_kl_loss' ? '—' : ci(metric(`eval_success.${a}_minus_no_kl_loss`)),
    ]),
  ),
);
const lastRef = (a: string, f: string) =>
  runs.map((r) => {
    const rs = (r.tables.reference_kl ?? []).filter((x) => x.arm === a);
    const v = rs[rs.length - 1]?.[f];
    return typeof v === 'number' ? v : Number.NaN;
  });
out.push('', 'verl kl_loss (k3 sample estimate) vs the exact KL to the reference at the last update:', '');
out.push(
  table(
    ['arm', 'kl_loss', 'exact KL to ref', 'kl_loss − exact (paired)'],
    refArms
      .filter((a) => a !== 'no_kl_loss')
      .map((a) => [
        a,
        ci(lastRef(a, 'kl_loss')),
        ci(lastRef(a, 'kl_to_ref')),
        ci(diff(lastRef(a, 'kl_loss'), lastRef(a, 'kl_to_ref'))),
      ]),
  ),
);
process.stdout.write(`${out.join('\n')}\n`);
