import { describe, expect, it } from 'vitest';
import type { DumpRow } from './dumpRows.js';
import { lengthAnatomy, repN, slimeHasRepetition, textFeatures } from './lengthAnatomy.js';

function row(p: Partial<Omit<DumpRow, 'text'>> & { text?: string }): DumpRow {
  const { text, ...rest } = p;
  return {
    step: 1,
    group: 'g',
    task: 't',
    reward: 0,
    tokens: null,
    truncated: null,
    entropy: null,
    ...rest,
    text: text === undefined ? null : textFeatures(text),
  };
}

describe('length anatomy', () => {
  it('rep-4 = 1 − distinct 4-grams / 4-grams', () => {
    expect(repN('a b c d e f')).toBe(0);
    expect(repN('a b c d a b c d')).toBeCloseTo(1 - 4 / 5, 15); // 5 four-grams, 4 distinct
    expect(repN('x x x x x x')).toBeCloseTo(1 - 1 / 3, 15);
    expect(repN('too short')).toBe(0);
  });

  it("slime's has_repetition: > 10000 characters and the tail compresses more than 10x", () => {
    expect(slimeHasRepetition('ab'.repeat(6000))).toBe(true);
    expect(slimeHasRepetition('ab'.repeat(4000))).toBe(false); // 8000 characters: too short
    let seed = 1;
    const noise = Array.from({ length: 12000 }, () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return String.fromCharCode(33 + (seed % 90));
    }).join('');
    expect(slimeHasRepetition(noise)).toBe(false);
  });

  it('per step and per task: lengths of correct vs incorrect, truncated & zero reward, entropy', () => {
    const rows = [
      row({ step: 1, task: 'a', reward: 1, tokens: 4, entropy: 0.5, text: 'a b c d' }),
      row({ step: 1, task: 'a', reward: 0, tokens: 10, entropy: 1.5, text: 'x x x x x x' }),
      row({ step: 1, task: 'b', reward: 0, tokens: 6, entropy: 1.0, text: 'p q r s' }),
      row({ step: 2, task: 'a', reward: 1, tokens: 2, entropy: 0.25, text: 'y' }),
    ];
    const { table, unit } = lengthAnatomy(rows, { passValue: 1, failValue: 0, maxLength: 10 });
    expect(unit).toBe('tokens');
    expect(table.map((r) => [r.step, r.task])).toEqual([
      [1, '(all)'],
      [2, '(all)'],
      [null, 'a'],
      [null, 'b'],
    ]);
    expect(table[0]).toMatchObject({
      samples: 3,
      correct_samples: 1,
      mean_length_correct: 4,
      mean_length_incorrect: 8,
      truncated_share: 1 / 3,
      truncated_zero_reward_share: 1 / 3,
      entropy_correct: 0.5,
      entropy_incorrect: 1.25,
      entropy_truncated: 1.5,
    });
    expect(table[0]?.repetition_rate).toBeCloseTo((0 + 2 / 3 + 0) / 3, 15);
    expect(table[2]).toMatchObject({ samples: 3, mean_length_correct: 3, mean_length_incorrect: 10 });
    // Without token lengths: characters, and truncation unknown (null, not 0).
    const chars = lengthAnatomy([row({ text: 'héllo', reward: 1 })], {
      passValue: 1,
      failValue: 0,
      maxLength: 10,
    });
    expect(chars.unit).toBe('characters');
    expect(chars.table[0]).toMatchObject({
      mean_length_correct: 5,
      truncated_share: null,
      truncated_zero_reward_share: null,
    });
  });
});
