import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../options.js';
import { clip } from './clip.js';
import { formatClip } from './clipSummary.js';

describe('formatClip', () => {
  it('shows KL by epochs per clip, the tails, the grid, behaviour and reference rows, and the notes', async () => {
    const config = resolveConfig(clip, [
      'clip_ratios=[0.2]',
      'ppo_epochs=[1,4]',
      'mini_batches=[1]',
      'optimizers=["adam"]',
      'adam_lrs=[0.05]',
      'dual_clip=on',
      'batches=1',
      'ref_updates=3',
      'eval_tasks=20',
    ]);
    const record = await clip.run(config, { seed: 5 });
    const text = formatClip(record);
    expect(text).toContain('by PPO epochs');
    expect(text).toMatch(/epochs\s+eps_0\.2\s+none\s+clip_higher/);
    expect(text).toContain('after 4 epochs (headline slice: adam lr 0.05');
    expect(text).toMatch(/temperature\s+1\.2/);
    expect(text).toContain('kl_coef_0.3');
    expect(text).toContain(record.notes?.[0] as string);
  });
});
