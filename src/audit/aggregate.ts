/**
 * Streaming aggregation of audit rows into the core diagnostics. Rows arrive grouped (all rows of a
 * group contiguous, as `ORDER BY gid` delivers them); complete groups are buffered and classified in
 * blocks by `classifyGroups` (src/core/groupDiagnostics.ts), the same function the experiments use,
 * so "zero-variance" means the same thing everywhere: a group of >= 2 members whose rewards are all
 * equal (all_wrong: equal and <= failValue; all_right: equal and >= passValue; all_equal_other:
 * equal, in between). Singletons are counted separately. Memory is O(groups in a block + steps + tasks).
 *
 * A sample is "correct" when reward >= passValue (used for always/never/sometimes-solved tasks and
 * for response length of correct vs incorrect samples).
 *
 * Token denominators, per verl's agg_loss (spec §4) with the dump treated as one batch, or one step:
 *   token-mean: Σ action tokens; seq-mean-token-sum and seq-mean-token-mean: rows with >= 1 action
 *   token; seq-mean-token-sum-norm: T, taken as the longest response (action + env tokens) seen,
 *   because verl's T is the padded response length (or loss_scale_factor), which a dump does not hold.
 */
import type { LossAggMode } from '../core/aggLoss.js';
import { LabError } from '../core/errors.js';
import { classifyGroups, type GroupKind } from '../core/groupDiagnostics.js';
import { presetAdvantages } from '../core/presets.js';

/** One canonical row as streamed from `audit_rows`. */
export interface AuditRow {
  gid: number;
  tid: number;
  step: number;
  reward: number;
  /** Response length (tokens or characters; see the dump's length unit), or null. */
  length: number | null;
  action: number | null;
  env: number | null;
  truncated: boolean | null;
  advantage: number | null;
}

export interface AggregateOptions {
  /** An all-equal group at or below this reward is all_wrong (default 0). */
  failValue: number;
  /** An all-equal group at or above this reward is all_right; a sample >= it is correct (default 1). */
  passValue: number;
  /** Recompute the logged advantage under this convention and count disagreements. */
  recompute: 'trl' | null;
  /**
   * TRL's `scale_rewards`: `group` (default; the group's unbiased std), `batch` (the unbiased std of
   * every reward of the step, `stepStd`), `none` (TRL's `False`: no division, advantage = r − group
   * mean). Always `(r − group mean) / (std + 1e-4)` otherwise.
   */
  scaleRewards: 'group' | 'batch' | 'none';
  /** `batch` scaling: step -> unbiased std of the step's rewards. */
  stepStd: ReadonlyMap<number, number> | null;
  /** |logged − recomputed| above `tolerance · max(1, |recomputed|)` counts as a difference. */
  advantageTolerance: number;
}

export const AGGREGATE_DEFAULTS: AggregateOptions = Object.freeze({
  failValue: 0,
  passValue: 1,
  recompute: null,
  scaleRewards: 'group',
  stepStd: null,
  advantageTolerance: 1e-3,
});

export interface KindCounts {
  groups: number;
  all_wrong: number;
  all_right: number;
  all_equal_other: number;
  mixed: number;
  singleton: number;
}

export interface TokenCounts {
  /** Rows with token counts (all rows when the dump has them). */
  rows: number;
  action: number;
  env: number;
  /** Rows with at least one action token (the seq-mean-* denominators). */
  rowsWithAction: number;
  /** Longest response, action + env tokens (this audit's stand-in for verl's padded T). */
  maxLength: number;
  /** Action tokens of rows in zero-variance groups: advantage 0, yet counted by token-mean. */
  zeroAdvantageAction: number;
}

export interface StepStats extends KindCounts {
  step: number;
  rows: number;
  rewardSum: number;
  correct: number;
  truncated: number;
  tokens: TokenCounts;
}

export interface TaskStats extends KindCounts {
  tid: number;
  samples: number;
  rewardSum: number;
  correct: number;
  /** Samples in zero-variance groups (their advantage is exactly 0 under group-mean conventions). */
  wastedSamples: number;
  firstStep: number;
  lastStep: number;
}

export interface AdvantageCheck {
  convention: 'trl';
  compared: number;
  differing: number;
  maxAbsDiff: number;
  /** Rows of singleton groups: TRL refuses groups of one, so there is nothing to compare with. */
  skippedSingletonRows: number;
}

export interface AuditAggregate {
  rows: number;
  kinds: KindCounts;
  correct: number;
  rewardSum: number;
  steps: StepStats[];
  tasks: TaskStats[];
  /** Group size -> number of groups. */
  groupSizes: Map<number, number>;
  /** Groups whose rows carry more than one task (a mis-set group label). */
  mixedTaskGroups: number;
  tokens: TokenCounts | null;
  /** Truncated samples, how many of them are correct, and their summed reward. */
  truncation: {
    rows: number;
    truncated: number;
    truncatedCorrect: number;
    truncatedRewardSum: number;
  } | null;
  advantageCheck: AdvantageCheck | null;
}

