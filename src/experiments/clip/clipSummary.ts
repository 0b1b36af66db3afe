/**
 * Terminal summary of a `clip` run: true KL by epochs per clip setting, the ratio tails of the
 * headline slice at the largest epoch count, clip 0.2 across optimizer / learning rate /
 * mini-batches / dual clip, the behaviour-shift rows, the reference-KL runs' last update, the notes.
 */
import { type Cell, formatNumber, table } from '../text.js';
import type { RunRecord } from '../types.js';
import { CLIP_TAIL_METRICS, inHeadlineSlice, type SweepRow } from './clipRecord.js';

type Row = SweepRow;

function pick(rows: readonly Row[], columns: readonly string[]): Cell[][] {
  return rows.map((r) => columns.map((c) => r[c] as Cell));
}

export function formatClip(record: RunRecord): string {
  const t = record.tables;
  const sweep = t.sweep ?? [];
  const lines: string[] = [`clip  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`];
  const byEpochs = t.kl_by_epochs ?? [];
  const clipNames = Object.keys(byEpochs[0] ?? {}).filter((k) => k !== 'epochs');
  lines.push('', 'true KL(pi_old || pi_new), mean over visited positions, by PPO epochs (headline slice)');
  lines.push(table(['epochs', ...clipNames], pick(byEpochs, ['epochs', ...clipNames])));

  const last = Math.max(...sweep.map((r) => r.epochs as number));
  const first = sweep[0];
  const headline = (r: Row) => first !== undefined && inHeadlineSlice(first, r);
  const tails = ['clip', 'kl_true_mean', ...CLIP_TAIL_METRICS];
  lines.push(
    '',
    `after ${last} epochs (headline slice: ${first?.optimizer} lr ${first?.lr}, ${first?.mini_batches} mini-batch(es), dual clip ${first?.dual_clip ? 'on' : 'off'})`,
  );
  lines.push(
    table(
      tails,
      pick(
        sweep.filter((r) => headline(r) && r.epochs === last),
        tails,
      ),
    ),
  );

  const grid = [
    'optimizer',
    'lr',
    'mini_batches',
    'dual_clip',
    'kl_true_mean',
    'ratio_max',
    'frac_outside_clip',
    'update_norm',
  ];
  lines.push('', `clip 0.2 after ${last} epochs across the grid`);
  lines.push(
    table(
      grid,
      pick(
        sweep.filter((r) => r.clip === 'eps_0.2' && r.epochs === last),
        grid,
      ),
    ),
  );

  const behaviourCols = [
    'source',
    'temperature',
    'lag',
    'clip',
    'epochs',
    'kl_behav_old',
    'kl_behav_new',
    'kl_old_new',
    'behav_frac_outside_before',
    'behav_frac_outside_after',
    'frac_outside_clip',
  ];
  const shown = new Set([1, 16, last]);
  lines.push('', 'behaviour != old: the update measured against pi_old and against the behaviour policy');
  lines.push(
    table(
      behaviourCols,
      pick(
        (t.behaviour_shift ?? []).filter((r) => shown.has(r.epochs as number)),
        behaviourCols,
      ),
    ),
  );

  const ref = t.reference_kl ?? [];
  const lastUpdate = Math.max(...ref.map((r) => r.update as number));
  const refCols = [
    'arm',
    'update',
    'kl_to_ref',
    'kl_loss',
    'kl_to_old',
    'train_success',
    'final_eval_success',
  ];
  lines.push('', 'training with the KL loss to the reference (last update)');
  lines.push(
    table(
      refCols,
      pick(
        ref.filter((r) => r.update === lastUpdate),
        refCols,
      ),
    ),
  );

  for (const note of record.notes ?? []) lines.push('', note);
  return lines.join('\n');
}
