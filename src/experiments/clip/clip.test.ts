import { beforeAll, describe, expect, it } from 'vitest';
import { policyLossVanilla } from '../../core/vanillaPolicyLoss.js';
import { VOCAB_SIZE } from '../../envs/tokenArithmetic.js';
import { lossOptionsOf, runSweepArm, type SweepArm, sampleSweepBatch, warmUp } from '../../train/clipLab.js';
import { runSeeds } from '../multiSeed.js';
import { configOf, resolveConfig } from '../options.js';
import type { JsonValue, RunRecord } from '../types.js';
import { type ClipConfig, clip } from './clip.js';
import { clippedMovedFurtherNote } from './clipNotes.js';

// A small grid that still has every kind of arm: 2 clip ratios + none + clip-higher, dual on/off,
// 2 mini-batch counts, one optimizer with one lr, 3 epoch counts.
const sets = [
  'clip_ratios=[0.1,0.2]',
  'ppo_epochs=[1,2,8]',
  'mini_batches=[1,4]',
  'optimizers=["adam"]',
  'adam_lrs=[0.05]',
  'batches=1',
  'ref_updates=12',
  'eval_tasks=50',
];

function config(extra: string[] = []): ClipConfig {
  return resolveConfig(clip, [...sets, ...extra]);
}

async function run(seed: number, extra: string[] = []): Promise<RunRecord> {
  return clip.run(config(extra), { seed });
}

const NAMED = [
  'kl_true_mean',
  'kl_true_max',
  'ratio_max',
  'ratio_p99',
  'frac_outside_clip',
  'clipped_moved_further',
  'pg_clipfrac',
  'ppo_kl',
  'update_norm',
];

