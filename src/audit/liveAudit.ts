/**
 * The live page of `labs audit DIR --watch --html FILE`: a record built from the per-step rows
 * (`tables.steps`) of the files audited one by one while the job writes the directory.
 *
 * Why not the whole-run record: several of its parts cannot be updated from a new file alone — the
 * per-task table (a task's groups span steps and files), the length medians and percentiles, the
 * reward histogram, the zero-variance policies. Recomputing them means re-reading every step, whose
 * cost grows with the run. So the live record holds only what the step rows add up to exactly:
 * counts of rows and group kinds, and the row-weighted mean reward, correct share and truncated
 * share; its curves are the same per-step curves as the one-shot record's. It is labelled live
 * (`config.live`, a note), and the page after Ctrl-C is the exact one-shot audit.
 *
 * Incremental: `addFile` replaces one file's rows and updates the running totals by that file's
 * contribution only (O(rows of the file)); a step held by several files (prime-rl's `rank_R.jsonl`
 * of one `step_N/`) sums their counts, which is exact unless a group's members are split across files.
 */
import type { JsonValue, RunRecord } from '../experiments/types.js';
import { VERSION } from '../experiments/version.js';

/** The additive parts of one step row (`tables.steps` of runAudit). */
interface StepCounts {
  rows: number;
  groups: number;
  all_wrong: number;
  all_right: number;
  all_equal_other: number;
  mixed: number;
  singleton: number;
  correct: number;
  rewardSum: number;
  /** Null when the file's audit does not know truncation. */
  truncated: number | null;
}

const ZERO = (): StepCounts => ({
  rows: 0,
  groups: 0,
  all_wrong: 0,
  all_right: 0,
  all_equal_other: 0,
  mixed: 0,
  singleton: 0,
  correct: 0,
  rewardSum: 0,
  truncated: 0,
});

function num(row: Record<string, JsonValue>, key: string): number {
  const v = row[key];
  return typeof v === 'number' ? v : 0;
}

/** A step row of runAudit back to counts: fractions times rows are integer counts, so they are rounded. */
function countsOf(row: Record<string, JsonValue>): StepCounts {
  const rows = num(row, 'rows');
  return {
    rows,
    groups: num(row, 'groups'),
    all_wrong: num(row, 'all_wrong_groups'),
    all_right: num(row, 'all_right_groups'),
    all_equal_other: num(row, 'all_equal_other_groups'),
    mixed: num(row, 'mixed_groups'),
    singleton: num(row, 'singleton_groups'),
    correct: Math.round(num(row, 'correct_fraction') * rows),
    rewardSum: num(row, 'mean_reward') * rows,
    truncated: typeof row.truncated_fraction === 'number' ? Math.round(row.truncated_fraction * rows) : null,
  };
}

function add(into: StepCounts, c: StepCounts, sign: 1 | -1): void {
  into.rows += sign * c.rows;
  into.groups += sign * c.groups;
  into.all_wrong += sign * c.all_wrong;
  into.all_right += sign * c.all_right;
  into.all_equal_other += sign * c.all_equal_other;
  into.mixed += sign * c.mixed;
  into.singleton += sign * c.singleton;
  into.correct += sign * c.correct;
  into.rewardSum += sign * c.rewardSum;
  into.truncated =
    into.truncated === null || c.truncated === null ? null : into.truncated + sign * c.truncated;
}

function ratio(a: number, b: number): number {
  return b === 0 ? 0 : a / b;
}

function zeroVariance(c: StepCounts): number {
  return c.all_wrong + c.all_right + c.all_equal_other;
}

/** Running state of the live page: every audited file's step counts, and the totals. */
export class LiveAudit {
  /** File → its steps' counts (the file's last audit). */
  private readonly files = new Map<string, Map<number, StepCounts>>();
  /** Step → files holding it (a step's row sums over them). */
  private readonly stepFiles = new Map<number, Set<string>>();
  /** Integer counts over every file; exact under subtraction. */
  private readonly totals: StepCounts = ZERO();
  /** Number of files whose audit does not know truncation (the total is unknown while > 0). */
  private untruncated = 0;

  /** Replaces `file`'s step rows (`tables.steps` of its own audit) and updates the totals by them. */
  addFile(file: string, stepRows: readonly Record<string, JsonValue>[]): void {
    const old = this.files.get(file);
    if (old) {
      for (const [step, c] of old) {
        this.subtractTotals(c);
        this.stepFiles.get(step)?.delete(file);
      }
    }
    const mine = new Map<number, StepCounts>();
    for (const row of stepRows) {
      const step = num(row, 'step');
      const c = countsOf(row);
      const prev = mine.get(step);
      if (prev) add(prev, c, 1);
      else mine.set(step, c);
    }
    for (const [step, c] of mine) {
      this.addTotals(c);
      const set = this.stepFiles.get(step) ?? new Set<string>();
      set.add(file);
      this.stepFiles.set(step, set);
    }
    this.files.set(file, mine);
  }

