/**
 * Terminal summary of a `rollout` run: the setup in two lines, then three views of the same rows
 * (schedule, distribution shift, learning), the ratio by lag for the stalest row, the notes, and a
 * headline comparing each async row with sync.
 */
import { type Cell, formatNumber, groupThousands, numberOf, table } from '../text.js';
import type { JsonValue, RunRecord } from '../types.js';
import { RATIO_BY_LAG_COLUMNS } from './rolloutRecord.js';

type Row = Record<string, JsonValue>;
const num = numberOf;
const cell = (v: JsonValue | undefined): Cell => (typeof v === 'number' || typeof v === 'string' ? v : null);

/**
 * The terminal summary of a rollout record (the sections are listed in the file header). Why one
 * function: it writes the sections in the order they appear on the terminal, each a block of
 * `lines.push`, so read top to bottom it is the output.
 */
export function formatRollout(record: RunRecord): string {
  const { config: c, tables } = record;
  const rows = (tables.modes ?? []) as Row[];
  const K = num(c.groups_per_update);
  const G = num(c.group_size);
  const U = num(c.updates);
  const lines: string[] = [];
  lines.push(`rollout  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`);
  lines.push(
    `${c.workers} workers, ${K} groups x ${G} samples per step, ${U} steps per row (${groupThousands(K * G * U)} consumed trajectories); step ${c.train_step_s} s, publication delay ${c.publish_delay_s} s; eta=${c.eta}, tis cap ${c.tis_cap}`,
  );
  lines.push(
    `generation: log-normal tokens per action (median ${c.length_median}, sigma ${c.length_sigma}), ${c.seconds_per_token} s/token; simulated time only`,
  );

  const pick = (keys: string[]) => rows.map((r) => keys.map((k) => cell(r[k])));
  lines.push('', 'schedule (traj/s = consumed trajectories per simulated second)');
  lines.push(
    table(
      [
        'run',
        'traj/s',
        'trainer idle',
        'worker idle',
        'worker wasted',
        'dropped groups',
        'lag mean',
        'lag max',
      ],
      pick([
        'run',
        'throughput',
        'trainer_idle',
        'worker_idle',
        'worker_wasted',
        'dropped_groups',
        'lag_mean',
        'lag_max',
      ]),
      3,
    ),
  );
  const hist = (tables.lag_histogram ?? []) as Row[];
  if (hist.length > 0) {
    const buckets: [string, number, number][] = [
      ['0', 0, 0],
      ['1', 1, 1],
      ['2', 2, 2],
      ['3', 3, 3],
      ['4-7', 4, 7],
      ['8-15', 8, 15],
      ['16+', 16, Number.POSITIVE_INFINITY],
    ];
    lines.push('', 'version lag of consumed groups (fraction per lag bucket)');
    lines.push(
      table(
        ['run', ...buckets.map((b) => b[0])],
        rows.map((r) => {
          const key = String(r.run);
          return [
            key,
            ...buckets.map(([, lo, hi]) =>
              hist.reduce((acc, h) => (num(h.lag) >= lo && num(h.lag) <= hi ? acc + num(h[key]) : acc), 0),
            ),
          ];
        }),
        3,
      ),
    );
  }
  lines.push('', 'distribution shift of consumed actions (ratio = pi_current / pi_behaviour)');
  lines.push(
    table(
      ['run', 'ratio p50', 'p90', 'p99', 'max', 'ESS frac', 'ESS min', 'ESS seq', 'corr(lag,|log r|)'],
      pick([
        'run',
        'ratio_p50',
        'ratio_p90',
        'ratio_p99',
        'ratio_max',
        'ess_fraction',
        'ess_fraction_min',
        'ess_seq_fraction',
        'lag_logratio_corr',
      ]),
      3,
    ),
  );
  lines.push(
    '',
    'learning (steps / sim s to 0.9: first step after which the policy plays the protocol with probability >= 0.9)',
  );
  lines.push(
    table(
      [
        'run',
        'consumed len',
        'generated len',
        'steps to 0.9',
        'sim s to 0.9',
        'protocol prob',
        'eval success',
      ],
      pick([
        'run',
        'consumed_mean_length',
        'generated_mean_length',
        'updates_to_0_9',
        'seconds_to_0_9',
        'protocol_prob',
        'eval_success',
      ]),
      4,
    ),
  );

  const stalest = [...rows].sort((a, b) => num(b.lag_max) - num(a.lag_max))[0];
  const byLag = ((tables.ratio_by_lag ?? []) as Row[]).filter((r) => stalest && r.run === stalest.run);
  if (stalest && byLag.length > 1) {
    lines.push('', `ratio by version lag, ${stalest.run} (lag is a proxy: the ratio is the measurement)`);
    lines.push(
      table(
        ['lag', 'actions', 'ratio mean', 'p50', 'p90', 'p99', 'max', 'mean |log r|'],
        byLag.map((r) => RATIO_BY_LAG_COLUMNS.map((k) => cell(r[k]))),
        3,
      ),
    );
  }

  lines.push('');
  for (const note of record.notes ?? []) lines.push(`note: ${note}`);
  const sync = rows.find((r) => r.mode === 'sync');
  if (sync) {
    lines.push('');
    for (const r of rows) {
      if (r === sync) continue;
      lines.push(
        `${r.run}: ${formatNumber(num(r.throughput) / num(sync.throughput), 3)}x sync throughput, lag mean ${formatNumber(num(r.lag_mean), 3)} (max ${r.lag_max}), ratio p99 ${formatNumber(num(r.ratio_p99), 3)}, eval ${formatNumber(num(r.eval_success), 3)} vs sync ${formatNumber(num(sync.eval_success), 3)}`,
      );
    }
  }
  return lines.join('\n');
}