describe('clip experiment', () => {
  let seven: RunRecord;
  let sweep: Record<string, JsonValue>[];
  beforeAll(async () => {
    seven = await run(7);
    sweep = seven.tables.sweep ?? [];
  });

  it('has one sweep row per clip x dual x mini-batches x optimizer x lr x epochs, with the named measures', () => {
    // 4 clip settings x 2 dual x 2 mini-batch counts x 1 optimizer x 1 lr x 3 epoch counts
    expect(sweep).toHaveLength(4 * 2 * 2 * 3);
    expect(new Set(sweep.map((r) => r.clip))).toEqual(new Set(['eps_0.1', 'eps_0.2', 'none', 'clip_higher']));
    for (const row of sweep) {
      for (const k of ['clip', 'dual_clip', 'mini_batches', 'optimizer', 'lr', 'epochs'])
        expect(row).toHaveProperty(k);
      for (const k of NAMED) expect(row).toHaveProperty(k);
      expect(row.kl_true_max as number).toBeGreaterThanOrEqual(row.kl_true_mean as number);
      expect(row.ratio_max as number).toBeGreaterThanOrEqual(row.ratio_p99 as number);
    }
    const hi = sweep.find((r) => r.clip === 'clip_higher');
    expect([hi?.clip_ratio_low, hi?.clip_ratio_high]).toEqual([0.2, 0.28]);
    expect(sweep.find((r) => r.clip === 'none')?.clip_ratio_low).toBeNull();
  });

  it('after one epoch every clip setting is the same step (the ratio is 1 at the first step) and verl logs ppo_kl 0', () => {
    const first = sweep.filter((r) => r.epochs === 1 && r.mini_batches === 1);
    for (const row of first) {
      expect(row.kl_true_mean).toBe(first[0]?.kl_true_mean);
      expect(row.ppo_kl_logged).toBe(0);
      expect(row.pg_clipfrac_logged).toBe(0);
    }
    const byEpochs = seven.tables.kl_by_epochs ?? [];
    expect(byEpochs.map((r) => r.epochs)).toEqual([1, 2, 8]);
  });

  it('the true KL grows with epochs and the unclipped surrogate drifts furthest (seed 7)', () => {
    const head = (c: string) =>
      sweep
        .filter((r) => r.clip === c && r.mini_batches === 1 && r.dual_clip === true)
        .map((r) => r.kl_true_mean as number);
    for (const c of ['eps_0.1', 'eps_0.2', 'none']) {
      const k = head(c);
      expect(k[1]).toBeGreaterThan(k[0] as number);
      expect(k[2]).toBeGreaterThan(k[1] as number);
    }
    expect(head('none')[2]).toBeGreaterThan(head('eps_0.2')[2] as number);
    expect(head('eps_0.2')[2]).toBeGreaterThan(head('eps_0.1')[2] as number);
  });

  it('the per-epoch true KL and verl metrics equal a direct computation and the core kernel', () => {
    const cfg = config();
    const warm = warmUp(cfg, 7);
    const current = warm.history.at(-1) as Float64Array;
    const batch = sampleSweepBatch(warm.policy, current, 1, cfg, 7, 'batch-0');
    const arm: SweepArm = {
      clip: { name: 'eps_0.2', low: 0.2, high: 0.2 },
      dualClip: true,
      miniBatches: 1,
      optimizer: 'adam',
      lr: 0.05,
    };
    const [, two] = runSweepArm(arm, batch, current, [1, 2], cfg);
    if (!two) throw new Error('no checkpoint');
    const { fixed } = batch;
    // direct: softmax of the logits behind each table, KL summed over the vocabulary per visited position
    let sum = 0;
    let n = 0;
    let sumK1 = 0;
    for (let i = 0; i < fixed.mask.length; i++) {
      if (fixed.mask[i] === 0) continue;
      const c = fixed.batch.contexts[i] as number;
      let kl = 0;
      for (let v = 0; v < VOCAB_SIZE; v++) {
        const p = Math.exp(batch.oldTable[c * VOCAB_SIZE + v] as number);
        kl += p * Math.log(p / Math.exp(two.table[c * VOCAB_SIZE + v] as number));
      }
      sum += kl;
      sumK1 += (fixed.oldLogProb[i] as number) - (two.logProb[i] as number);
      n++;
    }
    expect(two.kl_true_mean).toBeCloseTo(sum / n, 12);
    const row = sweep.find(
      (r) => r.clip === 'eps_0.2' && r.epochs === 2 && r.mini_batches === 1 && r.dual_clip === true,
    );
    expect(row?.kl_true_mean).toBeCloseTo(sum / n, 5); // rows are rounded to 6 significant digits
    const kernel = policyLossVanilla(
      {
        oldLogProb: fixed.oldLogProb,
        logProb: two.logProb,
        advantages: fixed.advantages,
        responseMask: fixed.mask,
      },
      fixed.batch.shape,
      lossOptionsOf(arm, cfg),
    );
    expect(two.pg_clipfrac).toBe(kernel.metrics.pg_clipfrac);
    expect(two.pg_clipfrac_lower).toBe(kernel.metrics.pg_clipfrac_lower);
    expect(two.ppo_kl).toBe(kernel.metrics.ppo_kl);
    expect(two.ppo_kl).toBeCloseTo(sumK1 / n, 9); // masked mean of old − lp (denominator n + 1e-8)
  });

  it("clipped tokens move further out mostly through Adam's momentum; without it (β1 = 0, SGD) through the normalisation", () => {
    // The note printed to users says so: check both paths on seed 7's first batch after 4 and 8 epochs.
    const cfg = config();
    const warm = warmUp(cfg, 7);
    const current = warm.history.at(-1) as Float64Array;
    const batch = sampleSweepBatch(warm.policy, current, 1, cfg, 7, 'batch-0');
    const base = { clip: { name: 'eps_0.2', low: 0.2, high: 0.2 }, dualClip: true, miniBatches: 1 };
    const share = (arm: Partial<SweepArm>) =>
      runSweepArm(
        { ...base, optimizer: 'adam', lr: 0.05, ...arm } as SweepArm,
        batch,
        current,
        [4, 8],
        cfg,
      ).map((m) => m.moved_further_token_steps / m.clipped_token_steps);
    const adam = share({});
    const noMomentum = share({ beta1: 0 });
    const sgd = share({ optimizer: 'sgd', lr: 20 });
    for (const k of [0, 1]) {
      expect(adam[k]).toBeGreaterThan(0.9); // seed 7: 70/70, 403/424
      expect(noMomentum[k]).toBeLessThan((adam[k] as number) - 0.2); // 40/68, 253/392
      expect(sgd[k]).toBeGreaterThan(0.3); // 153/218, 352/592: the normalisation path alone
    }
  });

  it('the moved-further note gives the SGD slice beside the headline and names momentum as the cause', () => {
    const row = (optimizer: string, lr: number, share: number) => ({
      clip: 'eps_0.2',
      epochs: 8,
      mini_batches: 1,
      dual_clip: true,
      optimizer,
      lr,
      clipped_moved_further: share,
      clipped_token_steps: 100,
    });
    const cfg = resolveConfig(clip, ['mini_batches=[1,4]']);
    const note =
      clippedMovedFurtherNote(
        [row('adam', 0.05, 0.95), row('adam', 0.01, 0.9), row('sgd', 20, 0.59), row('sgd', 5, 0.86)],
        cfg,
        8,
      ) ?? '';
    expect(note).toContain('95.0% of 100 moved further out');
    expect(note).toContain('headline slice adam lr 0.05, over 8 epochs); adam lr 0.01: 90.0%');
    expect(note).toContain('sgd lr 20: 59.0% of 100; sgd lr 5: 86.0% of 100');
    expect(note).toContain('With Adam the main cause is its momentum');
    expect(note).toContain('that is all the SGD arms have');
    expect(clippedMovedFurtherNote([], cfg, 8)).toBeNull();
  });

  it('behaviour shift: on-policy batches have no shift, temperature and stale batches do', () => {
    const rows = seven.tables.behaviour_shift ?? [];
    const at = (src: string) => rows.find((r) => r.source === src && r.epochs === 1 && r.clip === 'eps_0.2');
    expect(at('on_policy')?.kl_behav_old as number).toBeLessThan(1e-12);
    expect(at('on_policy')?.behav_frac_outside_before).toBe(0);
    expect(at('temperature')?.kl_behav_old as number).toBeGreaterThan(0.01);
    expect(at('stale')?.kl_behav_old as number).toBeGreaterThan(0);
    // clipping against pi_old: after one step the ratio to pi_old is within the band, the ratio to behaviour is not
    expect(at('temperature')?.frac_outside_clip).toBe(0);
    expect(at('temperature')?.behav_frac_outside_after as number).toBeGreaterThan(0.1);
  });

  it('reference_kl: an arm per coefficient plus no KL loss; verl kl_loss 0 without it; final success per arm', () => {
    const rows = seven.tables.reference_kl ?? [];
    expect([...new Set(rows.map((r) => r.arm))]).toEqual(['no_kl_loss', 'kl_coef_0.1', 'kl_coef_0.3']);
    for (const r of rows) {
      expect(r).toHaveProperty('kl_to_ref');
      expect(r).toHaveProperty('kl_to_old');
      expect(typeof r.final_eval_success).toBe('number');
      if (r.arm === 'no_kl_loss') expect(r.kl_loss).toBe(0);
      else expect(r.kl_loss as number).toBeGreaterThan(0);
    }
    expect(seven.curves.update).toHaveLength(12);
    expect(seven.curves['kl_to_ref.kl_coef_0.3']).toHaveLength(12);
  });

  it('plots: KL vs epochs per clip, the ratio histogram after 1 and 16 (or the last) epochs, ppo_kl vs true KL', () => {
    const p = seven.plots ?? {};
    expect(p.kl_vs_epochs?.yFields).toEqual(['eps_0.1', 'eps_0.2', 'none', 'clip_higher']);
    const hist = seven.tables.ratio_histogram ?? [];
    const keys = Object.keys(hist[0] ?? {});
    expect(keys).toEqual(['ratio_bin', 'after_1_epoch', 'after_8_epochs']);
    for (const k of keys.slice(1)) {
      const total = hist.reduce((s, r) => s + (r[k] as number), 0);
      expect(total).toBeCloseTo(1, 5);
    }
    expect(p.ppo_kl_vs_true?.table).toBe('ppo_kl_vs_true');
    expect(seven.notes?.[0]).toContain('Clip 0.2');
  });

  it('is deterministic per seed', async () => {
    const small = ['ppo_epochs=[1,2]', 'mini_batches=[1]', 'dual_clip=on', 'ref_updates=3'];
    const a = await run(3, small);
    const b = await run(3, small);
    expect(a.metrics).toEqual(b.metrics);
    expect(a.tables).toEqual(b.tables);
    const c = await run(4, small);
    expect(c.metrics).not.toEqual(a.metrics);
  });

  it('names the real lag when the warm-up is shorter than stale_lag, and survives an untrained policy', async () => {
    // 2 warm-up updates from the uniform start: most groups all-fail, many advantages are 0
    const r = await run(3, [
      'ppo_epochs=[1,2]',
      'mini_batches=[1]',
      'dual_clip=on',
      'ref_updates=2',
      'warmup_updates=2',
    ]);
    const sources = new Set((r.tables.behaviour_shift ?? []).map((x) => x.source));
    expect(sources).toEqual(new Set(['on_policy', 'temperature', 'stale']));
    expect((r.tables.behaviour_shift ?? []).find((x) => x.source === 'stale')?.lag).toBe(2);
    for (const row of r.tables.sweep ?? []) expect(Number.isFinite(row.kl_true_mean as number)).toBe(true);
  });

  it('validates options: unknown keys, a neural policy (not wired in), bad lists', () => {
    expect(() => resolveConfig(clip, ['nope=1'])).toThrow(/clip: unknown option 'nope'/);
    expect(() => resolveConfig(clip, ['policy=neural'])).toThrow(/policy/);
    expect(() => resolveConfig(clip, ['ppo_epochs=[]'])).toThrow(/ppo_epochs/);
    expect(() => resolveConfig(clip, ['clip_ratio_c=1'])).toThrow(/clip_ratio_c/);
    expect(() => configOf(clip, { batches: 0 })).toThrow(/clip: option batches=0/);
  });
});

