/**
 * `labs run --experiment clip`: what the clipped surrogate bounds and what it does not (course:
 * "the clip caps the gain on one side of the surrogate — it does not guarantee a bounded parameter
 * update or a hard bound on the true KL"; the reference, old and behaviour policies are three
 * different objects).
 *
 * 1. Sweep. A tabular policy is warmed up for `warmup_updates` updates of the token lab's learner;
 *    then `batches` fixed rollout batches are drawn from it (pi_old = behaviour). On each, verl's
 *    actor update runs with every combination of clip setting (clip_ratio in `clip_ratios`, no
 *    clip, DAPO's clip-higher 0.2/`clip_ratio_high`), dual clip on/off (`clip_ratio_c`), mini-batches
 *    per epoch, optimizer and learning rate, and after each of `ppo_epochs` epochs the policy is
 *    measured exactly against pi_old: true KL over the vocabulary at every visited position (mean,
 *    max), ratio tails, tokens clipped before a step that moved further out, verl's own metrics
 *    (`pg_clipfrac`, `ppo_kl`), the parameter update norm. Rows are means over the batches.
 * 2. Behaviour != old. The same update on batches sampled at temperature `temperature` or by the
 *    policy `stale_lag` updates ago, with pi_old the current policy: the clip bounds pi_new/pi_old,
 *    and the measures show what happens to pi_new/pi_behaviour.
 * 3. Reference. Full training runs with verl's `use_kl_loss` (`kl_loss_type`, each of
 *    `kl_loss_coefs`, and 0): KL to the reference (the initial policy) and KL to old per step, and
 *    held-out success.
 *
 * The headline slice (metrics, plots, conclusions) is the first entry of each list: optimizer
 * `optimizers[0]` with its first learning rate, `mini_batches[0]`, dual clip on unless `off`.
 *
 * Reads top to bottom: config, setup (warm-up, fixed batches), the sweep, behaviour shift,
 * reference KL, measurements, conclusion, record.
 */
import { ratioHistogram } from '../../core/clipMeasures.js';
import {
  type CheckpointMeasures,
  type ClipSetting,
  NEVER_BINDS,
  type ReferenceRun,
  runSweepArm,
  type SweepArm,
  type SweepBatch,
  sampleSweepBatch,
  trainWithReferenceKl,
  warmUp,
} from '../../train/clipLab.js';
import { startRecord } from '../record.js';
import type { Experiment, JsonValue, PlotHint, RunContext, RunRecord } from '../types.js';
import { clipConclusions } from './clipNotes.js';
import { CLIP_OPTIONS, type ClipConfig } from './clipOptions.js';
import {
  CLIP_GRID_METRICS,
  CLIP_SWEEP_METRICS,
  gridMetricKey,
  inHeadlineSlice,
  klMinusNoneKey,
  mean,
  round6,
  sweepMetricKey,
} from './clipRecord.js';
import {
  type BehaviourSource,
  behaviourRow,
  referenceArmName,
  referenceRows,
  sliceOf,
  sweepRow,
} from './clipRows.js';
import { formatClip } from './clipSummary.js';

// --- config: CLIP_OPTIONS and ClipConfig live in clipOptions.ts (clipLab.ts needs the type too) ------
export { CLIP_OPTIONS, type ClipConfig } from './clipOptions.js';

/** Ratio-histogram bins (upper edge exclusive). */
const RATIO_EDGES = [0, 0.5, 0.8, 0.9, 1, 1.1, 1.2, 1.5, 2, 4, Number.POSITIVE_INFINITY];
const RATIO_BIN_LABELS = [
  '<0.5',
  '0.5-0.8',
  '0.8-0.9',
  '0.9-1.0',
  '1.0-1.1',
  '1.1-1.2',
  '1.2-1.5',
  '1.5-2',
  '2-4',
  '>=4',
];

