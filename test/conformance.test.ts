// The whole shared golden file (verl's own outputs, copied into the repo) through the same runner
// as `labs conformance`: zero mismatches, and unsupported only where the issue allows it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { allAdapters } from '../src/core/conformance/adapters.js';
import { parseGoldenFile, runConformance } from '../src/core/conformance/runner.js';

const ALLOWED_UNSUPPORTED = new Set([
  'compute_policy_loss_clip_cov',
  'compute_policy_loss_kl_cov',
  'compute_optimal_token_baseline_advantage',
  'compute_multi_turn_optimal_token_baseline_advantage',
]);

describe('verl golden vectors, supplement (mask_input, float32 near-constant GRPO groups)', () => {
  const path = 'test/golden/verl-core-algos-supplement.json';
  const result = runConformance(
    parseGoldenFile(JSON.parse(readFileSync(path, 'utf8')), path),
    allAdapters(),
    path,
  );

  it('matches all 8 cases', () => {
    const mismatches = result.cases
      .filter((c) => c.status !== 'matched')
      .map((c) => `${c.name}: ${c.status} ${c.detail ?? ''}`);
    expect(mismatches).toEqual([]);
    expect(result.matched).toBe(8);
  });
});

describe('verl golden vectors', () => {
  const file = parseGoldenFile(JSON.parse(readFileSync('test/golden/verl-core-algos.json', 'utf8')));
  const result = runConformance(file, allAdapters());

  it('has no mismatched case (196 matched)', () => {
    const mismatches = result.cases
      .filter((c) => c.status === 'mismatched')
      .map((c) => `${c.name}: ${c.detail}`);
    expect(mismatches).toEqual([]);
    expect(result.matched).toBe(196);
  });

  it('leaves unsupported only clip_cov / kl_cov and the optimal-token baselines', () => {
    const unsupported = new Set(result.cases.filter((c) => c.status === 'unsupported').map((c) => c.fn));
    expect([...unsupported].filter((fn) => !ALLOWED_UNSUPPORTED.has(fn))).toEqual([]);
  });

  it('gives every deviation a reason', () => {
    for (const c of result.cases.filter((r) => r.status === 'deviation')) expect(c.detail ?? '').not.toBe('');
  });
});
