/**
 * Vanilla PPO policy loss (verl `compute_policy_loss_vanilla`) and `agg_loss` (token-mean and
 * seq-mean-token-mean) on a float32 batch B=4096, T=4096 with ragged right-padded masks (some with
 * multi-turn holes) and groups of 8 rows sharing a GRPO-style advantage sign pattern;
 * single-threaded.
 *
 * Floor (the definition): reading the input arrays and writing the output once, measured as
 * a typed-array copy of the same bytes into preallocated buffers (policy loss: old_log_prob,
 * log_prob, advantages and mask; aggLoss: loss_mat and mask). Each ratio is measured in the same run
 * as its floor, call by call (`timePaired` in bench/timing.ts). On float32 inputs both kernels run
 * their WebAssembly SIMD pass (src/core/lossSimd.ts, bit-identical to the JavaScript one); the
 * ratios include copying the inputs into the kernel's memory and the output back out. The policy
 * loss must evaluate one exp per live token; the two `exp only` rows are reference loops, not
 * library kernels: scalar JavaScript doing only that (read two arrays, exp, write one), which shows
 * what the scalar exp alone costs. Inputs come from a fixed LCG, so every run times the same batch.
 */
import { aggLoss } from '../src/core/aggLoss.js';
import { fastExp } from '../src/core/fastExp.js';
import { policyLossVanilla } from '../src/core/vanillaPolicyLoss.js';
import type { BenchRow } from './run.js';
import { type PairedTiming, timePaired } from './timing.js';

const B = 4096;
const T = 4096;
const GROUP = 8;

function buildBatch() {
  let x = 2024;
  const next = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 4294967296;
  };
  const n = B * T;
  const old = new Float32Array(n);
  const lp = new Float32Array(n);
  const adv = new Float32Array(n);
  const mask = new Float32Array(n);
  for (let b = 0; b < B; b++) {
    const len = 1 + Math.floor(next() * T);
    const hole = next() < 0.25 ? Math.floor(next() * len) : -1; // multi-turn tool span
    const a = (next() < 0.5 ? -1 : 1) * (0.2 + next()) * (b % GROUP === 0 ? 0 : 1);
    for (let t = 0; t < T; t++) {
      const i = b * T + t;
      const o = -3 * next();
      old[i] = o;
      // log-ratio mostly small (on-policy drift), sometimes past the clip range
      lp[i] = o + (next() - 0.5) * (next() < 0.1 ? 1.5 : 0.2);
      if (t < len && !(hole >= 0 && t >= hole && t < hole + 64)) {
        mask[i] = 1;
        adv[i] = a;
      }
    }
  }
  return { old, lp, adv, mask };
}

/** `out = exp(lp − old)` over `[i0, i1)`; called in chunks like the kernels (V8 then optimises it whole). */
function expChunk(lp: Float32Array, old: Float32Array, out: Float32Array, i0: number, i1: number): void {
  for (let i = i0; i < i1; i++) out[i] = Math.exp((lp[i] as number) - (old[i] as number));
}

/** {@link expChunk} with the kernel's table-driven exp (src/core/fastExp.ts). */
function fastExpChunk(lp: Float32Array, old: Float32Array, out: Float32Array, i0: number, i1: number): void {
  for (let i = i0; i < i1; i++) out[i] = fastExp((lp[i] as number) - (old[i] as number));
}

/** Timed pairs per kernel: fewer than timing.ts's default 11, since every call streams 64 MB arrays. */
const REPEATS = 9;

export async function run(): Promise<BenchRow[]> {
  const { old, lp, adv, mask } = buildBatch();
  const shape = { rows: B, cols: T };
  const n = B * T;
  const s1 = new Float32Array(n);
  const s2 = new Float32Array(n);
  const s3 = new Float32Array(n);
  const s4 = new Float32Array(n);
  const floorPolicy = () => {
    s1.set(old);
    s2.set(lp);
    s3.set(adv);
    s4.set(mask);
  };
  const floorAgg = () => {
    s1.set(lp);
    s4.set(mask);
  };
  const out = new Float32Array(n);
  const note = `B=${B}, T=${T}, groups of ${GROUP}, ragged masks with holes, float32`;
  const row = (name: string, r: PairedTiming, extra: string): BenchRow => ({
    group: 'loss',
    name,
    ms: r.ms,
    floor_ms: r.floorMs,
    ratio: r.ratio,
    note: extra ? `${note}; ${extra}` : note,
  });
  return [
    row(
      'policyLossVanilla token-mean',
      timePaired(
        () => policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape),
        floorPolicy,
        5,
      ),
      'allocates perTokenLoss: first-touch page faults of 64 MB each call',
    ),
    row(
      'policyLossVanilla token-mean, reused out',
      timePaired(
        () =>
          policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
            out,
          }),
        floorPolicy,
        REPEATS,
      ),
      'writes into a preallocated output, as the floor does (like-for-like)',
    ),
    row(
      'policyLossVanilla seq-mean-token-mean, reused out',
      timePaired(
        () =>
          policyLossVanilla({ oldLogProb: old, logProb: lp, advantages: adv, responseMask: mask }, shape, {
            out,
            lossAggMode: 'seq-mean-token-mean',
          }),
        floorPolicy,
        REPEATS,
      ),
      '',
    ),
    row(
      'exp only (Math.exp loop, reference)',
      timePaired(
        () => {
          for (let i = 0; i < n; i += 16384) expChunk(lp, old, out, i, Math.min(n, i + 16384));
        },
        floorPolicy,
        REPEATS,
      ),
      'reference loop, not a kernel: read lp, old; write exp(lp - old) with scalar Math.exp',
    ),
    row(
      "exp only (fastExp loop, the kernel's exp)",
      timePaired(
        () => {
          for (let i = 0; i < n; i += 16384) fastExpChunk(lp, old, out, i, Math.min(n, i + 16384));
        },
        floorPolicy,
        REPEATS,
      ),
      'reference loop, not a kernel: the same with fastExp.ts, the exp the SIMD pass evaluates two lanes at a time',
    ),
    row(
      'aggLoss token-mean',
      timePaired(() => aggLoss({ lossMat: lp, lossMask: mask }, shape, 'token-mean'), floorAgg, REPEATS),
      'floor = copy of loss_mat + mask',
    ),
    row(
      'aggLoss seq-mean-token-mean',
      timePaired(
        () => aggLoss({ lossMat: lp, lossMask: mask }, shape, 'seq-mean-token-mean'),
        floorAgg,
        REPEATS,
      ),
      'floor = copy of loss_mat + mask',
    ),
  ];
}
