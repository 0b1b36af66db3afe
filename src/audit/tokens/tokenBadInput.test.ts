/**
 * Bad token dumps: each is one LabError naming the file, the line and the field (and the token for
 * a per-token problem); `skipBadRows` skips and counts the line instead, and the numbers are those
 * of the good lines alone. Never a NaN in the record.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LabError } from '../../core/errors.js';
import { runTokenAudit } from './tokenAudit.js';

/** A NeMo-RL line (every field a one-element list), prompt of 2 tokens then `resp` loss tokens. */
function nemoLine(prev: number[], gen: number[], mask: number[], idx = 0): string {
  return JSON.stringify({
    agent_ref: [{ type: 't', name: 'math' }],
    rewards: [1],
    input_lengths: [prev.length],
    token_ids: [prev.map((_, i) => i)],
    token_loss_mask: [mask],
    sample_loss_mask: [1],
    advantages: [prev.map(() => 0.5)],
    generation_logprobs: [gen],
    prev_logprobs: [prev],
    idx,
  });
}

const GOOD = nemoLine([0, -1, -0.5, -0.2], [0, 0, -0.49, -0.21], [0, 0, 1, 1]);
const GOOD2 = nemoLine([0, -1, -0.7, -0.1, -2], [0, 0, -0.71, -0.1, -2.2], [0, 0, 1, 1, 1], 1);

function nemoDump(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'labs-nemo-'));
  writeFileSync(join(dir, 'train_data_step1.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}

/** Paths of non-finite numbers anywhere in a value. */
function nonFinite(v: unknown, path = ''): string[] {
  if (typeof v === 'number') return Number.isFinite(v) ? [] : [path];
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => nonFinite(x, `${path}.${k}`));
}

async function errorOf(p: Promise<unknown>): Promise<LabError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(LabError);
    return e as LabError;
  }
  throw new Error('expected a LabError');
}

