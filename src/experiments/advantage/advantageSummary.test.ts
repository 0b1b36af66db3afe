import { beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../options.js';
import type { RunRecord } from '../types.js';
import { advantage } from './advantage.js';
import { formatAdvantage } from './advantageSummary.js';

describe('formatAdvantage', () => {
  let record: RunRecord;
  let text: string;
  let lines: string[];
  beforeAll(() => {
    record = advantage.run(resolveConfig(advantage, []), { seed: 7 }) as RunRecord;
    text = formatAdvantage(record);
    lines = text.split('\n');
  });

  it('marks the columns that differ from verl and the conventions that refuse a group of one', () => {
    const singleton = lines.find((l) => l.startsWith('u5 ')) as string;
    expect(singleton).toMatch(/singleton\s+1\s+1\s+0\.999999\s+0\.999999\s+0\*\s+refused\s+refused\s+0\*/);
    const allWrong = lines.find((l) => l.startsWith('u1 ')) as string;
    expect(allWrong).not.toContain('*');
    const mixed = lines.find((l) => l.startsWith('u3 ')) as string;
    expect(mixed).toContain('0.999998*'); // teaching: population std
  });

  it('prints the mask flip per mode and the headline last', () => {
    for (const mode of [
      'token-mean',
      'seq-mean-token-sum',
      'seq-mean-token-mean',
      'seq-mean-token-sum-norm',
    ]) {
      expect(lines.some((l) => l.startsWith(`${mode} `))).toBe(true);
    }
    const m = record.metrics;
    expect(lines[lines.length - 1]).toContain(
      `moves the token-mean denominator ${m.action_tokens} -> ${(m.action_tokens as number) + (m.env_tokens as number)}`,
    );
  });
});
