/**
 * Test helper: the golden cases of the TRL and OpenRLHF importance-sampling kernels,
 * test/golden/trl-openrlhf-is.json, written by scripts/golden/trl_openrlhf_is.py (a line-by-line numpy
 * transcription of the frameworks' torch code; its meta cites the commits), and the comparison the
 * tests use: float64, relative tolerance 1e-12 (sums may run in another order than numpy's pairwise sum).
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { CorrectionSummary } from '../../src/core/correctionSummary.js';
import type { RolloutLogProbs } from '../../src/core/rolloutCorrection.js';

type Num = number | 'NaN' | 'Infinity' | '-Infinity';

export interface GoldenBatch {
  shape: { rows: number; cols: number };
  inputs: RolloutLogProbs;
}

export interface GoldenCase {
  name: string;
  batch: string;
  framework: 'trl' | 'openrlhf';
  mode: string;
  params: Record<string, number | null>;
  outputs: {
    framework_tensor_shape: number[];
    framework_tensor: Num[];
    weights: number[];
    mask: number[];
    metrics: Record<string, number>;
    summary: CorrectionSummary;
  };
}

interface GoldenFile {
  meta: Record<string, unknown>;
  batches: Record<
    string,
    {
      shape: { rows: number; cols: number };
      old_log_prob: number[];
      rollout_log_prob: number[];
      response_mask: number[];
    }
  >;
  cases: GoldenCase[];
}

const file = JSON.parse(
  readFileSync(new URL('../golden/trl-openrlhf-is.json', import.meta.url), 'utf8'),
) as GoldenFile;

export const GOLDEN_META = file.meta;

/** The batch of a case, as the kernels take it (float64 log-probs, float32 mask). */
export function goldenBatch(name: string): GoldenBatch {
  const b = file.batches[name];
  if (!b) throw new Error(`no golden batch ${name}`);
  return {
    shape: b.shape,
    inputs: {
      oldLogProb: Float64Array.from(b.old_log_prob),
      rolloutLogProb: Float64Array.from(b.rollout_log_prob),
      responseMask: Float32Array.from(b.response_mask),
    },
  };
}

export function goldenCases(framework: 'trl' | 'openrlhf'): GoldenCase[] {
  return file.cases.filter((c) => c.framework === framework);
}

/** |actual − expected| ≤ 1e-12·max(1, |expected|) (exact for integers and for 0). */
export function expectClose(actual: number, expected: number, what: string): void {
  const tol = 1e-12 * Math.max(1, Math.abs(expected));
  if (!(Math.abs(actual - expected) <= tol)) {
    expect.fail(`${what}: got ${actual}, expected ${expected} (tolerance ${tol})`);
  }
}

/** Compares a kernel result with a golden case's outputs: weights, mask, metrics, summary. */
export function expectMatchesGolden(
  result: {
    weights: ArrayLike<number>;
    mask: ArrayLike<number>;
    metrics: Record<string, number>;
    summary: CorrectionSummary;
  },
  c: GoldenCase,
): void {
  const o = c.outputs;
  expect(result.weights.length).toBe(o.weights.length);
  for (let i = 0; i < o.weights.length; i++) {
    expectClose(result.weights[i] as number, o.weights[i] as number, `${c.name} weights[${i}]`);
    expect(result.mask[i], `${c.name} mask[${i}]`).toBe(o.mask[i]);
  }
  expect(Object.keys(result.metrics).sort()).toEqual(Object.keys(o.metrics).sort());
  for (const [k, v] of Object.entries(o.metrics))
    expectClose(result.metrics[k] as number, v, `${c.name} ${k}`);
  expect(Object.keys(result.summary).sort()).toEqual(Object.keys(o.summary).sort());
  for (const [k, v] of Object.entries(o.summary)) {
    expectClose(result.summary[k as keyof CorrectionSummary], v, `${c.name} summary.${k}`);
  }
}
