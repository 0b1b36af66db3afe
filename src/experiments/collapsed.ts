/**
 * What a "collapsed seed" is, defined once for every findings claim that asks to be read without
 * them (issue 31): a seed whose arm's policy no longer does the task on held-out tasks. Such a seed
 * is not a smaller effect of the learning rule but a different regime (a neural policy that emits
 * observation tokens or stops answering: 17% and 83% observation tokens with success 0 in
 * docs/experiments/neural.md), and one of them can move a mean over 30 seeds more than the rule does.
 *
 * Rule: an arm of a seed is collapsed when its held-out success `eval_success.<arm>` (or the run's
 * `eval_success` for a single-arm run) is at most {@link COLLAPSED_MAX_EVAL_SUCCESS}. A metric key
 * with no such success value (e.g. the clip experiment's KL measures) is never collapsed.
 */
import type { JsonValue } from './types.js';

/** Held-out success at or below which an arm of a seed counts as collapsed: 2% of held-out tasks. */
export const COLLAPSED_MAX_EVAL_SUCCESS = 0.02;

/** The arm of a metric key `<metric>.<arm>` (the text after the first dot), or null without one. */
export function armOfKey(key: string): string | null {
  const i = key.indexOf('.');
  return i < 0 ? null : key.slice(i + 1);
}

/**
 * Whether the arm that metric `key` belongs to collapsed in the seed whose metrics are `metrics`
 * (see the rule above): `eval_success.<arm>` (or `eval_success`) is a number <= 0.02.
 */
export function isCollapsed(metrics: Readonly<Record<string, JsonValue>>, key: string): boolean {
  const arm = armOfKey(key);
  const success = arm === null ? metrics.eval_success : metrics[`eval_success.${arm}`];
  return typeof success === 'number' && success <= COLLAPSED_MAX_EVAL_SUCCESS;
}
