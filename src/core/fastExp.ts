/**
 * `exp(x)` for the policy losses' hot loop (internal). V8's `Math.exp` is a call into a scalar C
 * routine that the JIT cannot inline; on the vanilla loss it was most of the kernel's time. This
 * is the classic table-driven reduction, written so that TurboFan inlines it:
 *
 *     x = (k/32)·ln 2 + r,   |r| ≤ ln 2 / 64 ≈ 0.0108,   k = round(32·x / ln 2)
 *     exp(x) = 2^(k/32) · P(r),   P(r) = 1 + r + r²/2 + r³/6 + r⁴/24 + r⁵/120
 *
 * with `2^(k/32)` read from a float64 table and `k·ln2/32` subtracted in two parts (Cody-Waite), so
 * `r` is exact to float64 rounding. The truncation error of P is below r⁶/720 ≈ 2.2e-15, so the
 * result is within a few float64 ulps of the true exp (measured: relative error < 1e-14 over
 * [-32, 32], see fastExp.test.ts): 1e9 times finer than the golden tolerance (rel 1e-5), and the
 * float32 per-token losses it feeds round to the same values as with `Math.exp` except in the rare
 * case where a value lies within ~1e-14 of a float32 rounding boundary. Outside [-32, 32] (only
 * reachable with a log-ratio clamp above 32) it calls `Math.exp`.
 */

/** Table steps per octave: `2^(k/32)`. */
const STEPS = 32;
/** Largest |x| served by the table (beyond it: Math.exp). */
export const FAST_EXP_RANGE = 32;
const OFFSET = Math.ceil((FAST_EXP_RANGE * STEPS) / Math.LN2) + 1;
const POW2 = new Float64Array(2 * OFFSET + 1);
for (let k = -OFFSET; k <= OFFSET; k++) POW2[k + OFFSET] = 2 ** (k / STEPS);
const INV_STEP = STEPS / Math.LN2;
/** ln 2 / 32 split into a high part with trailing zero bits (k·HI is exact) and the rest. */
const STEP_HI = 0.6931471803691238 / STEPS;
const STEP_LO = 1.9082149292705877e-10 / STEPS;
/** Adding and subtracting 1.5·2^52 rounds a float64 of magnitude < 2^51 to the nearest integer. */
const ROUND = 6755399441055744;

/** The constants above, for the SIMD copy of this function in vanillaSimd.ts (which must match bit for bit). */
export const FAST_EXP_TABLE = Object.freeze({
  /** `2^(k/32)` for k in [−offset, offset], at index k + offset. */
  pow2: POW2,
  offset: OFFSET,
  invStep: INV_STEP,
  stepHi: STEP_HI,
  stepLo: STEP_LO,
  round: ROUND,
});

/** `exp(x)` within a few float64 ulps (see the file header); NaN for NaN. */
export function fastExp(x: number): number {
  if (!(x >= -FAST_EXP_RANGE && x <= FAST_EXP_RANGE)) return Math.exp(x);
  const k = x * INV_STEP + ROUND - ROUND;
  const r = x - k * STEP_HI - k * STEP_LO;
  const r2 = r * r;
  const p = 1 + r + r2 * (0.5 + r * (1 / 6) + r2 * (1 / 24 + r * (1 / 120)));
  return (POW2[(k | 0) + OFFSET] as number) * p;
}
