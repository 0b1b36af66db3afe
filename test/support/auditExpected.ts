/**
 * Test support for the audit (tests only; outside src/, so it is not built into dist/): an
 * independent "pandas groupby" over plain rows, written with nothing but loops and Maps, so audit
 * results can be checked against numbers that do not come from the audit's own code.
 */

export interface PlainRow {
  step: number;
  group: string;
  task: string;
  reward: number;
  action_tokens?: number;
  env_tokens?: number;
  truncated?: boolean;
}

export interface ExpectedTask {
  task: string;
  groups: number;
  samples: number;
  zero_variance_groups: number;
  zero_variance_fraction: number;
  mean_reward: number;
}

export interface Expected {
  rows: number;
  groups: number;
  all_wrong_groups: number;
  all_right_groups: number;
  singleton_groups: number;
  zero_variance_groups: number;
  zero_variance_group_fraction: number;
  per_task: Map<string, ExpectedTask>;
  /** Only when every row has token counts. */
  denominators?: Record<string, number>;
  zero_advantage_action_tokens?: number;
}

/**
 * groupby((step, group)) -> kind; groupby(task) -> counts. A group is zero-variance when it has >= 2
 * members with equal rewards; all_wrong when that reward <= fail, all_right when >= pass.
 */
export function expectedAudit(rows: readonly PlainRow[], fail = 0, pass = 1): Expected {
  const groups = new Map<string, PlainRow[]>();
  for (const r of rows) {
    const key = JSON.stringify([r.step, r.group]);
    const list = groups.get(key) ?? [];
    list.push(r);
    groups.set(key, list);
  }
  let allWrong = 0;
  let allRight = 0;
  let singleton = 0;
  let zeroVar = 0;
  const perTask = new Map<string, ExpectedTask>();
  const zeroVarRows = new Set<PlainRow>();
  for (const members of groups.values()) {
    const first = members[0] as PlainRow;
    const equal = members.every((m) => m.reward === first.reward);
    const isZeroVar = members.length >= 2 && equal;
    if (members.length === 1) singleton += 1;
    if (isZeroVar) {
      zeroVar += 1;
      if (first.reward <= fail) allWrong += 1;
      else if (first.reward >= pass) allRight += 1;
      for (const m of members) zeroVarRows.add(m);
    }
    const tasksHere = new Set(members.map((m) => m.task));
    for (const task of tasksHere) {
      const t = perTask.get(task) ?? {
        task,
        groups: 0,
        samples: 0,
        zero_variance_groups: 0,
        zero_variance_fraction: 0,
        mean_reward: 0,
      };
      t.groups += 1;
      if (isZeroVar) t.zero_variance_groups += 1;
      perTask.set(task, t);
    }
  }
  const rewardSums = new Map<string, number>();
  for (const r of rows) {
    const t = perTask.get(r.task) as ExpectedTask;
    t.samples += 1;
    rewardSums.set(r.task, (rewardSums.get(r.task) ?? 0) + r.reward);
  }
  for (const t of perTask.values()) {
    t.zero_variance_fraction = t.zero_variance_groups / t.groups;
    t.mean_reward = (rewardSums.get(t.task) as number) / t.samples;
  }
  const out: Expected = {
    rows: rows.length,
    groups: groups.size,
    all_wrong_groups: allWrong,
    all_right_groups: allRight,
    singleton_groups: singleton,
    zero_variance_groups: zeroVar,
    zero_variance_group_fraction: zeroVar / groups.size,
    per_task: perTask,
  };
  if (rows.every((r) => r.action_tokens !== undefined && r.env_tokens !== undefined)) {
    let action = 0;
    let withAction = 0;
    let longest = 0;
    let zeroAdv = 0;
    for (const r of rows) {
      const a = r.action_tokens as number;
      const e = r.env_tokens as number;
      action += a;
      if (a > 0) withAction += 1;
      longest = Math.max(longest, a + e);
      if (zeroVarRows.has(r)) zeroAdv += a;
    }
    out.denominators = {
      'token-mean': action,
      'seq-mean-token-sum': withAction,
      'seq-mean-token-mean': withAction,
      'seq-mean-token-sum-norm': longest,
    };
    out.zero_advantage_action_tokens = zeroAdv;
  }
  return out;
}