describe('token audit: bad input', () => {
  const cases: [string, string, RegExp][] = [
    [
      'both log-prob streams missing',
      JSON.stringify({ token_loss_mask: [[0, 1]], sample_loss_mask: [1] }),
      /line 2: both log-prob streams are missing/,
    ],
    [
      'arrays of unequal length',
      nemoLine([0, -1, -0.5], [0, -1], [0, 1, 1]),
      /line 2: arrays of unequal length: prev_logprobs 3, generation_logprobs 2, token_loss_mask 3/,
    ],
    [
      'a loss token whose log-prob is null',
      nemoLine([0, -1, -0.5], [0, -1, null as unknown as number], [0, 1, 1]),
      /line 2: generation_logprobs is null at a loss token \(token 2\)/,
    ],
    [
      'a NaN written by Python',
      nemoLine([0, -1, -0.5], [0, -1, -0.5], [0, 1, 1]).replace(
        '"prev_logprobs":[[0,-1,-0.5]]',
        '"prev_logprobs":[[0,NaN,-0.5]]',
      ),
      /line 2: prev_logprobs is NaN at a loss token \(token 1\)/,
    ],
    [
      'a clearly positive log-prob',
      nemoLine([0, -1, 0.5], [0, -1, -0.5], [0, 1, 1]),
      /line 2: prev_logprobs is positive \(0\.5\) at a loss token \(token 2\)/,
    ],
    [
      'a line that is not one-element lists',
      JSON.stringify({
        token_loss_mask: [
          [0, 1],
          [0, 1],
        ],
        sample_loss_mask: [1, 1],
        generation_logprobs: [
          [0, -1],
          [0, -1],
        ],
        prev_logprobs: [
          [0, -1],
          [0, -1],
        ],
      }),
      /line 2: prev_logprobs is not a one-element list .*2 elements/,
    ],
    ['malformed JSON', '{"prev_logprobs": [[0, -1', /line 2: unreadable line/],
  ];
  for (const [name, line, message] of cases) {
    it(`${name}: one error naming file and line; --skip-bad-rows skips and counts it`, async () => {
      const dir = nemoDump([GOOD, line, GOOD2]);
      const e = await errorOf(runTokenAudit(dir, { preset: 'nemo-rl' }));
      expect(e.code).toBe('BAD_VALUE');
      expect(e.message).toContain(join(dir, 'train_data_step1.jsonl'));
      expect(e.message).toMatch(message);
      expect(e.message).not.toContain('\n');
      const skipped = await runTokenAudit(dir, { preset: 'nemo-rl', skipBadRows: true });
      const clean = await runTokenAudit(nemoDump([GOOD, GOOD2]), { preset: 'nemo-rl' });
      expect(skipped.metrics.bad_rows_skipped).toBe(1);
      expect(skipped.metrics['rollout_corr/k3_kl']).toBe(clean.metrics['rollout_corr/k3_kl']);
      expect(skipped.metrics.loss_tokens).toBe(5);
      expect(skipped.tables.bad_rows?.[0]?.line).toBe(2);
      expect(nonFinite(skipped)).toEqual([]);
    });
  }

  it('a tiny positive log-prob (engine rounding) is accepted', async () => {
    const dir = nemoDump([nemoLine([0, -1, -0.5], [0, -1, 1e-6], [0, 1, 1])]);
    const r = await runTokenAudit(dir, { preset: 'nemo-rl' });
    expect(r.metrics.loss_tokens).toBe(2);
  });

  it('position 0 never counts (NeMo-RL slices [:, 1:]) and masked tokens never enter', async () => {
    // position 0 has mask 1 and an absurd value; masked positions hold NaN-free garbage
    const dir = nemoDump([nemoLine([-50, -1, -0.5], [0, -9, -0.5], [1, 0, 1])]);
    const r = await runTokenAudit(dir, { preset: 'nemo-rl' });
    expect(r.metrics.loss_tokens).toBe(1);
    expect(r.metrics.max_abs_delta).toBe(0);
  });

  it('a dump without a loss token says so', async () => {
    const dir = nemoDump([nemoLine([0, -1], [0, -1], [0, 0])]);
    const e = await errorOf(runTokenAudit(dir, { preset: 'nemo-rl' }));
    expect(e.code).toBe('EMPTY_MASK');
    expect(e.message).toMatch(/no loss-mask token/);
  });

  it('prime-rl: a step directory without STABLE is refused, or skipped and noted with skipBadRows', async () => {
    const root = mkdtempSync(join(tmpdir(), 'labs-prime-'));
    const sample = new URL('../../../test/golden/mismatch-sample/prime-rl/token_exports/', import.meta.url);
    for (const step of [1, 2]) {
      const d = join(root, 'token_exports', `step_${step}`);
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, 'rank_0.jsonl'), readFileSync(new URL(`step_${step}/rank_0.jsonl`, sample)));
      if (step === 1) writeFileSync(join(d, 'STABLE'), '');
    }
    const e = await errorOf(runTokenAudit(root, { preset: 'prime-rl' }));
    expect(e.message).toMatch(/step_2: no STABLE file/);
    const r = await runTokenAudit(root, { preset: 'prime-rl', skipBadRows: true });
    expect(r.metrics.unstable_steps_skipped).toBe(1);
    expect(r.metrics.steps).toBe(1);
    expect(r.notes?.some((n) => /step_2: no STABLE marker/.test(n))).toBe(true);
  });

  it('prime-rl: a null (non-finite, as the exporter writes it) trainer log-prob at a loss token', async () => {
    const root = mkdtempSync(join(tmpdir(), 'labs-prime-'));
    const d = join(root, 'step_3');
    mkdirSync(d);
    writeFileSync(join(d, 'STABLE'), '');
    const rec = {
      schema_version: 1,
      step: 3,
      env_name: 'x',
      token_ids: [1, 2, 3],
      loss_mask: [false, true, true],
      inference_logprobs: [0, -0.1, -0.2],
      trainer_logprobs: [0, null, -0.2],
    };
    writeFileSync(join(d, 'rank_0.jsonl'), `${JSON.stringify(rec)}\n`);
    const e = await errorOf(runTokenAudit(root, { preset: 'prime-rl' }));
    expect(e.message).toMatch(/rank_0\.jsonl line 1: trainer_logprobs is null at a loss token \(token 1\)/);
  });

  it('--what-if specs are checked before anything is read', async () => {
    const e = await errorOf(runTokenAudit('/nonexistent', { preset: 'nemo-rl', whatIf: ['rollout_is=tok'] }));
    expect(e.code).toBe('BAD_CLI');
    expect(e.message).toMatch(/--what-if 'rollout_is=tok': rollout_is=tok: expected token or sequence/);
  });
  it('DuckDB running out of memory is OUT_OF_MEMORY naming --memory-limit, not a parse error', async () => {
    const n = 4000;
    const prev = Array.from({ length: n }, (_, t) => (t === 0 ? 0 : -0.5));
    const gen = Array.from({ length: n }, (_, t) => (t === 0 ? 0 : -0.51));
    const mask = Array.from({ length: n }, (_, t) => (t < 2 ? 0 : 1));
    const lines = Array.from({ length: 64 }, (_, i) => nemoLine(prev, gen, mask, i));
    const e = await errorOf(runTokenAudit(nemoDump(lines), { preset: 'nemo-rl', memoryLimit: '1MB' }));
    expect(e.code).toBe('OUT_OF_MEMORY');
    expect(e.message).toMatch(/memory limit 1MB.*--memory-limit/);
  });
});