function runClip(cfg: ClipConfig, ctx: RunContext): RunRecord {
  const record = startRecord('clip', cfg, ctx.seed);
  const seed = ctx.seed;

  // --- the grid -------------------------------------------------------------------------------------
  const grid = clipGrid(cfg);
  const { clips, arms, headline, checkpoints, histogramEpochs, focus, referenceCoefs } = grid;
  const totalWork = arms.length * cfg.batches + 3 * cfg.batches + referenceCoefs.length;
  let done = 0;
  const tick = () => ctx.onProgress?.(++done, totalWork);

  // --- setup: warm-up, then fixed batches drawn by pi_old itself ----------------------------------------
  const warm = warmUp(cfg, seed);
  const current = warm.history.at(-1) as Float64Array;
  const onPolicy = Array.from({ length: cfg.batches }, (_, b) =>
    sampleSweepBatch(warm.policy, current, 1, cfg, seed, `batch-${b}`),
  );

  // --- the sweep: every arm on every fixed batch, measured at each checkpoint epoch ---------------------
  const sweep: Record<string, JsonValue>[] = [];
  const histogram = RATIO_EDGES.slice(1).map(() => [0, 0]);
  const byArm = new Map<SweepArm, Record<string, JsonValue>[]>();
  for (const arm of arms) {
    const perBatch = onPolicy.map((batch) => {
      const res = runSweepArm(arm, batch, current, checkpoints, cfg);
      tick();
      return res;
    });
    const rows = checkpoints.map((epochs, k) =>
      sweepRow(
        arm,
        cfg,
        epochs,
        perBatch.map((r) => r[k] as CheckpointMeasures),
      ),
    );
    byArm.set(arm, rows);
    sweep.push(...rows);
    if (headline(arm) && arm.clip === focus) addToHistogram(histogram, perBatch, onPolicy, grid, cfg.batches);
  }

  // --- behaviour != old: stale samples and a sampling temperature, pi_old = the current policy --------
  const sources: BehaviourSource[] = [
    { name: 'on_policy', temperature: 1, lag: 0, batches: onPolicy },
    {
      name: 'temperature',
      temperature: cfg.temperature,
      lag: 0,
      batches: onPolicy.map((_, b) =>
        sampleSweepBatch(warm.policy, current, cfg.temperature, cfg, seed, `temp-${b}`),
      ),
    },
    {
      name: 'stale',
      temperature: 1,
      // lag = stale_lag, or the whole warm-up when it is shorter
      lag: warm.history.length - 1,
      batches: onPolicy.map((_, b) =>
        sampleSweepBatch(warm.policy, warm.history[0] as Float64Array, 1, cfg, seed, `stale-${b}`),
      ),
    },
  ];
  const behaviourClips = clips.filter((c) => c === focus || c.name === 'none');
  const headArm = arms.find(headline) as SweepArm;
  const behaviour: Record<string, JsonValue>[] = [];
  for (const source of sources) {
    for (const clip of behaviourClips) {
      const arm = { ...headArm, clip };
      const perBatch = source.batches.map((batch) => runSweepArm(arm, batch, current, checkpoints, cfg));
      checkpoints.forEach((epochs, k) => {
        behaviour.push(
          behaviourRow(
            source,
            clip.name,
            epochs,
            source.batches,
            perBatch.map((r) => r[k] as CheckpointMeasures),
          ),
        );
      });
    }
    for (let b = 0; b < cfg.batches; b++) tick();
  }

  // --- reference: full training runs with verl's KL loss -----------------------------------------------
  const runs: ReferenceRun[] = referenceCoefs.map((coef) => {
    const run = trainWithReferenceKl(cfg, seed, coef);
    tick();
    return run;
  });

  // --- measurements ------------------------------------------------------------------------------------
  const { klByEpochs, ratioHist, ppoVsTrue, referenceKl, metrics, curves } = clipMeasurements(cfg, grid, {
    warm,
    onPolicy,
    byArm,
    histogram,
    behaviour,
    runs,
  });

  return record.finish({
    metrics,
    curves,
    tables: {
      sweep,
      kl_by_epochs: klByEpochs,
      ratio_histogram: ratioHist,
      ppo_kl_vs_true: ppoVsTrue,
      behaviour_shift: behaviour,
      reference_kl: referenceKl,
    },
    notes: clipConclusions(metrics, clips, checkpoints, histogramEpochs, sweep, behaviour, runs, cfg),
    plots: clipPlots(grid),
  });
}

