/**
 * Terminal summary of an `agent` run: what was run, the per-update group kinds at a few updates (the
 * course's all-wrong -> all-right story, with the theory at init), held-out outcomes before/after,
 * the learned action probabilities, notes, and last the before/after headline line.
 */
import { formatNumber, groupThousands, numberOf, table } from '../text.js';
import type { RunRecord } from '../types.js';

const num = numberOf;
const thousands = groupThousands;

/** Updates shown in the group-kind table: 1, 2, 5, 10, 20, 50, ... and the last one. */
export function milestoneUpdates(updates: number): number[] {
  const picks = new Set<number>();
  for (let decade = 1; decade <= updates; decade *= 10) {
    for (const m of [1, 2, 5]) if (m * decade <= updates) picks.add(m * decade);
  }
  picks.add(updates);
  return [...picks].sort((a, b) => a - b);
}

export function formatAgent(record: RunRecord): string {
  const { config: c, metrics: m, curves } = record;
  const K = num(c.groups_per_update);
  const G = num(c.group_size);
  const U = num(c.updates);
  const lines: string[] = [];
  lines.push(`agent  seed ${record.seed}  (${formatNumber(record.timing.wall_ms, 3)} ms)`);
  lines.push(
    `group-standardised on-policy REINFORCE: ${K} tasks x ${G} samples x ${U} updates = ${thousands(num(m.train_trajectories))} training trajectories`,
  );
  lines.push(
    `advantage: GRPO (core kernel), std=${c.std}, epsilon=${formatNumber(num(c.epsilon), 1)}, singleton=${c.singleton}; gradient ${c.reduce} over trajectories, lr=${formatNumber(num(c.lr))}`,
  );
  lines.push('no PPO clip, no reference KL, no token mask (one on-policy step per batch: ratio = 1)');

  const update = curves.update ?? [];
  const series = (key: string) => curves[key] ?? [];
  // Groups of one are their own kind (neither all-wrong nor all-right): show them when there are any,
  // so every row sums to 1.
  const withSingletons = series('group_kind.singleton').some((f) => f > 0);
  const rows = milestoneUpdates(update.length).map((u) => {
    const i = u - 1;
    return [
      u,
      series('group_kind.all_wrong')[i],
      series('group_kind.mixed')[i],
      series('group_kind.all_right')[i],
      ...(withSingletons ? [series('group_kind.singleton')[i]] : []),
      series('zero_advantage.fraction')[i],
      series('success.train')[i],
    ];
  });
  lines.push(
    '',
    `groups per update (fractions of ${K} groups; a constant group gives every member advantage 0)`,
  );
  lines.push(
    table(
      [
        'update',
        'all-wrong',
        'mixed',
        'all-right',
        ...(withSingletons ? ['singleton'] : []),
        'zero-adv traj',
        'train success',
      ],
      rows,
    ),
  );
  const first = num(m.all_wrong_fraction_first_update);
  const theory = num(m.all_wrong_fraction_theory_init);
  const sd = Math.sqrt((theory * (1 - theory)) / K);
  const plain = (63 / 64) ** G;
  const theoryText =
    Math.abs(plain - theory) < 1e-12
      ? `(63/64)^${G} = ${formatNumber(theory)}`
      : `(63/64)^${G} = ${formatNumber(plain)} (${formatNumber(theory)} counting b = 0 tasks)`;
  if (G === 1) {
    // With G = 1 no group is all-wrong (each is a singleton); compare the failure rate instead.
    const failed = 1 - num(series('success.train')[0]);
    lines.push(
      `at init: G = 1, every group is a singleton (none counts as all-wrong); failed samples measured ${formatNumber(failed)} (update 1, ${K} samples) vs theory ${theoryText}`,
    );
  } else {
    lines.push(
      `at init: all-wrong groups measured ${formatNumber(first)} (update 1, ${K} groups, sampling sd ${formatNumber(sd, 2)}) vs theory ${theoryText}`,
    );
  }

  const outcomes = record.tables.eval_outcomes ?? [];
  lines.push('', `held-out outcomes (${num(m.eval_tasks)} tasks, ${c.eval} actions): fraction of tasks`);
  lines.push(
    table(
      ['outcome', 'before', 'after'],
      outcomes.map((r) => [String(r.outcome), num(r.before), num(r.after)]),
    ),
  );

  const probs = record.tables.learned_probabilities ?? [];
  lines.push('', 'learned action probabilities pi(action | kind, stage)');
  lines.push(
    table(
      ['kind', 'stage', 'read', 'add', 'sub', 'submit'],
      probs.map((r) => [String(r.kind), String(r.stage), num(r.read), num(r.add), num(r.sub), num(r.submit)]),
      3,
    ),
  );

  lines.push('');
  for (const note of record.notes ?? []) lines.push(`note: ${note}`);
  // The uniform policy wins 1/64 of tasks, plus the wrong-tool wins when b = 0 (metric
  // uniform_success_theory); say the larger number when b = 0 is common enough to show.
  const uniform = num(m.uniform_success_theory);
  const uniformText =
    Number.isFinite(uniform) && Math.abs(uniform - 1 / 64) >= 5e-4
      ? `uniform policy ≈ ${formatNumber(uniform, 2)}, 1/64 plus wrong-tool wins at b = 0`
      : `uniform policy 1/64 ≈ ${formatNumber(1 / 64, 2)}`;
  lines.push(
    '',
    `eval success: before ${formatNumber(num(m.eval_success_before), 3)} (${uniformText}) -> after ${formatNumber(num(m.eval_success_after), 4)} on ${num(m.eval_tasks)} held-out tasks after ${thousands(num(m.train_trajectories))} training trajectories`,
  );
  return lines.join('\n');
}
