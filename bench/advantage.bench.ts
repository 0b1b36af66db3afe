/**
 * GRPO advantage (verl `compute_grpo_outcome_advantage` semantics) on a float32 batch B=4096, T=4096
 * with ragged right-padded masks and groups of 8 (string uids, as verl's trainer), single-threaded.
 *
 * Floor (the definition): reading the input arrays and writing the output once, measured as a
 * typed-array copy of the same bytes (rewards and mask copied into preallocated buffers). The ratio is
 * measured in the same run as its floor, alternating kernel and floor call by call (median of the
 * per-pair ratios). The default call allocates its [B,T] output, and first writes
 * to fresh memory cost page faults that the floor's preallocated buffers do not pay, so the row with a
 * reused output (`{ out }`) is the like-for-like comparison; both are reported. Inputs are built from a fixed LCG, so every run times the
 * same batch.
 */
import { grpoAdvantage, grpoVectorizedAdvantage } from '../src/core/grpo.js';
import type { BenchRow } from './run.js';
import { timePaired } from './timing.js';

const B = 4096;
const T = 4096;
const GROUP = 8;

function buildBatch() {
  let x = 12345;
  const next = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 4294967296;
  };
  const rewards = new Float32Array(B * T);
  const mask = new Float32Array(B * T);
  const maskU8 = new Uint8Array(B * T);
  const index: string[] = [];
  for (let b = 0; b < B; b++) {
    const len = 1 + Math.floor(next() * T);
    mask.fill(1, b * T, b * T + len);
    maskU8.fill(1, b * T, b * T + len);
    rewards[b * T + len - 1] = next() < 0.4 ? 1 : 0; // outcome reward on the last valid token
    index.push(`uid-${Math.floor(b / GROUP)}`);
  }
  return { rewards, mask, maskU8, index };
}

export async function run(): Promise<BenchRow[]> {
  const { rewards, mask, maskU8, index } = buildBatch();
  const shape = { rows: B, cols: T };
  const outCopy = new Float32Array(B * T);
  const maskCopy = new Float32Array(B * T);
  const maskCopyU8 = new Uint8Array(B * T);
  const floorF32 = () => {
    outCopy.set(rewards);
    maskCopy.set(mask);
  };
  const floorU8 = () => {
    outCopy.set(rewards);
    maskCopyU8.set(maskU8);
  };
  const reused = new Float32Array(B * T);
  const rows: [string, () => void, () => void, string][] = [
    [
      'grpoAdvantage, float32 mask, reused out',
      () => grpoAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index }, shape, { out: reused }),
      floorF32,
      `B=${B}, T=${T}, groups of ${GROUP}, ragged masks; floor = copy of rewards + mask into preallocated buffers`,
    ],
    [
      'grpoAdvantage, float32 mask (allocating)',
      () => grpoAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index }, shape),
      floorF32,
      'default call: a new [B,T] output each time (first-touch page faults the floor does not pay)',
    ],
    [
      'grpoAdvantage, uint8 mask, reused out',
      () =>
        grpoAdvantage({ tokenLevelRewards: rewards, responseMask: maskU8, index }, shape, { out: reused }),
      floorU8,
      'same batch, Uint8Array mask; floor copies rewards + the uint8 mask',
    ],
    [
      'grpoVectorizedAdvantage, float32 mask, reused out',
      () =>
        grpoVectorizedAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index }, shape, {
          out: reused,
        }),
      floorF32,
      'as_torch_index + float32 group_mean_std emulation, writing into a preallocated output (like-for-like)',
    ],
    [
      'grpoVectorizedAdvantage, float32 mask (allocating)',
      () => grpoVectorizedAdvantage({ tokenLevelRewards: rewards, responseMask: mask, index }, shape),
      floorF32,
      'as_torch_index + float32 group_mean_std emulation',
    ],
  ];
  return rows.map(([name, kernel, floor, note]) => {
    const r = timePaired(kernel, floor);
    return { group: 'advantage', name, ms: r.ms, floor_ms: r.floorMs, ratio: r.ratio, note };
  });
}