/**
 * The sweep's grid: the clip settings, every arm (optimizer x lr x mini-batches x dual clip x clip),
 * the headline slice (the first arm's optimizer, lr, mini-batches and dual clip, every clip), the
 * checkpoint epoch counts, the histogram's two epoch counts, the focus clip and the KL-loss runs.
 */
function clipGrid(cfg: ClipConfig) {
  const clips: ClipSetting[] = [
    ...cfg.clip_ratios.map((e) => ({ name: `eps_${e}`, low: e, high: e })),
    ...(cfg.include_no_clip ? [{ name: 'none', low: NEVER_BINDS, high: NEVER_BINDS }] : []),
    ...(cfg.clip_ratio_high > 0 ? [{ name: 'clip_higher', low: 0.2, high: cfg.clip_ratio_high }] : []),
  ];
  const duals = cfg.dual_clip === 'both' ? [true, false] : [cfg.dual_clip === 'on'];
  const lrsOf = (opt: string) => (opt === 'adam' ? cfg.adam_lrs : cfg.sgd_lrs);
  const arms: SweepArm[] = [];
  for (const optimizer of cfg.optimizers)
    for (const lr of lrsOf(optimizer))
      for (const miniBatches of cfg.mini_batches)
        for (const dualClip of duals)
          for (const clip of clips) arms.push({ clip, dualClip, miniBatches, optimizer, lr });
  // the headline slice: the first arm's optimizer, lr, mini-batches and dual clip (every clip)
  const headline = (a: SweepArm) => inHeadlineSlice(sliceOf(arms[0] as SweepArm), sliceOf(a));
  const checkpoints = [...new Set(cfg.ppo_epochs)].sort((a, b) => a - b);
  const histogramEpochs = [
    checkpoints[0] as number,
    checkpoints.includes(16) ? 16 : (checkpoints.at(-1) as number),
  ];
  // The histogram and the behaviour arm use clip 0.2 (verl's default), or the first clip setting without it.
  const focus = (clips.find((c) => c.name === 'eps_0.2') ?? clips[0]) as ClipSetting;
  const referenceCoefs = [0, ...cfg.kl_loss_coefs];
  return { clips, arms, headline, checkpoints, histogramEpochs, focus, referenceCoefs };
}

type ClipGrid = ReturnType<typeof clipGrid>;

/** Adds the headline focus arm's ratio histogram (per batch, at the two histogram epoch counts) to `histogram`. */
function addToHistogram(
  histogram: number[][],
  perBatch: readonly CheckpointMeasures[][],
  onPolicy: readonly SweepBatch[],
  grid: ClipGrid,
  batches: number,
): void {
  const { checkpoints, histogramEpochs } = grid;
  histogramEpochs.forEach((e, j) => {
    perBatch.forEach((res, b) => {
      const m = res[checkpoints.indexOf(e)] as CheckpointMeasures;
      const f = onPolicy[b] as SweepBatch;
      ratioHistogram(f.fixed.oldLogProb, m.logProb, f.fixed.mask, f.fixed.batch.shape, RATIO_EDGES).forEach(
        (x, i) => {
          (histogram[i] as number[])[j] = ((histogram[i] as number[])[j] as number) + x / batches;
        },
      );
    });
  });
}

