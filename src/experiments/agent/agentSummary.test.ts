import { describe, expect, it } from 'vitest';
import { formatRecord } from '../../report/summaries/index.js';
import { runExperiment } from '../options.js';
import type { RunRecord } from '../types.js';
import { agent } from './agent.js';
import { formatAgent, milestoneUpdates } from './agentSummary.js';

describe('agent terminal summary', () => {
  it('milestone updates are 1, 2, 5, 10, ... and the last', () => {
    expect(milestoneUpdates(150)).toEqual([1, 2, 5, 10, 20, 50, 100, 150]);
    expect(milestoneUpdates(1)).toEqual([1]);
    expect(milestoneUpdates(12)).toEqual([1, 2, 5, 10, 12]);
  });

  it('prints the tables, the init theory and ends with the before/after headline', async () => {
    const rec = (await runExperiment(agent, { updates: 12, operand_min: 1 }, { seed: 4 })) as RunRecord;
    const text = formatAgent(rec);
    expect(await formatRecord(rec)).toBe(text); // registered in the formatter table
    const last = text.split('\n').at(-1) ?? '';
    const before = rec.metrics.eval_success_before as number;
    const after = rec.metrics.eval_success_after as number;
    expect(last).toContain(`before ${Number(before.toPrecision(3))}`);
    expect(last).toContain(`after ${Number(after.toPrecision(4))}`);
    expect(last).toContain('uniform policy 1/64 ≈ 0.016');
    expect(last).toContain('on 400 held-out tasks after 1,536 training trajectories');
    expect(text).toContain('16 tasks x 8 samples x 12 updates = 1,536 training trajectories');
    expect(text).toContain('no PPO clip, no reference KL, no token mask');
    expect(text).toContain('vs theory (63/64)^8 = 0.8816');
    // the group table has one row per milestone update
    for (const u of [1, 2, 5, 10, 12]) expect(text).toMatch(new RegExp(`^\\s+${u}\\s+\\d`, 'm'));
    expect(text).toMatch(/^sub\s+computed\s/m);
    expect(text).not.toContain('singleton  zero-adv'); // no singleton column when G > 1
  });

  it('states the uniform baseline with the b = 0 wins when they matter (operands 0..1: 1.5/64)', async () => {
    const rec = (await runExperiment(
      agent,
      { updates: 2, operand_min: 0, operand_max: 1, eval_tasks: 10 },
      { seed: 4 },
    )) as RunRecord;
    // P(b = 0) = 1/2, so the uniform policy wins (1 + 1/2)/64 = 0.0234 of tasks.
    expect(formatAgent(rec).split('\n').at(-1)).toContain(
      '(uniform policy ≈ 0.023, 1/64 plus wrong-tool wins at b = 0)',
    );
    const plain = (await runExperiment(agent, { updates: 2, eval_tasks: 10 }, { seed: 4 })) as RunRecord;
    expect(formatAgent(plain).split('\n').at(-1)).toContain('(uniform policy 1/64 ≈ 0.016)');
  });

  it('with G = 1 shows the singleton column (rows sum to 1) and compares the failure rate, not all-wrong groups', async () => {
    const rec = (await runExperiment(
      agent,
      { group_size: 1, groups_per_update: 64, updates: 2, operand_min: 1, eval_tasks: 10 },
      { seed: 4 },
    )) as RunRecord;
    const text = formatAgent(rec);
    const header = text.split('\n').find((l) => l.startsWith('update')) ?? '';
    expect(header.split(/\s{2,}/)).toEqual([
      'update',
      'all-wrong',
      'mixed',
      'all-right',
      'singleton',
      'zero-adv traj',
      'train success',
    ]);
    // update 1: all-wrong 0, mixed 0, all-right 0, singleton 1.
    expect(text).toMatch(/^\s+1\s+0\s+0\s+0\s+1\s/m);
    const failed = 1 - (rec.curves['success.train']?.[0] as number);
    expect(text).toContain(
      `at init: G = 1, every group is a singleton (none counts as all-wrong); failed samples measured ${Number(failed.toPrecision(4))} (update 1, 64 samples) vs theory (63/64)^1 = 0.9844`,
    );
    expect(text).not.toContain('all-wrong groups measured');
  });
});
