/**
 * The streaming fold (SQL per-sequence statistics, mismatchFold.ts, whatIf.ts) equals the verl
 * kernels of src/core/rolloutCorrection.ts (themselves checked against verl's own outputs) run on
 * the materialised `[B,T]` batch, for random dumps and every verl option: token and sequence IS,
 * every `rollout_rs` option alone and combined. Random dumps have heavy tails (|Δ| up to ~30, past
 * the ±20 clamp), sequences of one token, and tokens outside the loss mask holding garbage.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { offPolicyMetrics, RS_OPTIONS, rolloutCorrection } from '../../core/rolloutCorrection.js';
import type { JsonValue } from '../../experiments/types.js';
import { Rng } from '../../random.js';
import { runTokenAudit } from './tokenAudit.js';

interface Dump {
  dir: string;
  old: Float64Array;
  roll: Float64Array;
  mask: Float64Array;
  rows: number;
  cols: number;
}

function randomDump(seed: number): Dump {
  const rng = new Rng(seed);
  const rows = 3 + rng.int(0, 6);
  const cols = 1 + rng.int(0, 12);
  const old = new Float64Array(rows * cols);
  const roll = new Float64Array(rows * cols);
  const mask = new Float64Array(rows * cols);
  const lines: string[] = [];
  for (let b = 0; b < rows; b++) {
    const len = b === 0 ? 1 : 1 + rng.int(0, cols - 1);
    const o: number[] = [];
    const r: number[] = [];
    const m: number[] = [];
    for (let t = 0; t < cols; t++) {
      const inMask = t < len && (t === 0 || rng.next() < 0.8) ? 1 : 0;
      const lr = -3 * rng.next();
      const tail = rng.next();
      const d =
        tail < 0.05
          ? 30 * (rng.next() - 0.5)
          : tail < 0.2
            ? 2 * (rng.next() - 0.5)
            : 0.01 * (rng.next() - 0.5);
      const ov = Math.min(lr + d, 0);
      o.push(inMask ? ov : -99);
      r.push(inMask ? lr : 0.25);
      m.push(inMask);
      old[b * cols + t] = inMask ? ov : 0;
      roll[b * cols + t] = inMask ? lr : 0;
      mask[b * cols + t] = inMask;
    }
    // a row with no loss token is not a row of the fold; give every row one
    if (!m.some((x) => x === 1)) {
      m[0] = 1;
      mask[b * cols] = 1;
      o[0] = -0.5;
      r[0] = -0.4;
      old[b * cols] = -0.5;
      roll[b * cols] = -0.4;
    }
    lines.push(
      JSON.stringify({ step: 1, task: 'x', trainer_logprobs: o, rollout_logprobs: r, loss_mask: m }),
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'labs-fold-'));
  writeFileSync(join(dir, 'dump.jsonl'), `${lines.join('\n')}\n`);
  return { dir, old, roll, mask, rows, cols };
}

function close(actual: JsonValue | undefined, want: number, key: string): void {
  expect(typeof actual, key).toBe('number');
  const a = actual as number;
  const tol = 1e-9 * Math.max(Math.abs(a), Math.abs(want), 1e-300) + 1e-13;
  if (!(Math.abs(a - want) <= tol)) throw new Error(`${key}: fold ${a}, kernel ${want}`);
}

const WHAT_IFS: {
  spec: string;
  is?: { level: 'token' | 'sequence'; threshold: number };
  rs?: [string, string];
}[] = [
  { spec: 'rollout_is=token,rollout_is_threshold=1.5', is: { level: 'token', threshold: 1.5 } },
  { spec: 'rollout_is=sequence,rollout_is_threshold=3', is: { level: 'sequence', threshold: 3 } },
  ...RS_OPTIONS.map((o) => {
    const thr = o.endsWith('k1') ? '0.7_1.8' : o.startsWith('seq_sum') ? '0.5' : '0.05';
    return { spec: `rollout_rs=${o},rollout_rs_threshold=${thr}`, rs: [o, thr] as [string, string] };
  }),
  {
    spec: 'rollout_is=token,rollout_is_threshold=2,rollout_rs=token_k1,seq_max_k2,rollout_rs_threshold=0.5_2,0.3',
    is: { level: 'token', threshold: 2 },
    rs: ['token_k1,seq_max_k2', '0.5_2,0.3'],
  },
];

describe('the streaming fold equals the verl kernels on the materialised batch', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    it(`random dump ${seed}`, async () => {
      const d = randomDump(seed);
      const record = await runTokenAudit(d.dir, {
        preset: 'generic-tokens',
        whatIf: WHAT_IFS.map((w) => w.spec),
      });
      const shape = { rows: d.rows, cols: d.cols };
      const inputs = { oldLogProb: d.old, rolloutLogProb: d.roll, responseMask: d.mask };
      for (const [k, v] of Object.entries(offPolicyMetrics(inputs, shape)))
        close(record.metrics[`rollout_corr/${k}`], v, `offpolicy ${k}`);
      for (const [i, w] of WHAT_IFS.entries()) {
        const want = rolloutCorrection(inputs, shape, {
          is: w.is ?? null,
          rejection: w.rs ? { rolloutRs: w.rs[0], threshold: w.rs[1] } : null,
        });
        const row = record.tables.corrections?.[i] as Record<string, JsonValue>;
        expect(
          Object.keys(row)
            .filter((k) => k.startsWith('rollout_corr/'))
            .sort(),
        ).toEqual(Object.keys(want.metrics).sort());
        for (const [k, v] of Object.entries(want.metrics)) close(row[k], v, `${w.spec} ${k}`);
        let kept = 0;
        for (let j = 0; j < want.mask.length; j++) kept += want.mask[j] as number;
        expect(row.kept_tokens, `${w.spec} kept`).toBe(kept);
      }
    });
  }
});
