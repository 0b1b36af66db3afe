import { describe, expect, it } from 'vitest';
import { armOfKey, COLLAPSED_MAX_EVAL_SUCCESS, isCollapsed } from './collapsed.js';

describe('collapsed seeds', () => {
  it("reads the arm's held-out success: at most 2% is collapsed", () => {
    const m = { 'eval_success.neural': 0, 'eval_success.table': 0.9, 'think_rate.neural': 0.4 };
    expect(isCollapsed(m, 'think_rate.neural')).toBe(true);
    expect(isCollapsed(m, 'eval_success.table')).toBe(false);
    expect(isCollapsed({ 'eval_success.a': COLLAPSED_MAX_EVAL_SUCCESS }, 'x.a')).toBe(true);
    expect(isCollapsed({ 'eval_success.a': 0.03 }, 'x.a')).toBe(false);
  });

  it('a metric without a held-out success (or a single-arm run) falls back or never collapses', () => {
    expect(isCollapsed({ 'kl_true_mean.eps_0.2_e32': 0.1 }, 'kl_true_mean.eps_0.2_e32')).toBe(false);
    expect(isCollapsed({ eval_success: 0 }, 'eval_success')).toBe(true);
    expect(isCollapsed({ 'eval_success.a': 'NaN' }, 'x.a')).toBe(false);
    expect(armOfKey('kl_true_mean.eps_0.2_e32')).toBe('eps_0.2_e32');
    expect(armOfKey('eval_success')).toBe(null);
  });
});