function emptyKinds(): KindCounts {
  return { groups: 0, all_wrong: 0, all_right: 0, all_equal_other: 0, mixed: 0, singleton: 0 };
}

function emptyTokens(): TokenCounts {
  return { rows: 0, action: 0, env: 0, rowsWithAction: 0, maxLength: 0, zeroAdvantageAction: 0 };
}

/** Zero-variance groups of a kind count: all_wrong + all_right + all_equal_other. */
export function zeroVariance(k: KindCounts): number {
  return k.all_wrong + k.all_right + k.all_equal_other;
}

/**
 * Effective denominators of verl's four aggregation modes for token counts (see the file header).
 * Keys are verl's mode names.
 */
export function tokenDenominators(t: TokenCounts): Record<LossAggMode, number> {
  return {
    'token-mean': t.action,
    'seq-mean-token-sum': t.rowsWithAction,
    'seq-mean-token-mean': t.rowsWithAction,
    'seq-mean-token-sum-norm': t.maxLength,
  };
}

const BLOCK_ROWS = 8192;

/** Streams rows (grouped by gid) into per-group, per-step and per-task statistics. */
export class AuditAggregator {
  private readonly opts: AggregateOptions;
  private readonly block: AuditRow[] = [];
  private currentGid = -1;
  private readonly seenGids = new Set<number>();
  private readonly steps = new Map<number, StepStats>();
  private readonly tasks: TaskStats[] = [];
  private readonly kinds = emptyKinds();
  private readonly groupSizes = new Map<number, number>();
  private readonly tokens = emptyTokens();
  private readonly truncation = { rows: 0, truncated: 0, truncatedCorrect: 0, truncatedRewardSum: 0 };
  private readonly check: AdvantageCheck;
  private rows = 0;
  private correct = 0;
  private rewardSum = 0;
  private mixedTaskGroups = 0;
  private sawTokens = false;
  private sawTruncation = false;
  private sawAdvantage = false;

  constructor(options: Partial<AggregateOptions> = {}) {
    this.opts = { ...AGGREGATE_DEFAULTS, ...options };
    if (!(this.opts.failValue < this.opts.passValue)) {
      throw new LabError(
        'BAD_ARGUMENT',
        `--fail-value/--pass-value: expected fail value < pass value, got ${this.opts.failValue} and ${this.opts.passValue}`,
        { details: { field: '--pass-value' } },
      );
    }
    this.check = { convention: 'trl', compared: 0, differing: 0, maxAbsDiff: 0, skippedSingletonRows: 0 };
  }

  /** Adds one row. Rows of a group must be contiguous; a gid seen before is an error. */
  push(row: AuditRow): void {
    if (row.gid !== this.currentGid) {
      if (this.seenGids.has(row.gid)) {
        throw new LabError('BAD_ARGUMENT', `audit rows: group ${row.gid} arrived in two separate runs`, {
          details: { field: 'gid', row: this.rows },
        });
      }
      this.seenGids.add(row.gid);
      if (this.block.length >= BLOCK_ROWS) this.flush();
      this.currentGid = row.gid;
    }
    this.block.push(row);
  }

  private stepStats(step: number): StepStats {
    let s = this.steps.get(step);
    if (!s) {
      s = {
        step,
        rows: 0,
        rewardSum: 0,
        correct: 0,
        truncated: 0,
        tokens: emptyTokens(),
        ...emptyKinds(),
      };
      this.steps.set(step, s);
    }
    return s;
  }

  private taskStats(tid: number, step: number): TaskStats {
    let t = this.tasks[tid];
    if (!t) {
      t = {
        tid,
        samples: 0,
        rewardSum: 0,
        correct: 0,
        wastedSamples: 0,
        firstStep: step,
        lastStep: step,
        ...emptyKinds(),
      };
      this.tasks[tid] = t;
    }
    return t;
  }

