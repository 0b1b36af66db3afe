/**
 * The audit's statistics computed in SQL over `audit_good` (the reader's per-(group, task) parts of
 * the good rows, one read of the files), so that only step-, task- and group-size-level rows reach
 * JS. Classification is the rule of `classifyGroups` (src/core/groupDiagnostics.ts), written on the
 * group's min and max: size 1 -> singleton; min <> max -> mixed; else all_wrong (value <= failValue),
 * all_right (>= passValue) or all_equal_other. A zero-variance group has >= 2 members, all equal.
 *
 * Token denominators, per verl's agg_loss with the dump treated as one batch (or one step): see
 * `tokenDenominators` in aggregate.ts.
 */
import type {
  AdvantageCheck,
  AuditAggregate,
  KindCounts,
  StepStats,
  TaskStats,
  TokenCounts,
} from './aggregate.js';
import type { DuckSession } from './duckdb.js';

export interface GroupStatsOptions {
  failValue: number;
  passValue: number;
  /** Recompute TRL advantages (needs `advs` lists in the parts) with this scale_rewards. */
  recompute: { scaleRewards: 'group' | 'batch' | 'none'; tolerance: number } | null;
  /** Every group has one good part (the reader's `onePartPerGroup`): the parts are the groups. */
  onePartPerGroup: boolean;
  /** The parts carry their rewards as lists (`rws`): groups get their population std `sd`. */
  rewardLists: boolean;
}

/**
 * SQL: `fn` (a DuckDB list statistic: list_stddev_pop, list_stddev_samp, list_avg) of the DOUBLE list
 * `list`, whose largest |value| is `maxAbs`, without overflow. DuckDB's std squares deviations and
 * refuses ('STDDEV_POP is out of range') once they pass ~1e154, and a sum of values near 1e308
 * overflows; finite rewards of any size are valid input. Above 2^400 the values are divided by a
 * power of two s >= maxAbs and the statistic is multiplied back by s: scaling by a power of two is
 * exact, so the result is the one exact arithmetic would round to, and below 2^400 the list is
 * used as it is (bit for bit the previous numbers).
 */
export function scaledListStatSql(
  fn: 'list_stddev_pop' | 'list_stddev_samp' | 'list_avg',
  list: string,
  maxAbs: string,
): string {
  const scale = `(CASE WHEN ${maxAbs} > pow(2, 400) THEN pow(2, ceil(log2(${maxAbs}))) ELSE 1 END)`;
  return `CASE WHEN ${maxAbs} > pow(2, 400) THEN ${scale} * ${fn}(list_transform(${list}, x -> x / ${scale})) ELSE ${fn}(${list}) END`;
}

const KINDS = ['all_wrong', 'all_right', 'all_equal_other', 'mixed', 'singleton'] as const;
const n = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/**
 * Group counts per kind over rows that are one per group (audit_groups), or one per (group, task)
 * (audit_pk: the good parts are unique per group and task, so a task counts each of its groups once).
 */
function kindColumns(): string {
  return ['count(*) AS groups', ...KINDS.map((k) => `count(*) FILTER (WHERE kind = '${k}') AS ${k}`)].join(
    ', ',
  );
}

function kindsOf(r: Record<string, unknown>): KindCounts {
  return {
    groups: n(r.groups),
    all_wrong: n(r.all_wrong),
    all_right: n(r.all_right),
    all_equal_other: n(r.all_equal_other),
    mixed: n(r.mixed),
    singleton: n(r.singleton),
  };
}

function tokensOf(r: Record<string, unknown>): TokenCounts {
  return {
    rows: n(r.token_rows),
    action: n(r.action),
    env: n(r.env),
    rowsWithAction: n(r.with_action),
    maxLength: n(r.max_len),
    zeroAdvantageAction: n(r.zadv),
  };
}

const PART_SUMS = `sum(n) AS rows, sum(rs) AS reward_sum, sum(rs_s) AS reward_sum_s, sum(correct) AS correct, sum(trunc) AS truncated,
  sum(token_rows) AS token_rows, sum(action) AS action, sum(env) AS env, sum(with_action) AS with_action,
  max(max_len) AS max_len, coalesce(sum(action) FILTER (WHERE zv), 0) AS zadv, sum(trunc_rows) AS trunc_rows,
  sum(trunc_correct) AS trunc_correct, sum(trunc_reward) AS trunc_reward, sum(trunc_reward_s) AS trunc_reward_s`;

