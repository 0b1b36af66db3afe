import { describe, expect, it } from 'vitest';
import { ROLE_ENV, ROLE_MODEL } from '../envs/tokenArithmetic.js';
import { groupBatch, lossTokenCount, packBatch, withGroupAdvantages } from './batching.js';
import { packTranscripts, responseMaskFromRoles, tokenGroupAdvantages } from './tokenLearner.js';

const M = ROLE_MODEL;
const E = ROLE_ENV;
const rows = [
  { tokens: [0, 6, 7], contexts: [0, 3, 3], roles: [M, E, E] },
  { tokens: [0, 1], contexts: [0, 1], roles: [M, M] },
  { tokens: [2, 9, 4, 5], contexts: [1, 4, 4, 2], roles: [M, E, M, M] },
  { tokens: [3], contexts: [2], roles: [M] },
];
const scores = [1, 0, 0.5, 1];
const index = [0, 0, 1, 1];

describe('groupBatch', () => {
  it('is pack -> mask rule -> GRPO advantages, bit for bit', () => {
    for (const maskRule of ['model_tokens', 'all_tokens'] as const) {
      const got = groupBatch(rows, scores, index, { maskRule, norm: { std: 'population' } });
      const batch = packTranscripts(rows);
      const mask = responseMaskFromRoles(batch, maskRule);
      expect(got.batch).toEqual(batch);
      expect(got.mask).toEqual(mask);
      expect(got.advantages).toEqual(tokenGroupAdvantages(scores, index, batch, mask, { std: 'population' }));
    }
    // default: verl's response mask (model tokens) and verl's GRPO defaults
    const d = groupBatch(rows, scores, index);
    expect(d.mask).toEqual(responseMaskFromRoles(d.batch, 'model_tokens'));
    expect(d.advantages).toEqual(tokenGroupAdvantages(scores, index, d.batch, d.mask));
  });

  it('editMask acts before the advantages: a row masked out gets advantage 0', () => {
    const zeroLast = (mask: Float32Array, batch: { shape: { cols: number } }) =>
      mask.fill(0, 3 * batch.shape.cols);
    const g = groupBatch(rows, scores, index, { editMask: zeroLast });
    const { cols } = g.batch.shape;
    expect(Array.from(g.mask.subarray(3 * cols))).toEqual(new Array(cols).fill(0));
    expect(Array.from(g.advantages.subarray(3 * cols))).toEqual(new Array(cols).fill(0));
    // row 2's group mate is masked, not removed: its advantage still sees both scores
    const full = groupBatch(rows, scores, index);
    expect(g.advantages[2 * cols]).toBe(full.advantages[2 * cols]);
    expect(g.advantages[2 * cols]).not.toBe(0);
  });

  it('packBatch + withGroupAdvantages equals groupBatch; lossTokenCount sums the mask', () => {
    const masked = packBatch(rows);
    expect(lossTokenCount(masked.mask)).toBe(1 + 2 + 3 + 1);
    expect(lossTokenCount(packBatch(rows, { maskRule: 'all_tokens' }).mask)).toBe(10);
    expect(withGroupAdvantages(masked, scores, index)).toEqual(groupBatch(rows, scores, index));
  });
});
