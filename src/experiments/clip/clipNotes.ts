/**
 * The conclusions of a `clip` run, drawn from its measured numbers: true KL by epochs per clip, the
 * ratio tails, the behaviour shift, the reference-KL runs and why clipped tokens move further.
 */

import type { ClipSetting, ReferenceRun } from '../../train/clipLab.js';
import type { JsonValue } from '../types.js';
import type { ClipConfig } from './clipOptions.js';
import { mean, sweepMetricKey } from './clipRecord.js';

const fmt = (x: unknown, digits = 3) =>
  typeof x === 'number' && Number.isFinite(x) ? Number(x.toPrecision(digits)).toString() : 'n/a';
const pct = (x: unknown) =>
  typeof x === 'number' && Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : 'n/a';

/**
 * The note on `clipped_moved_further` at clip 0.2 after `last` epochs: the headline slice, then every
 * other optimizer/lr at the headline's mini-batches and dual clip (SGD beside Adam), and why they
 * move. With Adam the main cause is its momentum: the first moment (β1 = 0.9) keeps stepping a
 * clipped token's own logit the way earlier steps pushed it while its own gradient is 0 (default
 * config, 20 seeds, 32 epochs: 80% with β1 = 0.9, 44% with β1 = 0; clip.test.ts checks the drop).
 * Without momentum, as with SGD, a token moves only through the softmax normalisation of its context
 * (other tokens' gradients move the row's other logits). Null when nothing was clipped.
 */
export function clippedMovedFurtherNote(
  sweep: readonly Record<string, JsonValue>[],
  cfg: ClipConfig,
  last: number,
): string | null {
  const dual = cfg.dual_clip === 'both' || cfg.dual_clip === 'on';
  const slices = sweep.filter(
    (r) =>
      r.clip === 'eps_0.2' &&
      r.epochs === last &&
      r.mini_batches === cfg.mini_batches[0] &&
      r.dual_clip === dual &&
      typeof r.clipped_moved_further === 'number',
  );
  const head = slices[0];
  if (!head) return null;
  const share = (r: Record<string, JsonValue>) =>
    `${pct(r.clipped_moved_further)} of ${r.clipped_token_steps}`;
  const others = (opt: string) =>
    slices.filter((r) => r !== head && r.optimizer === opt).map((r) => `${opt} lr ${r.lr}: ${share(r)}`);
  const adam = cfg.optimizers.includes('adam');
  const sgd = others('sgd');
  return (
    `Of the token-steps that were clipped before a step (zero gradient of their own), ${share(head)} moved further out of the band in that step (clip 0.2, headline slice ${head.optimizer} lr ${head.lr}, over ${last} epochs)` +
    `${[...others('adam'), ...sgd].length ? `; ${[...others('adam'), ...sgd].join('; ')}` : ''}.` +
    (adam
      ? " With Adam the main cause is its momentum: the first moment (β1 = 0.9) keeps stepping a clipped token's own logit the way earlier steps pushed it, though its own gradient is now 0 (β1 = 0 lowers the share from 80% to 44% over 20 seeds of the default config, docs/experiments/clip.md)."
      : '') +
    ` Without momentum a token moves only through the softmax normalisation of its context, when other tokens' gradients move the row's other logits${sgd.length ? ': that is all the SGD arms have' : ''}.`
  );
}