/**
 * The mean of `rows` rewards from their plain sum and their sum scaled by 2^-600 (reader.ts,
 * REWARD_SUM_SCALE): the plain one when it is finite (it then never overflowed), else the scaled
 * one, divided before it is scaled back so that a finite mean stays finite. 0 for no rows.
 */
function meanReward(sum: unknown, scaledSum: unknown, rows: number): number {
  if (rows === 0) return 0;
  const plain = n(sum);
  return Number.isFinite(plain) ? plain / rows : (n(scaledSum) / rows) * 2 ** 600;
}

/**
 * Builds `audit_groups` (one row per group: step, size n, kind, min lo, max hi, action tokens,
 * population std sd when the parts carry lists) and `audit_pk` (the good parts with their group's
 * kind) and returns the aggregate of the whole dump. When every group is one part, both are views
 * over the parts (no second grouping, no join); else the groups are grouped from the parts and
 * joined back.
 */
export async function groupStats(db: DuckSession, opts: GroupStatsOptions): Promise<AuditAggregate> {
  const kind = (size: string, lo: string, hi: string) =>
    `CASE WHEN ${size} = 1 THEN 'singleton' WHEN ${lo} <> ${hi} THEN 'mixed'
           WHEN ${lo} <= ${opts.failValue} THEN 'all_wrong' WHEN ${lo} >= ${opts.passValue} THEN 'all_right'
           ELSE 'all_equal_other' END`;
  if (opts.onePartPerGroup) {
    await db.exec(`CREATE OR REPLACE TEMP VIEW audit_pk AS
      SELECT *, kind IN ('all_wrong', 'all_right', 'all_equal_other') AS zv
      FROM (SELECT *, ${kind('n', 'lo', 'hi')} AS kind FROM audit_good)`);
    await db.exec(`CREATE OR REPLACE TEMP VIEW audit_groups AS
      SELECT k0, k1, st AS step, n, 1 AS ntasks, kind, lo, hi, action,
        ${opts.rewardLists ? scaledListStatSql('list_stddev_pop', 'rws', 'greatest(abs(lo), abs(hi))') : 'NULL::DOUBLE'} AS sd
      FROM audit_pk`);
  } else {
    await db.exec(`CREATE OR REPLACE TEMP TABLE audit_groups AS
      SELECT * EXCLUDE (rl), ${kind('n', 'lo', 'hi')} AS kind,
        ${opts.rewardLists ? scaledListStatSql('list_stddev_pop', 'rl', 'greatest(abs(lo), abs(hi))') : 'NULL::DOUBLE'} AS sd
      FROM (
        SELECT k0, k1, any_value(st) AS step, sum(n) AS n, count(*) AS ntasks, min(lo) AS lo, max(hi) AS hi,
          sum(action) AS action, ${opts.rewardLists ? 'flatten(list(rws))' : 'NULL::DOUBLE[]'} AS rl
        FROM audit_good GROUP BY k0, k1)`);
    await db.exec(`CREATE OR REPLACE TEMP TABLE audit_pk AS
      SELECT p.st, p.task, p.n, p.rs, p.rs_s, p.correct, p.token_rows, p.action, p.env, p.with_action, p.max_len,
        p.trunc_rows, p.trunc, p.trunc_correct, p.trunc_reward, p.trunc_reward_s, g.kind,
        g.kind IN ('all_wrong', 'all_right', 'all_equal_other') AS zv
      FROM audit_good p JOIN audit_groups g USING (k0, k1)`);
  }
  const total = (await db.all(`SELECT ${PART_SUMS} FROM audit_pk`))[0] ?? {};
  const kinds = (await db.all(`SELECT ${kindColumns()} FROM audit_groups`))[0];
  const stepRows = await db.all(`
    SELECT s.*, k.* EXCLUDE (step) FROM
      (SELECT st AS step, ${PART_SUMS} FROM audit_pk GROUP BY st) s
      JOIN (SELECT step, ${kindColumns()} FROM audit_groups GROUP BY step) k
      USING (step) ORDER BY step`);
  const steps: StepStats[] = stepRows.map((r) => ({
    step: n(r.step),
    rows: n(r.rows),
    rewardMean: meanReward(r.reward_sum, r.reward_sum_s, n(r.rows)),
    correct: n(r.correct),
    truncated: n(r.truncated),
    tokens: tokensOf(r),
    ...kindsOf(r),
  }));
  const taskRows = await db.all(`
    SELECT task, sum(n) AS samples, sum(rs) AS reward_sum, sum(rs_s) AS reward_sum_s, sum(correct) AS correct,
      coalesce(sum(n) FILTER (WHERE zv), 0) AS wasted, min(st) AS first_step, max(st) AS last_step, ${kindColumns()}
    FROM audit_pk GROUP BY task ORDER BY task`);
  const taskText = new Map<number, string>();
  const tasks: TaskStats[] = taskRows.map((r, tid) => {
    taskText.set(tid, String(r.task));
    return {
      tid,
      samples: n(r.samples),
      rewardMean: meanReward(r.reward_sum, r.reward_sum_s, n(r.samples)),
      correct: n(r.correct),
      wastedSamples: n(r.wasted),
      firstStep: n(r.first_step),
      lastStep: n(r.last_step),
      ...kindsOf(r),
    };
  });
  const sizes = await db.all('SELECT n AS size, count(*) AS groups FROM audit_groups GROUP BY n ORDER BY n');
  const mixedTaskGroups = n((await db.all('SELECT count(*) AS c FROM audit_groups WHERE ntasks > 1'))[0]?.c);
  const advantageCheck = opts.recompute ? await checkAdvantages(db, opts.recompute) : null;
  return {
    rows: n(total.rows),
    kinds: kindsOf(kinds ?? {}),
    correct: n(total.correct),
    rewardMean: meanReward(total.reward_sum, total.reward_sum_s, n(total.rows)),
    steps,
    tasks,
    taskText,
    groupSizes: new Map(sizes.map((r) => [n(r.size), n(r.groups)])),
    mixedTaskGroups,
    tokens: n(total.token_rows) > 0 ? tokensOf(total) : null,
    truncation:
      n(total.trunc_rows) > 0
        ? {
            rows: n(total.trunc_rows),
            truncated: n(total.truncated),
            truncatedCorrect: n(total.trunc_correct),
            truncatedMeanReward: meanReward(total.trunc_reward, total.trunc_reward_s, n(total.truncated)),
          }
        : null,
    advantageCheck,
  };
}