  /** Classifies the buffered complete groups and folds them into the statistics. */
  private flush(): void {
    const n = this.block.length;
    if (n === 0) return;
    const rewards = new Float64Array(n);
    const labels = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      const r = this.block[i] as AuditRow;
      rewards[i] = r.reward;
      labels[i] = r.gid;
    }
    const groups = classifyGroups(rewards, labels, {
      failValue: this.opts.failValue,
      passValue: this.opts.passValue,
    });
    const recomputed = this.opts.recompute ? this.recompute(rewards, labels, groups) : null;
    for (const g of groups) {
      const first = this.block[g.rows[0] as number] as AuditRow;
      const kind: GroupKind = g.kind;
      const zeroVar = kind === 'all_wrong' || kind === 'all_right' || kind === 'all_equal_other';
      const step = this.stepStats(first.step);
      this.kinds.groups += 1;
      this.kinds[kind] += 1;
      step.groups += 1;
      step[kind] += 1;
      this.groupSizes.set(g.size, (this.groupSizes.get(g.size) ?? 0) + 1);
      let mixedTasks = false;
      const taskSeen = new Set<number>();
      for (const i of g.rows) {
        const r = this.block[i] as AuditRow;
        if (r.tid !== first.tid) mixedTasks = true;
        const task = this.taskStats(r.tid, r.step);
        if (!taskSeen.has(r.tid)) {
          taskSeen.add(r.tid);
          task.groups += 1;
          task[kind] += 1;
        }
        this.addRow(r, step, task, zeroVar, recomputed?.[i]);
      }
      if (mixedTasks) this.mixedTaskGroups += 1;
    }
    this.block.length = 0;
  }

  private addRow(r: AuditRow, step: StepStats, task: TaskStats, zeroVar: boolean, recomputed?: number): void {
    const correct = r.reward >= this.opts.passValue;
    this.rows += 1;
    this.rewardSum += r.reward;
    if (correct) this.correct += 1;
    step.rows += 1;
    step.rewardSum += r.reward;
    if (correct) step.correct += 1;
    task.samples += 1;
    task.rewardSum += r.reward;
    if (correct) task.correct += 1;
    if (zeroVar) task.wastedSamples += 1;
    if (r.step < task.firstStep) task.firstStep = r.step;
    if (r.step > task.lastStep) task.lastStep = r.step;
    if (r.action !== null && r.env !== null) {
      this.sawTokens = true;
      for (const t of [this.tokens, step.tokens]) {
        t.rows += 1;
        t.action += r.action;
        t.env += r.env;
        if (r.action > 0) t.rowsWithAction += 1;
        if (r.action + r.env > t.maxLength) t.maxLength = r.action + r.env;
        if (zeroVar) t.zeroAdvantageAction += r.action;
      }
    }
    if (r.truncated !== null) {
      this.sawTruncation = true;
      this.truncation.rows += 1;
      if (r.truncated) {
        this.truncation.truncated += 1;
        this.truncation.truncatedRewardSum += r.reward;
        if (correct) this.truncation.truncatedCorrect += 1;
        step.truncated += 1;
      }
    }
    if (r.advantage !== null) this.sawAdvantage = true;
    if (recomputed !== undefined && r.advantage !== null) {
      if (Number.isNaN(recomputed)) {
        this.check.skippedSingletonRows += 1;
      } else {
        const diff = Math.abs(r.advantage - recomputed);
        this.check.compared += 1;
        if (diff > this.check.maxAbsDiff) this.check.maxAbsDiff = diff;
        if (diff > this.opts.advantageTolerance * Math.max(1, Math.abs(recomputed)))
          this.check.differing += 1;
      }
    }
  }

  /**
   * TRL-convention advantages for the block (NaN for rows of singleton groups, which TRL refuses):
   * `group` scaling through the core TRL preset; `batch` and `none` as TRL's
   * `_generate_and_score_completions` does them (see `scaleRewards`).
   */
  private recompute(
    rewards: Float64Array,
    labels: number[],
    groups: ReturnType<typeof classifyGroups>,
  ): Float64Array {
    const out = new Float64Array(rewards.length).fill(Number.NaN);
    const keep: number[] = [];
    for (const g of groups) if (g.size > 1) keep.push(...g.rows);
    if (keep.length === 0) return out;
    if (this.opts.scaleRewards === 'group') {
      const adv = presetAdvantages(
        'trl',
        keep.map((i) => rewards[i] as number),
        keep.map((i) => labels[i] as number),
      );
      keep.forEach((i, k) => {
        out[i] = adv[k] as number;
      });
      return out;
    }
    for (const g of groups) {
      if (g.size < 2) continue;
      const step = (this.block[g.rows[0] as number] as AuditRow).step;
      const std = this.opts.scaleRewards === 'batch' ? (this.opts.stepStd?.get(step) ?? Number.NaN) : 0;
      for (const i of g.rows) {
        const centred = (rewards[i] as number) - g.mean;
        out[i] = this.opts.scaleRewards === 'none' ? centred : centred / (std + 1e-4);
      }
    }
    return out;
  }

  finish(): AuditAggregate {
    this.flush();
    return {
      rows: this.rows,
      kinds: { ...this.kinds },
      correct: this.correct,
      rewardSum: this.rewardSum,
      steps: [...this.steps.values()].sort((a, b) => a.step - b.step),
      tasks: this.tasks.filter((t): t is TaskStats => t !== undefined),
      groupSizes: new Map([...this.groupSizes.entries()].sort((a, b) => a[0] - b[0])),
      mixedTaskGroups: this.mixedTaskGroups,
      tokens: this.sawTokens ? { ...this.tokens } : null,
      truncation: this.sawTruncation ? { ...this.truncation } : null,
      advantageCheck: this.opts.recompute && this.sawAdvantage ? { ...this.check } : null,
    };
  }
}