/** What the run measured, from the sweep, the behaviour rows and the reference runs: tables, metrics, curves. */
function clipMeasurements(
  cfg: ClipConfig,
  grid: ClipGrid,
  measured: {
    warm: { lastSuccess: number };
    onPolicy: readonly SweepBatch[];
    byArm: Map<SweepArm, Record<string, JsonValue>[]>;
    histogram: number[][];
    behaviour: Record<string, JsonValue>[];
    runs: ReferenceRun[];
  },
) {
  const { clips, arms, headline, checkpoints, histogramEpochs, focus } = grid;
  const { warm, onPolicy, byArm, histogram, behaviour, runs } = measured;
  const headRows = (clip: string) =>
    (byArm.get(arms.find((a) => headline(a) && a.clip.name === clip) as SweepArm) ?? []) as Record<
      string,
      number
    >[];
  const klByEpochs = checkpoints.map((epochs, k) => ({
    epochs,
    ...Object.fromEntries(clips.map((c) => [c.name, headRows(c.name)[k]?.kl_true_mean ?? null])),
  }));
  const ratioHist = RATIO_BIN_LABELS.map((bin, i) => ({
    ratio_bin: bin,
    [`after_${histogramEpochs[0]}_epoch${histogramEpochs[0] === 1 ? '' : 's'}`]: round6(
      histogram[i]?.[0] as number,
    ),
    [`after_${histogramEpochs[1]}_epochs`]: round6(histogram[i]?.[1] as number),
  }));
  const ppoVsTrue = checkpoints.map((epochs, k) => ({
    epochs,
    true_kl_clip: headRows(focus.name)[k]?.kl_true_mean ?? null,
    ppo_kl_clip: headRows(focus.name)[k]?.ppo_kl ?? null,
    ppo_kl_logged_clip: headRows(focus.name)[k]?.ppo_kl_logged ?? null,
    true_kl_none: headRows('none')[k]?.kl_true_mean ?? null,
    ppo_kl_none: headRows('none')[k]?.ppo_kl ?? null,
  }));
  const referenceKl = referenceRows(runs, cfg.ref_updates);

  const metrics: Record<string, JsonValue> = {
    warmup_success: round6(warm.lastSuccess),
    batch_success: round6(mean(onPolicy.map((b) => b.success))),
  };
  for (const c of clips) {
    headRows(c.name).forEach((row) => {
      for (const m of CLIP_SWEEP_METRICS)
        metrics[sweepMetricKey(m, c.name, row.epochs as number)] = row[m] as number;
    });
  }
  // the optimizer grid at the focus clip and without clip, after the last checkpoint
  const lastEpochs = checkpoints[checkpoints.length - 1];
  for (const rows of byArm.values()) {
    const row = rows.find((r) => r.epochs === lastEpochs);
    if (!row || (row.clip !== focus.name && row.clip !== 'none')) continue;
    for (const m of CLIP_GRID_METRICS) metrics[gridMetricKey(m, row)] = row[m] as number;
  }
  if (clips.some((c) => c.name === 'none')) {
    for (const c of clips.filter((x) => x.name !== 'none')) {
      headRows(c.name).forEach((row, k) => {
        const d = (row.kl_true_mean as number) - (headRows('none')[k]?.kl_true_mean as number);
        if (Number.isFinite(d)) metrics[klMinusNoneKey(c.name, row.epochs as number)] = round6(d);
      });
    }
  }
  for (const row of behaviour) {
    if (row.epochs !== checkpoints[0] && row.epochs !== histogramEpochs[1]) continue;
    const arm = `${row.source}_${row.clip}_e${row.epochs}`;
    for (const m of ['kl_behav_old', 'kl_behav_new', 'behav_frac_outside_before', 'behav_frac_outside_after'])
      metrics[`${m}.${arm}`] = row[m] as number;
  }
  for (const r of runs) {
    const arm = referenceArmName(r.coef);
    const tail = r.steps.slice(-Math.max(1, Math.round(r.steps.length / 10)));
    metrics[`final_kl_to_ref.${arm}`] = round6(mean(tail.map((s) => s.klToRef)));
    metrics[`mean_kl_to_old.${arm}`] = round6(mean(r.steps.map((s) => s.klToOld)));
    metrics[`eval_success.${arm}`] = round6(r.evalSuccess);
    // verl's kl_loss (a sample estimate) beside the exact KL to the reference, at the last update
    const lastStep = r.steps[r.steps.length - 1];
    if (lastStep) {
      metrics[`last_kl_loss.${arm}`] = round6(lastStep.klLoss);
      metrics[`last_kl_to_ref.${arm}`] = round6(lastStep.klToRef);
    }
  }
  const base = runs[0] as ReferenceRun;
  for (const r of runs.slice(1)) {
    const arm = referenceArmName(r.coef);
    for (const m of ['final_kl_to_ref', 'mean_kl_to_old', 'eval_success'])
      metrics[`${m}.${arm}_minus_no_kl_loss`] = round6(
        (metrics[`${m}.${arm}`] as number) - (metrics[`${m}.${referenceArmName(base.coef)}`] as number),
      );
  }

  const curves: Record<string, number[]> = { update: base.steps.map((_, i) => i + 1) };
  for (const r of runs) {
    const arm = referenceArmName(r.coef);
    curves[`kl_to_ref.${arm}`] = r.steps.map((s) => round6(s.klToRef));
    curves[`kl_to_old.${arm}`] = r.steps.map((s) => round6(s.klToOld));
    curves[`train_success.${arm}`] = r.steps.map((s) => round6(s.success));
  }
  return { klByEpochs, ratioHist, ppoVsTrue, referenceKl, metrics, curves };
}