/**
 * TRL's advantage recomputed per group and compared with the logged one: (r − group mean) /
 * (std + 1e-4), std the group's unbiased std (`group`), the step's (`batch`), or no division
 * (`none`). Rows of singleton groups are counted apart (TRL refuses groups of one). A difference
 * counts when |logged − recomputed| > tolerance · max(1, |recomputed|).
 */
async function checkAdvantages(
  db: DuckSession,
  r: NonNullable<GroupStatsOptions['recompute']>,
): Promise<AdvantageCheck | null> {
  const re =
    r.scaleRewards === 'none'
      ? '(rew - m)'
      : `(rew - m) / (${r.scaleRewards === 'group' ? 'sd' : 'bsd'} + 1e-4)`;
  const row = (
    await db.all(`
    WITH g AS (SELECT k0, k1, any_value(st) AS st, flatten(list(rws)) AS rs, flatten(list(advs)) AS a,
                      greatest(abs(min(lo)), abs(max(hi))) AS mx
               FROM audit_good GROUP BY k0, k1),
    bs AS (SELECT st, ${scaledListStatSql('list_stddev_samp', 'xs', 'mx')} AS bsd
           FROM (SELECT st, flatten(list(rs)) AS xs, max(mx) AS mx FROM g GROUP BY st)),
    s AS (SELECT g.*, ${scaledListStatSql('list_avg', 'rs', 'mx')} AS m, ${scaledListStatSql('list_stddev_samp', 'rs', 'mx')} AS sd,
            len(rs) AS size, bs.bsd FROM g JOIN bs USING (st)),
    x AS (SELECT size, unnest(rs) AS rew, unnest(a) AS adv, m, sd, bsd FROM s),
    y AS (SELECT size, adv, ${re} AS re FROM x WHERE adv IS NOT NULL)
    SELECT count(*) AS seen, count(*) FILTER (WHERE size = 1) AS singles, count(*) FILTER (WHERE size > 1) AS compared,
      count(*) FILTER (WHERE size > 1 AND NOT (abs(adv - re) <= ${r.tolerance} * greatest(1, abs(re)))) AS differing,
      coalesce(max(abs(adv - re)) FILTER (WHERE size > 1), 0) AS maxdiff
    FROM y`)
  )[0];
  if (!row || n(row.seen) === 0) return null;
  return {
    convention: 'trl',
    compared: n(row.compared),
    differing: n(row.differing),
    maxAbsDiff: n(row.maxdiff),
    skippedSingletonRows: n(row.singles),
  };
}