/** What the run shows, each sentence drawn from the measured numbers. */
export function clipConclusions(
  metrics: Record<string, JsonValue>,
  clips: readonly ClipSetting[],
  checkpoints: readonly number[],
  histogramEpochs: readonly number[],
  sweep: readonly Record<string, JsonValue>[],
  behaviour: readonly Record<string, JsonValue>[],
  runs: readonly ReferenceRun[],
  cfg: ClipConfig,
): string[] {
  const notes: string[] = [];
  const first = checkpoints[0] as number;
  const last = checkpoints.at(-1) as number;
  const kl = (c: string, e: number) => metrics[sweepMetricKey('kl_true_mean', c, e)] as number;
  const line = (c: string) => checkpoints.map((e) => fmt(kl(c, e))).join(' → ');
  if (clips.some((c) => c.name === 'eps_0.2')) {
    const r = (m: string) => metrics[`${m}.eps_0.2_e${last}`];
    const prev = (checkpoints.at(-2) ?? first) as number;
    const growth = kl('eps_0.2', last) / kl('eps_0.2', prev);
    notes.push(
      `Clip 0.2 (headline slice: ${cfg.optimizers[0]}, ${cfg.mini_batches[0]} mini-batch${cfg.mini_batches[0] === 1 ? '' : 'es'}): true KL(pi_old || pi_new) after ${checkpoints.join('/')} epochs = ${line('eps_0.2')}` +
        (clips.some((c) => c.name === 'none') ? `; without a clip ${line('none')}.` : '.') +
        ` After ${last} epochs the largest ratio is ${fmt(r('ratio_max'))} and ${pct(r('frac_outside_clip'))} of the tokens are outside [0.8, 1.2]: ` +
        (growth > 1.1
          ? `the clip slows the drift but does not cap it (the KL still grew ${fmt(growth)}x from ${prev} to ${last} epochs).`
          : `the KL grew only ${fmt(growth)}x from ${prev} to ${last} epochs in this run: here the clip held the drift nearly flat.`),
    );
  }
  // Regimes where the clip did hold the KL: growth from the second-to-last checkpoint to the last below 10%.
  if (checkpoints.length >= 2) {
    const prev = checkpoints.at(-2) as number;
    const flat = clips
      .filter((c) => c.name !== 'none')
      .filter((c) => kl(c.name, last) <= 1.1 * kl(c.name, prev))
      .map((c) => `${c.name} (${fmt(kl(c.name, prev))} → ${fmt(kl(c.name, last))})`);
    notes.push(
      flat.length
        ? `The KL levelled off (< 10% growth from ${prev} to ${last} epochs) for clip ${flat.join(', ')}: in that regime the clip does bound the drift on this batch.`
        : `No clip setting levelled off: every one still grew by more than 10% from ${prev} to ${last} epochs.`,
    );
  }
  const movedFurther = clippedMovedFurtherNote(sweep, cfg, last);
  if (movedFurther) notes.push(movedFurther);
  const h = (m: string) => metrics[`${m}.eps_0.2_e${last}`];
  const ppo = sweep.find(
    (r) => r.clip === 'eps_0.2' && r.epochs === last && r.optimizer === cfg.optimizers[0],
  );
  if (ppo) {
    notes.push(
      `verl's ppo_kl (k1 on the batch, at the final policy) is ${fmt(ppo.ppo_kl)} vs a true KL of ${fmt(h('kl_true_mean'))} after ${last} epochs (clip 0.2); the value verl logs (mean over the update's steps, each before its step) is ${fmt(ppo.ppo_kl_logged)}.`,
    );
  }
  const bRow = (source: string, clip: string, e: number) =>
    behaviour.find((r) => r.source === source && r.clip === clip && r.epochs === e);
  for (const source of ['temperature', 'stale']) {
    const rows = behaviour.filter((r) => r.source === source && r.clip === 'eps_0.2');
    const b1 = bRow(source, 'eps_0.2', first);
    const bl = bRow(source, 'eps_0.2', histogramEpochs[1] as number);
    if (!b1 || !bl) continue;
    const never = rows.every((r) => (r.kl_behav_new as number) >= (r.kl_behav_old as number));
    notes.push(
      `Behaviour != old (${b1.source === 'stale' ? `samples ${b1.lag} updates stale` : `sampling temperature ${b1.temperature}`}): before the update KL(behaviour || old) = ${fmt(b1.kl_behav_old)} and ${pct(b1.behav_frac_outside_before)} of the sampled tokens have pi_old/pi_behaviour outside [0.8, 1.2]; after ${first} and ${histogramEpochs[1]} epochs with clip 0.2, KL(behaviour || new) = ${fmt(b1.kl_behav_new)} / ${fmt(bl.kl_behav_new)} and ${pct(b1.behav_frac_outside_after)} / ${pct(bl.behav_frac_outside_after)} are outside. ` +
        (never
          ? 'Clipping against pi_old did not reduce the shift at any checkpoint: the clip only sees pi_new/pi_old'
          : 'At some checkpoint KL(behaviour || new) fell below KL(behaviour || old), but the clip only sees pi_new/pi_old') +
        ` (pg_clipfrac ${fmt(bl.pg_clipfrac)}); the ratio that describes the shift is pi_old/pi_behaviour, the IS weight of the rollout experiment's corrections (not applied here).`,
    );
  }
  const dualDiff = Math.max(
    0,
    ...sweep
      .filter((r) => r.dual_clip === true)
      .map((r) => {
        const off = sweep.find(
          (x) =>
            x.dual_clip === false &&
            x.clip === r.clip &&
            x.epochs === r.epochs &&
            x.optimizer === r.optimizer &&
            x.lr === r.lr &&
            x.mini_batches === r.mini_batches,
        );
        return off ? Math.abs((r.kl_true_mean as number) - (off.kl_true_mean as number)) : 0;
      }),
  );
  if (sweep.some((r) => r.dual_clip === false) && sweep.some((r) => r.dual_clip === true)) {
    notes.push(
      dualDiff === 0
        ? `Dual clip (c = ${cfg.clip_ratio_c}) changed no row: no negative-advantage token reached a ratio of ${cfg.clip_ratio_c} in any arm.`
        : `Dual clip (c = ${cfg.clip_ratio_c}) changed the true KL by at most ${fmt(dualDiff)} across the grid (it stops the gradient of negative-advantage tokens whose ratio passed c).`,
    );
  }
  if (runs.length > 0) {
    const summary = runs.map((r) => {
      const tail = r.steps.slice(-Math.max(1, Math.round(r.steps.length / 10)));
      return {
        coef: r.coef,
        ref: mean(tail.map((s) => s.klToRef)),
        estimate: mean(tail.map((s) => s.klLoss)),
        old: mean(r.steps.map((s) => s.klToOld)),
        success: r.evalSuccess,
      };
    });
    const parts = summary.map(
      (s) =>
        `coef ${s.coef}: KL to ref ${fmt(s.ref)}${s.coef > 0 ? ` (verl's kl_loss estimate ${fmt(s.estimate)})` : ''}, KL to old per update ${fmt(s.old)}, held-out success ${fmt(s.success)}`,
    );
    const oldMax = Math.max(...summary.map((s) => s.old));
    const refMin = Math.min(...summary.map((s) => s.ref));
    notes.push(
      `Reference vs old (${cfg.kl_loss_type} KL loss, ${cfg.ref_updates} updates; KL to ref = mean over the last 10% of updates): ${parts.join('; ')}. ` +
        `The per-update KL to pi_old (what the clip acts on) is at most ${fmt(oldMax)}, the accumulated KL to pi_ref at least ${fmt(refMin)}: small steps add up, and only the KL loss acts on the distance to the reference.`,
    );
  }
  notes.push(
    `Tabular policy only (36 contexts x 21 tokens): moves through shared parameters that a neural model has are absent here; every arm starts from a fresh optimizer on a fixed batch drawn after ${cfg.warmup_updates} warm-up updates; rows are means over ${cfg.batches} batches.`,
  );
  return notes;
}