/** The plot hints of a clip record. */
function clipPlots(grid: ClipGrid): Record<string, PlotHint> {
  const { clips, focus, histogramEpochs } = grid;
  return {
    kl_vs_epochs: {
      title: 'True KL(pi_old || pi_new) vs PPO epochs, one line per clip setting',
      y: 'exact KL, mean over visited positions',
      x: 'PPO epochs on one batch',
      table: 'kl_by_epochs',
      xField: 'epochs',
      yFields: clips.map((c) => c.name),
    },
    ratio_histogram: {
      title: `Ratio pi_new/pi_old over the batch's tokens, clip ${focus.name}, after ${histogramEpochs[0]} and ${histogramEpochs[1]} epochs`,
      y: 'fraction of tokens',
      x: 'ratio bin',
      kind: 'bar',
      table: 'ratio_histogram',
      xField: 'ratio_bin',
    },
    ppo_kl_vs_true: {
      title:
        "verl's ppo_kl (k1 on the batch) vs the true KL; *_clip = clip 0.2, *_none = no clip (headline slice)",
      y: 'KL',
      x: 'PPO epochs on one batch',
      table: 'ppo_kl_vs_true',
      xField: 'epochs',
      yFields: ['true_kl_clip', 'ppo_kl_clip', 'ppo_kl_logged_clip', 'true_kl_none', 'ppo_kl_none'],
    },
    kl_to_ref: {
      title: 'Training with the KL loss: KL(pi || pi_ref) per update',
      y: 'exact KL at visited positions',
    },
    kl_to_old: {
      title: 'Training with the KL loss: KL(pi_old || pi_new) per update',
      y: 'exact KL at visited positions',
    },
    train_success: { title: 'Training with the KL loss: training success', y: 'fraction of trajectories' },
  };
}

export const clip: Experiment<typeof CLIP_OPTIONS> = {
  name: 'clip',
  summary:
    'what the clipped surrogate bounds: exact KL(pi_old||pi_new), ratio tails and update size vs clip, PPO epochs, mini-batches, optimizer; reference vs old vs behaviour policy',
  options: CLIP_OPTIONS,
  // Headline comparisons with --seeds: each KL-loss coefficient's training run vs the run without
  // the KL loss (the reference arm; the per-seed `<metric>.kl_coef_<c>_minus_no_kl_loss` pairs).
  // One baseline per plan: the clip-vs-no-clip sweep pairs stay per-seed metrics
  // (`kl_true_mean.<clip>_e<E>_minus_none_e<E>`), summarised over seeds.
  comparisons: (config) => ({
    baseline: referenceArmName(0),
    arms: [referenceArmName(0), ...new Set(config.kl_loss_coefs.map(referenceArmName))],
    metrics: ['final_kl_to_ref', 'mean_kl_to_old', 'eval_success'],
  }),
  run: runClip,
  format: formatClip,
};
