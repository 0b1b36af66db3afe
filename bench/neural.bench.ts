/**
 * The neural policy (src/policy/sequenceModel.ts): one forward + backward pass on a batch of
 * 128 transcripts x 48 tokens (d_model 32), in tokens/s and achieved GFLOP/s against this machine's
 * measured float32 multiply-add peak (a plain 4-accumulator dot product in L1, timed in pairs with the
 * pass in the same run), and the
 * same model written with TensorFlow.js (CPU and WASM backends) when it is installed (see
 * bench/neuralTfjs.ts): the measurement that chose the hand-written implementation. Last, one
 * 150-update token-lab arm with the neural policy (bench/neuralRun.ts, its own process): wall time
 * against the 60 s target and its peak RSS.
 */

import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packSequences, SequenceModel } from '../src/policy/sequenceModel.js';
import { Rng } from '../src/random.js';
import { loadTfjs, tfjsForwardBackward } from './neuralTfjs.js';
import type { BenchRow } from './run.js';
import { timeMedian, timePaired } from './timing.js';

const B = 128;
const T = 48;
const D = 32;
const V = 23;
const C = 64;

/**
 * The float32 multiply-add loop that stands for one core's peak (4 independent accumulators over
 * 1024 values, in L1), and its FLOP count per call.
 */
export function multiplyAddLoop(): { loop: () => void; flops: number } {
  const n = 1024;
  const reps = 20000;
  const x = new Float32Array(n);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    x[i] = (i % 7) * 0.01;
    y[i] = (i % 5) * 0.02;
  }
  let sink = 0;
  const loop = () => {
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let r = 0; r < reps; r++) {
      for (let i = 0; i < n; i += 4) {
        a0 += (x[i] as number) * (y[i] as number);
        a1 += (x[i + 1] as number) * (y[i + 1] as number);
        a2 += (x[i + 2] as number) * (y[i + 2] as number);
        a3 += (x[i + 3] as number) * (y[i + 3] as number);
      }
    }
    sink += a0 + a1 + a2 + a3;
    if (sink === -1) console.log(sink);
  };
  return { loop, flops: 2 * n * reps };
}

/**
 * Matrix-product FLOPs of one forward + backward pass of the GRU model (elementwise work, ~20·d per
 * token, left out): forward = tables (V+C)·6d² + per token 6d² (recurrence) + 2dV (output head);
 * backward = twice each (gradient of the weights and of the inputs).
 */
export function forwardBackwardFlops(
  rows: number,
  predicted: number,
  d: number,
  v: number,
  c: number,
): number {
  const tables = (v + c) * 6 * d * d;
  const perToken = 6 * d * d + 2 * d * v;
  return 3 * (tables + rows * predicted * perToken);
}

export async function run(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const peak = multiplyAddLoop();

  const rng = new Rng(1);
  const tokens = Int32Array.from({ length: B * T }, () => rng.int(0, V - 1));
  const grad = Float32Array.from({ length: B * (T - 1) }, () => 2 * rng.next() - 1);
  const prompts = Array.from({ length: B }, (_, b) => [tokens[b * T] as number]);
  const responses = Array.from({ length: B }, (_, b) => Array.from(tokens.subarray(b * T + 1, (b + 1) * T)));
  const batch = packSequences(prompts, responses);
  const model = new SequenceModel({ vocab: V, context: C, dModel: D }, new Rng(2));
  const out = new Float64Array(B * (T - 1));
  const g64 = Float64Array.from(grad);
  const hand = () => {
    model.logProbs(batch, out);
    model.backward(g64);
  };
  // The peak loop and the pass back to back, 11 pairs: the fraction of peak is taken from the
  // median per-pair time ratio, so a change of the shared machine's speed hits both sides of it.
  const paired = timePaired(hand, peak.loop, 11);
  const handMs = paired.ms;
  const peakGflops = peak.flops / paired.floorMs / 1e6;
  rows.push({
    group: 'neural',
    name: 'float32 multiply-add peak (1 core, plain loop)',
    ms: paired.floorMs,
    note: `${peakGflops.toFixed(2)} GFLOP/s`,
  });
  const flops = forwardBackwardFlops(B, T - 1, D, V, C);
  const gflops = flops / handMs / 1e6;
  const ofPeak = flops / peak.flops / paired.ratio;
  rows.push({
    group: 'neural',
    name: `forward+backward ${B}x${T} d${D} (hand-written, float64)`,
    ms: handMs,
    floor_ms: paired.floorMs,
    ratio: paired.ratio,
    note: `${((B * T) / handMs).toFixed(1)}k tok/s; ${gflops.toFixed(2)} GFLOP/s = ${(100 * ofPeak).toFixed(0)}% of peak (median of 11 paired ratios; floor = the peak loop)`,
  });
  for (const backend of ['cpu', 'wasm'] as const) {
    const tf = await loadTfjs(backend);
    if (!tf) {
      rows.push({
        group: 'neural',
        name: `forward+backward with tfjs-${backend}`,
        ms: Number.NaN,
        note: 'not installed (optional)',
      });
      continue;
    }
    const step = tfjsForwardBackward(tf, B, T, D, V, C, tokens, grad);
    const ms = timeMedian(step, 3, 1);
    rows.push({
      group: 'neural',
      name: `forward+backward ${B}x${T} d${D} (tfjs ${backend}, float32)`,
      ms,
      floor_ms: handMs,
      ratio: ms / handMs,
      note: 'ratio = tfjs / hand-written',
    });
  }
  // the 150-update token-lab run with the neural policy, in a child process (its own peak RSS)
  const here = dirname(fileURLToPath(import.meta.url));
  const printed = execFileSync(process.execPath, ['--import', 'tsx', join(here, 'neuralRun.ts')], {
    encoding: 'utf8',
  });
  const run = JSON.parse(printed.trim().split('\n').pop() as string) as {
    ms: number;
    cpu_ms: number;
    max_rss_mb: number;
    rss_source: string;
    trajectories: number;
    tokens: number;
    eval_success: number;
  };
  rows.push({
    group: 'neural',
    name: `token-lab arm, policy=neural, 150 updates (${run.trajectories} trajectories)`,
    ms: run.ms,
    note: `target <= 60000 ms; CPU time ${(run.cpu_ms / 1000).toFixed(1)} s; ${run.tokens} response tokens; peak RSS ${run.max_rss_mb.toFixed(0)} MB (${run.rss_source}); eval success ${run.eval_success}`,
  });
  return rows;
}
