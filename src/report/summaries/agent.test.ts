import { describe, expect, it } from 'vitest';
import { agent } from '../../experiments/agent.js';
import type { RunRecord } from '../../experiments/types.js';
import { formatAgent, milestoneUpdates } from './agent.js';
import { formatRecord } from './index.js';

describe('agent terminal summary', () => {
  it('milestone updates are 1, 2, 5, 10, ... and the last', () => {
    expect(milestoneUpdates(150)).toEqual([1, 2, 5, 10, 20, 50, 100, 150]);
    expect(milestoneUpdates(1)).toEqual([1]);
    expect(milestoneUpdates(12)).toEqual([1, 2, 5, 10, 12]);
  });

  it('prints the tables, the init theory and ends with the before/after headline', async () => {
    const rec = (await agent.run({ updates: 12, operand_min: 1 }, { seed: 4 })) as RunRecord;
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
  });
});
