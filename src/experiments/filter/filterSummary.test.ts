import { beforeAll, describe, expect, it } from 'vitest';
import { formatRecord } from '../../report/summaries/index.js';
import { resolveConfig } from '../options.js';
import type { RunRecord } from '../types.js';
import { filter } from './filter.js';

describe('filter summary', () => {
  let text: string;
  let r: RunRecord;
  beforeAll(async () => {
    r = await filter.run(
      resolveConfig(filter, ['updates=3', 'groups_per_update=4', 'group_size=4', 'eval_tasks=10']),
      {
        seed: 1,
      },
    );
    text = await formatRecord(r);
  });

  it('prints every arm, the rules table and ends with the measured headline', () => {
    for (const arm of ['keep', 'exclude_from_denominator', 'dynamic_sampling', 'kl', 'kl_masked']) {
      expect(text).toMatch(new RegExp(`^${arm}\\s`, 'm'));
    }
    expect(text).toContain('zero_variance_rules');
    expect(text).toMatch(/^range\s+leave_one_out/m);
    expect(text.trimEnd().endsWith(r.notes?.[0] ?? '?')).toBe(true);
    expect(text).toContain('env=agent');
  });
});
