/**
 * `--what-if trl:MODE` / `openrlhf:TYPE` folded per sequence equal the batch kernels of
 * src/core/trlVllmIs.ts and src/core/openrlhfVllmIs.ts (golden-checked against numpy
 * transcriptions of TRL and OpenRLHF) on the materialised batch: the framework's metrics and the
 * verl-definition summary, for every mode, at the defaults and with both bounds set.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXTRA_CORRECTION_MODES } from '../../core/extraCorrectionModes.js';
import type { JsonValue } from '../../experiments/types.js';
import { Rng } from '../../random.js';
import { runTokenAudit } from './tokenAudit.js';

function dump(seed: number) {
  const rng = new Rng(seed);
  const rows = 4 + rng.int(0, 5);
  const cols = 2 + rng.int(0, 8);
  const old = new Float64Array(rows * cols);
  const roll = new Float64Array(rows * cols);
  const mask = new Float64Array(rows * cols);
  const lines: string[] = [];
  for (let b = 0; b < rows; b++) {
    const o: number[] = [];
    const r: number[] = [];
    const m: number[] = [];
    for (let t = 0; t < cols; t++) {
      const k = t === 0 || rng.next() < 0.75 ? 1 : 0;
      const lr = -4 * rng.next();
      const d = rng.next() < 0.1 ? 3 * (rng.next() - 0.5) : 0.2 * (rng.next() - 0.5);
      const ov = Math.min(lr + d, 0);
      o.push(k ? ov : -50);
      r.push(k ? lr : 0.5);
      m.push(k);
      old[b * cols + t] = k ? ov : 0;
      roll[b * cols + t] = k ? lr : 0;
      mask[b * cols + t] = k;
    }
    lines.push(JSON.stringify({ step: 1, trainer_logprobs: o, rollout_logprobs: r, loss_mask: m }));
  }
  const dir = mkdtempSync(join(tmpdir(), 'labs-fw-'));
  writeFileSync(join(dir, 'd.jsonl'), `${lines.join('\n')}\n`);
  return {
    dir,
    inputs: { oldLogProb: old, rolloutLogProb: roll, responseMask: mask },
    shape: { rows, cols },
  };
}

function close(a: JsonValue | undefined, b: number, key: string): void {
  expect(typeof a, key).toBe('number');
  const tol = 1e-9 * Math.max(Math.abs(a as number), Math.abs(b)) + 1e-14;
  if (!(Math.abs((a as number) - b) <= tol)) throw new Error(`${key}: fold ${a}, kernel ${b}`);
}

describe('TRL and OpenRLHF what-ifs equal their batch kernels', () => {
  const specs: { spec: string; params: Record<string, string> }[] = [];
  for (const m of EXTRA_CORRECTION_MODES) {
    specs.push({ spec: m.id, params: {} });
    if (m.framework === 'trl')
      specs.push({
        spec: `${m.id},vllm_importance_sampling_clip_min=0.8,vllm_importance_sampling_clip_max=1.25`,
        params: { vllm_importance_sampling_clip_min: '0.8', vllm_importance_sampling_clip_max: '1.25' },
      });
    else
      specs.push({
        spec: `${m.id},is_correction_threshold=0.9_1.1`,
        params: { is_correction_threshold: '0.9_1.1' },
      });
  }
  for (const seed of [11, 12, 13]) {
    it(`random dump ${seed}: ${specs.length} specs`, async () => {
      const d = dump(seed);
      const record = await runTokenAudit(d.dir, {
        preset: 'generic-tokens',
        whatIf: specs.map((s) => s.spec),
      });
      for (const [i, s] of specs.entries()) {
        const mode = EXTRA_CORRECTION_MODES.find(
          (m) => s.spec.startsWith(`${m.id}`) && (s.spec === m.id || s.spec[m.id.length] === ','),
        );
        const want = mode?.run(d.inputs, d.shape, s.params);
        const row = record.tables.corrections?.[i] as Record<string, JsonValue>;
        expect(row.what_if).toBe(s.spec);
        for (const [k, v] of Object.entries(want?.metrics ?? {})) close(row[k], v, `${s.spec} ${k}`);
        for (const [k, v] of Object.entries(want?.summary ?? {}))
          close(row[k], v as number, `${s.spec} ${k}`);
      }
    });
  }

  it('refuses an unknown mode or parameter naming the spec', async () => {
    await expect(runTokenAudit('/nonexistent', { preset: 'nemo-rl', whatIf: ['trl:nope'] })).rejects.toThrow(
      /--what-if 'trl:nope'/,
    );
    await expect(
      runTokenAudit('/nonexistent', { preset: 'nemo-rl', whatIf: ['openrlhf:icepop,clip_max=2'] }),
    ).rejects.toThrow(/unknown parameter "clip_max"/);
  });
});
