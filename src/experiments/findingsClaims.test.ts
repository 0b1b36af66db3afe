import { describe, expect, it } from 'vitest';
import { seedRecord } from '../../test/support/seedRecord.js';
import type { FindingsClaim } from './findings.js';
import { type ClaimEstimate, claimDifferences, claimStatus, evaluateClaims } from './findingsClaims.js';

const run = seedRecord;

const claim = (over: Partial<FindingsClaim> = {}): FindingsClaim => ({
  id: 'c',
  label: 'b − a',
  a: { run: 'r', metric: 'x.a' },
  b: { run: 'r', metric: 'x.b' },
  expect: null,
  withoutCollapsed: false,
  ...over,
});

/** Seeds `seeds` of one run: x.a = 0.5, x.b = 0.5 + lift(seed); eval_success.b = success(seed). */
function records(seeds: number[], lift: (s: number) => number, success: (s: number) => number = () => 0.9) {
  return new Map([
    [
      'r',
      seeds.map((s) =>
        run(s, { 'x.a': 0.5, 'x.b': 0.5 + lift(s), 'eval_success.a': 0.9, 'eval_success.b': success(s) }),
      ),
    ],
  ]);
}

const est = (mean: number, ci: [number, number], pHolm: number): ClaimEstimate => ({
  n: 30,
  mean,
  ci95: ci,
  ci_method: 'bca',
  median: mean,
  p: pHolm,
  p_method: 'monte-carlo',
  p_holm: pHolm,
  sign: { up: 0, down: 0, ties: 0, p: 1 },
  mde80: 0.1,
});

describe('findings claims', () => {
  it('pairs by seed, B − A, and drops collapsed seeds only when asked (naming them)', () => {
    const runs = records(
      [3, 1, 2, 4],
      (s) => s / 10,
      (s) => (s === 2 ? 0 : 0.9),
    );
    const all = claimDifferences(claim(), runs, false);
    expect(all.seeds).toEqual([1, 2, 3, 4]);
    for (const [i, d] of all.diffs.entries()) expect(d).toBeCloseTo((i + 1) / 10, 12);
    expect(all.collapsed).toEqual([]);
    const robust = claimDifferences(claim(), runs, true);
    expect(robust.seeds).toEqual([1, 3, 4]);
    expect(robust.collapsed).toEqual([2]);
  });

  it('names a metric key that no record has, and runs on different seeds', () => {
    const runs = records([1, 2], () => 0.1);
    expect(() => claimDifferences(claim({ b: { run: 'r', metric: 'x.typo' } }), runs, false)).toThrow(
      'claim c: r:x.typo is not a metric of run r',
    );
    const two = new Map([...runs, ['q', [run(1, { 'x.b': 1 }), run(3, { 'x.b': 1 })]]]);
    expect(() => claimDifferences(claim({ b: { run: 'q', metric: 'x.b' } }), two, false)).toThrow(
      'claim c: runs r and q hold different seeds (2,3 in only one)',
    );
  });

  it('statuses: confirmed, not confirmed, null on both, pending', () => {
    const up = est(0.1, [0.05, 0.15], 0.001);
    const down = est(-0.1, [-0.15, -0.05], 0.001);
    const nil = est(0.01, [-0.02, 0.04], 0.6);
    const unresolvedByHolm = est(0.1, [0.01, 0.2], 0.2);
    expect(claimStatus(up, up, null)).toBe('confirmed');
    expect(claimStatus(nil, up, null)).toBe('not confirmed'); // nothing found on discovery to confirm
    expect(claimStatus(nil, up, 'up')).toBe('confirmed'); // a direction the page stated beforehand
    expect(claimStatus(est(-0.01, [-0.04, 0.02], 0.6), up, 'up')).toBe('not confirmed');
    expect(claimStatus(up, down, null)).toBe('not confirmed'); // flipped
    expect(claimStatus(up, up, 'down')).toBe('not confirmed'); // against the stated direction
    expect(claimStatus(up, unresolvedByHolm, null)).toBe('not confirmed');
    expect(claimStatus(nil, nil, null)).toBe('null on both');
    expect(claimStatus(nil, nil, 'none')).toBe('null on both');
    expect(claimStatus(nil, up, 'none')).toBe('not confirmed'); // an effect where the page states none
    expect(claimStatus(up, null, null)).toBe('pending');
  });

  it('evaluates every claim on both seed sets, Holm within each set, with the sign test and median', () => {
    const discovery = records([1, 2, 3, 4, 5, 6, 7, 8], (s) => 0.1 + s / 1000);
    const confirmation = records([101, 102, 103, 104, 105, 106, 107, 108], (s) => (s === 101 ? -0.05 : 0.1));
    const claims = [claim(), claim({ id: 'same', b: { run: 'r', metric: 'x.a' }, expect: 'none' })];
    const [c, same] = evaluateClaims(claims, { discovery, confirmation });
    expect(c?.status).toBe('confirmed');
    expect(c?.confirmation?.sign).toEqual({ up: 7, down: 1, ties: 0, p: 0.0703125 });
    expect(c?.confirmation?.median).toBeCloseTo(0.1, 12);
    expect(c?.confirmation?.mean).toBeCloseTo((7 * 0.1 - 0.05) / 8, 12);
    // exact sign-flip over 2^8 vectors, Holm over the set's two claims (the other has p = 1)
    expect(c?.discovery?.p).toBe(2 / 256);
    expect(c?.discovery?.p_holm).toBe(4 / 256);
    expect(same?.status).toBe('null on both');
    expect(same?.confirmation).toMatchObject({
      mean: 0,
      ci95: [0, 0],
      sign: { up: 0, down: 0, ties: 8, p: 1 },
    });
    expect(evaluateClaims(claims, { discovery, confirmation: null })[0]?.status).toBe('pending');
  });

  it('is the same numbers on every call (seeded streams per claim and set)', () => {
    const discovery = records(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22],
      (s) => Math.sin(s),
    );
    const a = evaluateClaims([claim({ withoutCollapsed: true })], { discovery, confirmation: null });
    const b = evaluateClaims([claim({ withoutCollapsed: true })], { discovery, confirmation: null });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a[0]?.without_collapsed?.collapsed).toEqual({ discovery: [], confirmation: [] });
  });
});