describe('clip --seeds', () => {
  it('carries comparisons: each KL-loss coefficient vs no KL loss, as the per-seed _minus_no_kl_loss pairs', async () => {
    const small = [
      'clip_ratios=[0.2]',
      'ppo_epochs=[1,2]',
      'mini_batches=[1]',
      'dual_clip=on',
      'optimizers=["adam"]',
      'adam_lrs=[0.05]',
      'batches=1',
      'warmup_updates=4',
      'ref_updates=4',
      'kl_loss_coefs=[0.1,0.3]',
      'eval_tasks=20',
    ];
    const rec = await runSeeds(clip, resolveConfig(clip, small), [1, 2, 3]);
    const comparisons = rec.comparisons ?? [];
    expect(comparisons.map((c) => `${c.metric}.${c.arm}`)).toEqual(
      ['final_kl_to_ref', 'mean_kl_to_old', 'eval_success'].flatMap((m) => [
        `${m}.kl_coef_0.1`,
        `${m}.kl_coef_0.3`,
      ]),
    );
    for (const c of comparisons) {
      expect(c.baseline).toBe('no_kl_loss');
      const perSeed = rec.runs.map((r) => r.metrics[`${c.metric}.${c.arm}_minus_no_kl_loss`] as number);
      expect(c.diff).toBeCloseTo(perSeed.reduce((a, b) => a + b, 0) / perSeed.length, 5);
    }
  });
});