  private addTotals(c: StepCounts): void {
    if (c.truncated === null) this.untruncated += 1;
    add(this.totals, { ...c, truncated: c.truncated ?? 0 }, 1);
  }

  private subtractTotals(c: StepCounts): void {
    if (c.truncated === null) this.untruncated -= 1;
    add(this.totals, { ...c, truncated: c.truncated ?? 0 }, -1);
  }

  /** One merged count per step, sorted by step. */
  private stepCounts(): [number, StepCounts][] {
    const out: [number, StepCounts][] = [];
    for (const [step, files] of this.stepFiles) {
      if (files.size === 0) continue;
      const c = ZERO();
      for (const f of files) {
        const part = this.files.get(f)?.get(step);
        if (part) add(c, part, 1);
      }
      out.push([step, c]);
    }
    return out.sort((a, b) => a[0] - b[0]);
  }

  /**
   * The live record of `dir` (experiment `audit`, `config.live: true`): metrics from the totals,
   * `tables.steps` and the per-step curves of the one-shot record (same names, same definitions).
   */
  record(dir: string, preset: string, wallMs: number): RunRecord {
    const t = this.totals;
    const perStep = this.stepCounts();
    const truncKnown = this.untruncated === 0 && this.files.size > 0;
    const steps = perStep.map(([step, c]) => {
      const row: Record<string, JsonValue> = {
        step,
        rows: c.rows,
        groups: c.groups,
        all_wrong_groups: c.all_wrong,
        all_right_groups: c.all_right,
        all_equal_other_groups: c.all_equal_other,
        mixed_groups: c.mixed,
        singleton_groups: c.singleton,
        zero_variance_fraction: ratio(zeroVariance(c), c.groups),
        all_wrong_fraction: ratio(c.all_wrong, c.groups),
        all_right_fraction: ratio(c.all_right, c.groups),
        mean_reward: ratio(c.rewardSum, c.rows),
        correct_fraction: ratio(c.correct, c.rows),
      };
      if (c.truncated !== null) row.truncated_fraction = ratio(c.truncated, c.rows);
      return row;
    });
    const zv = zeroVariance(t);
    const metrics: Record<string, JsonValue> = {
      rows: t.rows,
      files: this.files.size,
      steps: steps.length,
      groups: t.groups,
      all_wrong_groups: t.all_wrong,
      all_right_groups: t.all_right,
      all_equal_other_groups: t.all_equal_other,
      mixed_groups: t.mixed,
      singleton_groups: t.singleton,
      zero_variance_groups: zv,
      zero_variance_group_fraction: ratio(zv, t.groups),
      zero_variance_fraction_of_multi_member_groups: ratio(zv, t.groups - t.singleton),
      mean_reward: ratio(t.rewardSum, t.rows),
      correct_fraction: ratio(t.correct, t.rows),
    };
    if (truncKnown) {
      metrics.truncated_samples = t.truncated as number;
      metrics.truncated_fraction = ratio(t.truncated as number, t.rows);
    }
    return {
      experiment: 'audit',
      seed: 0,
      version: VERSION,
      config: { path: dir, preset, live: true },
      metrics,
      curves: {
        update: steps.map((s) => s.step as number),
        'zero_variance.all_wrong': steps.map((s) => s.all_wrong_fraction as number),
        'zero_variance.all_right': steps.map((s) => s.all_right_fraction as number),
        'zero_variance.total': steps.map((s) => s.zero_variance_fraction as number),
        'reward.mean': steps.map((s) => s.mean_reward as number),
        'reward.correct_fraction': steps.map((s) => s.correct_fraction as number),
      },
      tables: { steps },
      notes: [
        `LIVE page (labs audit --watch): ${steps.length} step(s) from ${this.files.size} file(s) so far, each file audited alone as it arrived. Metrics are the step rows added up (rows, group kinds, mean reward, correct and truncated shares); the per-task table, length percentiles, reward histogram and zero-variance policies need the whole run and come with the final page, written after Ctrl-C from the one-shot audit.`,
      ],
      plots: {
        zero_variance: { title: 'Zero-variance groups per step', y: 'fraction of groups', x: 'step' },
        reward: { title: 'Reward per step', y: 'reward / fraction correct', x: 'step' },
      },
      timing: { wall_ms: wallMs },
    };
  }
}
