/**
 * The WebAssembly SIMD body of the vanilla policy loss's fused pass (internal; the driver and the
 * semantics are in vanillaPolicyLoss.ts). Scalar JavaScript pays for one exp per live token and a
 * data-dependent branch per token; here tokens go through the same straight-line code in the float64
 * lanes of v128s, four per step as two interleaved f64x2 (their exps are independent dependency
 * chains, which the core then overlaps), with the clip regions chosen by lane masks.
 *
 * Bit-identical to the JavaScript pass, by construction:
 * - every per-token value is computed in float64 with the same operations in the same order
 *   (IEEE-754 add, sub, mul, min, max give the same bits in wasm and in JavaScript; there is no fused
 *   multiply-add in wasm's SIMD): the log-ratio clamp, the region tests against `log(1 ± ε)` and
 *   `log c`, and fastExp.ts's table-driven exp (`2^(k/32)` read from the same table, stored
 *   negated: the kernel forms −ratio, and `A·(−ratio)` has the bits of `−A·ratio`, since IEEE-754
 *   multiplication rounds the magnitude and takes the sign apart);
 * - the float32 store rounds as a Float32Array store does;
 * - the row sums and the KL sum are added one token at a time in index order (the additions of a
 *   masked lane add +0, which leaves a running sum unchanged because such a sum is never −0), and the
 *   driver combines the per-row sums exactly as the JavaScript pass does.
 * lossSimd.test.ts checks the equality on generated batches, edge values included.
 *
 * Inputs must be float32 (a float64 array takes the JavaScript pass: rounding it to float32 would
 * change values), and the log-ratio clamp at most {@link FAST_EXP_RANGE} (beyond it fastExp calls
 * Math.exp). The kernel is written below as folded expressions (wasmAssembler.ts's builders:
 * `f64x2.mul(local.get(x), …)` reads as the text format's `(f64x2.mul (local.get $x) …)`), and
 * assembled by wasmAssembler.ts the first time it is needed (lossSimd.bytes.test.ts pins its bytes);
 * where WebAssembly SIMD is unavailable {@link lossSimdKernel} returns null and the JavaScript pass
 * runs; {@link lossSimdFallbackReason} says why, and lossSimd.test.ts fails when the engine supports
 * SIMD ({@link wasmSimdSupported}) but the kernel was not built or not used.
 */
import type { FloatArray, MaskArray } from './batch.js';
import { FAST_EXP_RANGE, FAST_EXP_TABLE } from './fastExp.js';
import {
  assembleModule,
  control,
  type Expr,
  f32,
  f32x4,
  f64,
  f64x2,
  funcDef,
  i32,
  i32x4,
  i64,
  i64x2,
  type Local,
  Locals,
  local,
  memory,
  type Stmt,
  seq,
  v128,
  type WasmApi,
  type WasmMemory,
  wasmApi,
} from './wasmAssembler.js';

const { get, set, tee } = local;
const { block, loop, br, br_if } = control;

/** `while (!exit) body`: `exit` is tested at the top; `br_if(1, …)` in `body` leaves the loop too. */
const until = (exit: Expr<'i32'>, ...body: Stmt[]): Stmt => block(loop(br_if(1, exit), ...body, br(0)));

/** Byte address `base + (index << shift)`. */
const addrOf = (base: Local<'i32'>, index: Expr<'i32'>, shift: number) =>
  i32.add(get(base), i32.shl(index, i32.const(shift)));

/** `x += by`. */
const inc = (x: Local<'i32'>, by: number) => set(x, i32.add(get(x), i32.const(by)));

/** The sum of the two i64 lanes of `x`. */
const i64x2Total = (x: Local<'v128'>) =>
  i64.add(i64x2.extract_lane(get(x), 0), i64x2.extract_lane(get(x), 1));

/**
 * Loads a v128 of float32 mask entries (`load`) into `m`; `nz` = lanes where m != 0 (NaN counts as
 * valid, as `m === 0` is false in the JS passes), and `bad` |= lanes where m != 0 and m != 1.
 */
const maskTests = (
  load: Expr<'v128'>,
  m: Local<'v128'>,
  nz: Local<'v128'>,
  zero: Expr<'v128'>,
  one: Expr<'v128'>,
  bad: Local<'v128'>,
) => set(bad, v128.or(v128.and(tee(nz, f32x4.ne(tee(m, load), zero)), f32x4.ne(get(m), one)), get(bad)));

/**
 * Moves `end` back over the row's right-padding tail of mask zeros (down to `start`): sixteen
 * entries at a time while all of them are zero, then four, then one. `zero` is f32x4 zeros.
 */
const trimPadding = (maskP: Local<'i32'>, start: Local<'i32'>, end: Local<'i32'>, zero: Expr<'v128'>) => {
  /** Steps back `w` (a multiple of 4) entries at a time while all of them are zero. */
  const stage = (w: number) => {
    const from = addrOf(maskP, i32.sub(get(end), i32.const(w)), 2);
    let nonZero = f32x4.ne(v128.load(from), zero);
    for (let j = 1; j < w / 4; j++) nonZero = v128.or(nonZero, f32x4.ne(v128.load(from, 16 * j), zero));
    return until(
      i32.lt_s(i32.sub(get(end), get(start)), i32.const(w)),
      br_if(1, v128.any_true(nonZero)),
      set(end, i32.sub(get(end), i32.const(w))),
    );
  };
  return seq(
    stage(16),
    stage(4),
    until(
      i32.le_s(get(end), get(start)),
      br_if(1, f32.ne(f32.load(addrOf(maskP, i32.sub(get(end), i32.const(1)), 2)), f32.const(0))),
      set(end, i32.sub(get(end), i32.const(1))),
    ),
  );
};

/** The row loop: exits when `b >= rows`, else sets `start = b·cols` and `rowEnd = end = start + cols`. */
const rowHeader = (
  b: Local<'i32'>,
  rows: Local<'i32'>,
  cols: Local<'i32'>,
  start: Local<'i32'>,
  rowEnd: Local<'i32'>,
  end: Local<'i32'>,
) => ({
  exit: i32.ge_s(get(b), get(rows)),
  head: set(end, tee(rowEnd, i32.add(tee(start, i32.mul(get(b), get(cols))), get(cols)))),
});

/**
 * The vanilla pass's variants, one exported function each, all written by {@link vanillaFunction}:
 * `padCheck` checks the padding values for finiteness, as every aggregation mode but token-mean
 * needs (token-mean never reads the right-padding tail); `weights` multiplies rollout IS weights in.
 * {@link LossSimdKernel.run} picks entry `2·padCheck + weights`.
 */
export const VANILLA_VARIANTS = [
  { name: 'vanilla', padCheck: false, weights: false },
  { name: 'vanilla_w', padCheck: false, weights: true },
  { name: 'vanilla_pad', padCheck: true, weights: false },
  { name: 'vanilla_pad_w', padCheck: true, weights: true },
] as const;
type VanillaVariant = (typeof VANILLA_VARIANTS)[number];

/** The v128 locals of one f64x2 of tokens in the vanilla pass. */
const LANE_LOCALS = [
  'valid',
  'a',
  'd',
  'l',
  't',
  'k',
  'r',
  'r2',
  'ratio',
  'neg',
  'negLo',
  'negC',
  'posHi',
  'clipM',
  'bnd',
  'keep',
  'loss',
  'wv',
] as const;
type LaneLocals = Record<(typeof LANE_LOCALS)[number], Local<'v128'>>;

/** The float64 bounds the vanilla pass takes as parameters, in order (see {@link vanillaFunction}). */
const BOUND_NAMES = ['lo', 'hi', 'c', 'L', 'logLo', 'logHi', 'logC'] as const;

/**
 * One variant of the vanilla pass (see {@link VANILLA_VARIANTS}). Signature (byte addresses, float64
 * bounds): `(rows, cols, old, lp, adv, mask, w, out, rowSum, rowCount, res, table, lo, hi, c, L,
 * logLo, logHi, logC)`. Writes `out` (float32), per-row loss sums and valid-token counts (float64),
 * and at `res`: kl, clip count, lower count, the float64 finiteness sum (0 or NaN) at +0..+24, the
 * float32 padding-tail finiteness lanes at +32, and non-zero lanes at +48 where a mask entry was
 * neither 0 nor 1.
 *
 * Why one long function: it emits the body of one WebAssembly function, and every piece of that
 * body (`tailCheck`, {@link lanes}, `token`, the row loop) reads that function's locals, so the
 * pieces are closures over them; each piece is a folded expression that reads as its formula.
 * The declaration order of the locals (including the constants) is their index order, part of the
 * module's pinned bytes (lossSimd.bytes.test.ts).
 */
function vanillaFunction({ name, padCheck, weights }: VanillaVariant) {
  const v = new Locals();
  const rows = v.param('rows', 'i32');
  const cols = v.param('cols', 'i32');
  const oldP = v.param('old', 'i32');
  const lpP = v.param('lp', 'i32');
  const advP = v.param('adv', 'i32');
  const maskP = v.param('mask', 'i32');
  const wP = v.param('w', 'i32');
  const outP = v.param('out', 'i32');
  const rowSumP = v.param('rowSum', 'i32');
  const rowCountP = v.param('rowCount', 'i32');
  const resP = v.param('res', 'i32');
  const tableP = v.param('table', 'i32');
  const bound = Object.fromEntries(BOUND_NAMES.map((n) => [n, v.param(n, 'f64')])) as Record<
    (typeof BOUND_NAMES)[number],
    Local<'f64'>
  >;
  const b = v.local('b', 'i32');
  const start = v.local('start', 'i32');
  const end = v.local('end', 'i32');
  const rowEnd = v.local('rowEnd', 'i32');
  const i = v.local('i', 'i32');
  const p = v.local('p', 'i32');
  const sum = v.local('sum', 'f64');
  const kl = v.local('kl', 'f64');
  const chkS = v.local('chkS', 'f64');
  /** The bounds in both lanes; the ratio bounds lo, hi, c negated, as the exp table (see `lanes`). */
  const splat = Object.fromEntries(BOUND_NAMES.map((n) => [n, v.local(`v_${n}`, 'v128')])) as Record<
    (typeof BOUND_NAMES)[number],
    Local<'v128'>
  >;
  const negL = v.local('negL', 'v128');
  const chk = v.local('chk', 'v128');
  const chkTail = v.local('chkTail', 'v128');
  const bad = v.local('bad', 'v128');
  const nAcc = v.local('nAcc', 'v128');
  const clipAcc = v.local('clipAcc', 'v128');
  const lowerAcc = v.local('lowerAcc', 'v128');
  const m = v.local('m', 'v128');
  const valid4 = v.local('valid4', 'v128');
  /** The locals of one f64x2 of tokens; a group of four interleaves two such sets (see `token`). */
  const laneLocals = (h: number) =>
    Object.fromEntries(LANE_LOCALS.map((n) => [n, v.local(`${n}${h}`, 'v128')])) as LaneLocals;
  const h0 = laneLocals(0);
  const h1 = laneLocals(1);

  // v128 constants live in locals set once at the start (a v128.const inside the loop is
  // rematerialised on every iteration)
  const constInits: Stmt[] = [];
  const constant = (key: string, value: Expr<'v128'>) => {
    const c = v.local(`const_${key}`, 'v128');
    constInits.push(set(c, value));
    return get(c);
  };
  const K = {
    zeroF32: constant('f32_0', f32x4.const(0)),
    oneF32: constant('f32_1', f32x4.const(1)),
    zero: constant('f64_0', f64x2.const(0)),
    one: constant('f64_1', f64x2.const(1)),
    // fastExp.ts's table-driven exp
    invStep: constant('invStep', f64x2.const(FAST_EXP_TABLE.invStep)),
    round: constant('round', f64x2.const(FAST_EXP_TABLE.round)),
    stepHi: constant('stepHi', f64x2.const(FAST_EXP_TABLE.stepHi)),
    stepLo: constant('stepLo', f64x2.const(FAST_EXP_TABLE.stepLo)),
    c2: constant('1/2', f64x2.const(0.5)),
    c6: constant('1/6', f64x2.const(1 / 6)),
    c24: constant('1/24', f64x2.const(1 / 24)),
    c120: constant('1/120', f64x2.const(1 / 120)),
  };

  /** Byte address `base + 4·index`. */
  const at = (base: Local<'i32'>, index: Expr<'i32'>) => addrOf(base, index, 2);

  /** `n` float32 values (1, 2 or 4) of `base` at byte `p + off` into the low lanes of a v128. */
  const load = (base: Local<'i32'>, n: 1 | 2 | 4, off = 0) => {
    const addr = i32.add(get(base), get(p));
    return n === 4
      ? v128.load(addr, off)
      : n === 2
        ? v128.load64_zero(addr, off)
        : v128.load32_zero(addr, off);
  };

  /**
   * The per-token body of `n` (2 or 1) tokens at byte `p + off` in the f64x2 lanes of locals `L`
   * (whose `valid` is set), as statements. Sums are added in statement order, so interleaving two
   * such bodies statement by statement keeps the index order.
   *
   * It is the JavaScript pass's per-token body (clamp, the clip regions, fastExp, the weight, the
   * sums) operation for operation in the same order, as straight-line lane code without a branch:
   * that correspondence is what makes the two bit-identical.
   */
  function lanes(n: 1 | 2, off: number, L: LaneLocals): Stmt[] {
    const loadF64 = (base: Local<'i32'>) => f64x2.promote_low_f32x4(load(base, n, off));
    /** The two lanes' (or the one lane's) contributions to a running scalar sum, in index order. */
    const addLanes = (op: typeof f64.add, acc: Expr<'f64'>, x: Local<'v128'>) => {
      const first = op(acc, f64x2.extract_lane(get(x), 0));
      return n === 2 ? op(first, f64x2.extract_lane(get(x), 1)) : first;
    };
    // finiteness: chk sums d (and, where padding is checked, a and w) and ends as chk − chk, NaN
    // exactly when a summand was not finite: the summands come from float32, so the float64 sum of
    // any chunk stays far from overflow. a or w under mask 1 show in the row's loss sum (per row).
    const loadW = weights && !padCheck ? [set(L.wv, loadF64(wP))] : [];
    let checked = padCheck ? f64x2.add(get(L.d), get(L.a)) : v128.and(get(L.d), get(L.valid));
    if (padCheck && weights) checked = f64x2.add(checked, tee(L.wv, loadF64(wP)));
    /** `x·w` in valid lanes, +0 in masked ones (a weight there may not be finite); without weights `x`. */
    const weighted = (x: Expr<'v128'>) => (weights ? v128.and(f64x2.mul(x, get(L.wv)), get(L.valid)) : x);
    /** Address of entry `lane` (0 or 2: the low i32 of each f64 lane of t) of the negated 2^(k/32) table. */
    const table = (lane: number) =>
      i32.add(get(tableP), i32.shl(i32x4.extract_lane(get(L.t), lane), i32.const(3)));
    const out = i32.add(get(outP), get(p));
    const demoted = f32x4.demote_f64x2_zero(get(L.loss));
    return [
      set(L.a, loadF64(advP)),
      set(L.d, f64x2.sub(loadF64(lpP), loadF64(oldP))),
      // l = min(max(d, −L), L); the pseudo-min/max are the same for any d but NaN (which they send
      // to −L, keeping the exp table index in range; a NaN d always ends in the slow path)
      set(L.l, f64x2.pmin(get(splat.L), f64x2.pmax(get(negL), get(L.d)))),
      ...loadW,
      set(chk, f64x2.add(checked, get(chk))),
      // fastExp(l): k = round(32·l/ln2) via the 1.5·2^52 shift, r = l − k·HI − k·LO,
      // p = 1 + r + r2·(1/2 + r/6 + r2·(1/24 + r/120)), exp = 2^(k/32)·p
      set(L.k, f64x2.sub(tee(L.t, f64x2.add(f64x2.mul(get(L.l), K.invStep), K.round)), K.round)),
      set(
        L.r2,
        f64x2.mul(
          tee(
            L.r,
            f64x2.sub(f64x2.sub(get(L.l), f64x2.mul(get(L.k), K.stepHi)), f64x2.mul(get(L.k), K.stepLo)),
          ),
          get(L.r),
        ),
      ),
      // k := −2^(k/32) from the negated table, lane by lane: the low 32 bits of t = k + 1.5·2^52 are k
      seq(set(L.k, v128.load64_zero(table(0))), set(L.k, v128.load64_lane(table(2), get(L.k), 1))),
      set(
        L.ratio,
        f64x2.mul(
          f64x2.add(
            f64x2.add(K.one, get(L.r)),
            f64x2.mul(
              get(L.r2),
              f64x2.add(
                f64x2.add(K.c2, f64x2.mul(get(L.r), K.c6)),
                f64x2.mul(get(L.r2), f64x2.add(K.c24, f64x2.mul(get(L.r), K.c120))),
              ),
            ),
          ),
          get(L.k),
        ),
      ),
      // regions of valid tokens: A < 0 → l below log lo (clip), or above log c (lower; the two
      // tests exclude each other since log lo <= 0 < log c); A > 0 → l above log hi (clip);
      // elsewhere the exp (A = 0 gives the same ±0 loss with any positive ratio); A is +0 in
      // masked lanes, so they fall in no region
      set(L.neg, f64x2.lt(tee(L.a, v128.and(get(L.a), get(L.valid))), K.zero)),
      set(L.negLo, v128.and(get(L.neg), f64x2.lt(get(L.l), get(splat.logLo)))),
      set(L.negC, v128.and(get(L.neg), f64x2.gt(get(L.l), get(splat.logC)))),
      set(L.posHi, v128.and(f64x2.gt(get(L.a), K.zero), f64x2.gt(get(L.l), get(splat.logHi)))),
      // −ratio: the (negated) bound of the lane's region, else −exp (the table holds −2^(k/32),
      // and −T·p = −(T·p) exactly); the regions are disjoint, so the bounds merge by `or`.
      // `keep` selects −exp in valid lanes outside the regions: masked lanes get +0.
      set(L.clipM, v128.or(get(L.negLo), get(L.posHi))),
      set(L.keep, v128.andnot(get(L.valid), v128.or(get(L.clipM), get(L.negC)))),
      set(
        L.bnd,
        v128.or(
          v128.or(v128.and(get(splat.lo), get(L.negLo)), v128.and(get(splat.c), get(L.negC))),
          v128.and(get(splat.hi), get(L.posHi)),
        ),
      ),
      // loss = A·(−ratio), the bits of −A·ratio; +0·+0 = +0 in masked lanes
      set(L.loss, weighted(f64x2.mul(get(L.a), v128.or(v128.and(get(L.ratio), get(L.keep)), get(L.bnd))))),
      n === 2 ? v128.store64_lane(out, demoted, 0, off) : v128.store32_lane(out, demoted, 0, off),
      // running sums, one token at a time in index order
      set(sum, addLanes(f64.add, get(sum), L.loss)),
      seq(set(L.l, v128.and(get(L.l), get(L.valid))), set(kl, addLanes(f64.sub, get(kl), L.l))),
      // counts: a true lane is −1 as an integer
      set(nAcc, i64x2.sub(get(nAcc), get(L.valid))),
      set(clipAcc, i64x2.sub(get(clipAcc), get(L.clipM))),
      set(lowerAcc, i64x2.sub(get(lowerAcc), get(L.negC))),
    ];
  }

  /**
   * `n` tokens (4, 2 or 1) from `i`. A group of four runs as two f64x2 whose statements are
   * interleaved: the exp is a long dependency chain, and two independent chains side by side keep
   * the core busy where one would leave it waiting.
   */
  const token = (n: 1 | 2 | 4): Stmt => {
    const head = [
      set(p, i32.shl(get(i), i32.const(2))),
      // mask: valid where m != 0; a valid entry other than 1 is a bad mask value
      maskTests(load(maskP, n), m, valid4, K.zeroF32, K.oneF32, bad),
      set(h0.valid, i64x2.extend_low_i32x4_s(get(valid4))),
    ];
    if (n !== 4) return seq(...head, ...lanes(n, 0, h0), inc(i, n));
    const s0 = lanes(2, 0, h0);
    const s1 = lanes(2, 8, h1);
    return seq(
      ...head,
      set(h1.valid, i64x2.extend_high_i32x4_s(get(valid4))),
      ...s0.flatMap((st, j) => [st, s1[j] as Stmt]),
      inc(i, n),
    );
  };

  /**
   * chkTail += the sum of x − x over the float32 lanes of every input array that `load(base,
   * offset)` reads, for `vectors` byte offsets 16 apart: summed as a tree first, so that the running
   * sum is not a chain of one addition per load.
   */
  const tailCheck = (load: (base: Local<'i32'>, offset: number) => Expr<'v128'>, vectors: number) => {
    const arrays = weights ? [lpP, oldP, advP, wP] : [lpP, oldP, advP];
    let terms: Expr<'v128'>[] = [];
    for (let j = 0; j < vectors; j++)
      for (const base of arrays) terms.push(f32x4.sub(tee(m, load(base, 16 * j)), get(m)));
    while (terms.length > 1) {
      const next: Expr<'v128'>[] = [];
      for (let j = 0; j + 1 < terms.length; j += 2)
        next.push(f32x4.add(terms[j] as Expr<'v128'>, terms[j + 1] as Expr<'v128'>));
      if (terms.length % 2) next.push(terms[terms.length - 1] as Expr<'v128'>);
      terms = next;
    }
    return set(chkTail, f32x4.add(get(chkTail), terms[0] as Expr<'v128'>));
  };

  /** Padding [end, rowEnd): tail-checked 16 entries a step, then 4, then 1. */
  const paddingCheck = [
    set(i, get(end)),
    ...[16, 4].map((w) =>
      until(
        i32.gt_s(i32.add(get(i), i32.const(w)), get(rowEnd)),
        tailCheck((base, offset) => v128.load(at(base, get(i)), offset), w / 4),
        inc(i, w),
      ),
    ),
    until(
      i32.ge_s(get(i), get(rowEnd)),
      tailCheck((base) => v128.load32_zero(at(base, get(i))), 1),
      inc(i, 1),
    ),
  ];

  const row = rowHeader(b, rows, cols, start, rowEnd, end);
  const rowBody = [
    row.head,
    trimPadding(maskP, start, end, K.zeroF32),
    // zero the tail of out
    memory.fill(at(outP, get(end)), i32.const(0), i32.shl(i32.sub(get(rowEnd), get(end)), i32.const(2))),
    ...(padCheck ? paddingCheck : []),
    // the valid span [start, end): groups of four, then a pair, then a single token
    set(i, get(start)),
    set(sum, f64.const(0)),
    set(nAcc, K.zero), // all-zero bits: integer 0 too
    until(i32.gt_s(i32.add(get(i), i32.const(4)), get(end)), token(4)),
    control.if(i32.le_s(i32.add(get(i), i32.const(2)), get(end)), token(2)),
    control.if(i32.lt_s(get(i), get(end)), token(1)),
    // per-row outputs
    f64.store(addrOf(rowSumP, get(b), 3), get(sum)),
    f64.store(addrOf(rowCountP, get(b), 3), f64.convert_i64_s(i64x2Total(nAcc))),
    // a non-finite advantage or IS weight under mask 1 makes the row's loss sum non-finite
    set(chkS, f64.add(get(chkS), f64.sub(get(sum), get(sum)))),
    inc(b, 1),
  ];
  const body = [
    ...constInits,
    ...BOUND_NAMES.map((n) => {
      const both = f64x2.splat(get(bound[n]));
      return set(splat[n], n === 'lo' || n === 'hi' || n === 'c' ? f64x2.neg(both) : both);
    }),
    set(negL, f64x2.sub(K.zero, f64x2.splat(get(bound.L)))),
    until(row.exit, ...rowBody),
    // chunk outputs
    set(chk, f64x2.sub(get(chk), get(chk))),
    f64.store(get(resP), get(kl), 0),
    f64.store(get(resP), f64.convert_i64_s(i64x2Total(clipAcc)), 8),
    f64.store(get(resP), f64.convert_i64_s(i64x2Total(lowerAcc)), 16),
    f64.store(
      get(resP),
      f64.add(f64.add(f64x2.extract_lane(get(chk), 0), f64x2.extract_lane(get(chk), 1)), get(chkS)),
      24,
    ),
    v128.store(get(resP), get(chkTail), 32),
    v128.store(get(resP), get(bad), 48),
  ];
  return funcDef(name, v, body);
}

/**
 * aggLoss.ts's row sums (`aggRows`), four tokens at a time: the partial sums s0..s3 of `x·m` over
 * positions ≡ 0..3 (mod 4) from the row start sit in the lanes of two f64x2 (each lane adds the same
 * products in the same order as its JavaScript variable), the last < 4 tokens go to s0 one by one,
 * and `sum = s0 + s1 + (s2 + s3)`. Signature `(rows, cols, x, mask, rowSum, rowCount, res, padCheck)`;
 * without `padCheck` (token-mean) the right-padding tail of mask zeros is not read. Writes per-row
 * sums and valid counts (float64) and, at `res + 48`, non-zero lanes where a mask entry was neither 0
 * nor 1.
 */
function aggFunction() {
  const v = new Locals();
  const rows = v.param('rows', 'i32');
  const cols = v.param('cols', 'i32');
  const xP = v.param('x', 'i32');
  const maskP = v.param('mask', 'i32');
  const rowSumP = v.param('rowSum', 'i32');
  const rowCountP = v.param('rowCount', 'i32');
  const resP = v.param('res', 'i32');
  const padCheck = v.param('padCheck', 'i32');
  const b = v.local('b', 'i32');
  const start = v.local('start', 'i32');
  const end = v.local('end', 'i32');
  const rowEnd = v.local('rowEnd', 'i32');
  const p = v.local('p', 'i32');
  const n = v.local('n', 'i32');
  const s0 = v.local('s0', 'f64');
  const mS = v.local('mS', 'f32');
  const s01 = v.local('s01', 'v128');
  const s23 = v.local('s23', 'v128');
  const mv = v.local('mv', 'v128');
  const nz = v.local('nz', 'v128');
  const nAcc = v.local('nAcc', 'v128');
  const bad = v.local('bad', 'v128');
  const zero = v.local('zero', 'v128');
  const one = v.local('one', 'v128');
  /** Byte address `base + p (+ off)`. */
  const addr = (base: Local<'i32'>, off = 0) => {
    const a = i32.add(get(base), get(p));
    return off ? i32.add(a, i32.const(off)) : a;
  };
  const byteIndex = (x: Local<'i32'>) => i32.shl(get(x), i32.const(2));
  const lane = (x: Local<'v128'>, j: number) => f64x2.extract_lane(get(x), j);
  /** Two float32 entries of `base` at byte `p + off` as float64 lanes. */
  const pair = (base: Local<'i32'>, off: number) =>
    f64x2.promote_low_f32x4(v128.load64_zero(addr(base, off)));
  const nonZero = f32.ne(get(mS), f32.const(0));
  const row = rowHeader(b, rows, cols, start, rowEnd, end);
  const rowBody = [
    row.head,
    // token-mean: skip the tail of mask zeros (16, then 4, then 1 at a time), as aggRows does
    control.if(i32.eqz(get(padCheck)), trimPadding(maskP, start, end, get(zero))),
    // groups of four from the row start
    set(p, byteIndex(start)),
    set(end, byteIndex(end)), // end in bytes from here on
    set(nAcc, tee(s23, tee(s01, get(zero)))),
    set(n, i32.const(0)),
    until(
      i32.gt_s(i32.add(get(p), i32.const(16)), get(end)),
      ...(
        [
          [s01, 0],
          [s23, 8],
        ] as const
      ).map(([s, off]) => set(s, f64x2.add(get(s), f64x2.mul(pair(xP, off), pair(maskP, off))))),
      maskTests(v128.load(addr(maskP)), mv, nz, get(zero), get(one), bad),
      set(nAcc, i32x4.sub(get(nAcc), get(nz))),
      inc(p, 16),
    ),
    // the last < 4 tokens into s0
    set(s0, lane(s01, 0)),
    until(
      i32.ge_s(get(p), get(end)),
      set(mS, f32.load(addr(maskP))),
      set(s0, f64.add(get(s0), f64.mul(f64.promote_f32(f32.load(addr(xP))), f64.promote_f32(get(mS))))),
      set(n, i32.add(nonZero, get(n))),
      set(
        bad,
        v128.or(i32x4.replace_lane(get(bad), i32.and(nonZero, f32.ne(get(mS), f32.const(1))), 0), get(bad)),
      ),
      inc(p, 4),
    ),
    // row outputs: sum = s0 + s1 + (s2 + s3), count
    f64.store(
      addrOf(rowSumP, get(b), 3),
      f64.add(f64.add(get(s0), lane(s01, 1)), f64.add(lane(s23, 0), lane(s23, 1))),
    ),
    f64.store(
      addrOf(rowCountP, get(b), 3),
      f64.convert_i32_s(
        [0, 1, 2, 3].reduce((total, j) => i32.add(total, i32x4.extract_lane(get(nAcc), j)), get(n)),
      ),
    ),
    inc(b, 1),
  ];
  return funcDef('agg', v, [
    set(zero, f32x4.const(0)),
    set(one, f32x4.const(1)),
    until(row.exit, ...rowBody),
    v128.store(get(resP), get(bad), 48),
  ]);
}

/** The module's bytes: the vanilla pass in its four variants ({@link VANILLA_VARIANTS}), and agg. */
export function lossSimdModule(): Uint8Array {
  return assembleModule(1, [...VANILLA_VARIANTS.map(vanillaFunction), aggFunction()]);
}

type VanillaFn = (...args: number[]) => void;

/** Byte layout of the kernel's memory: the exp table, the result block, then the chunk buffers. */
const TABLE_BYTES = FAST_EXP_TABLE.pow2.length * 8;
const RES = Math.ceil(TABLE_BYTES / 64) * 64;
const BUFFERS = RES + 128;
const PAGE = 65536;

/** Per-chunk results of {@link LossSimdKernel.run}. */
export interface VanillaChunk {
  /** Σ of the per-token loss of each row (float64, token order), rows [0, rows). */
  rowSum: Float64Array;
  /** Valid tokens of each row. */
  rowCount: Float64Array;
  kl: number;
  clip: number;
  lower: number;
  /** 0 when every checked input was finite and every mask entry 0 or 1; non-zero or NaN otherwise. */
  check: number;
}

/** An instantiated kernel with its memory (one per process; not re-entrant, which JS never needs). */
export class LossSimdKernel {
  private readonly memory: WasmMemory;
  private readonly fns: VanillaFn[];
  private readonly agg: VanillaFn;
  private capacity = 0;
  private rowCapacity = 0;
  private views!: {
    old: Float32Array;
    lp: Float32Array;
    adv: Float32Array;
    mask: Float32Array;
    w: Float32Array;
    out: Float32Array;
    rowSum: Float64Array;
    rowCount: Float64Array;
    res: Float64Array;
    resTail: Float32Array;
    resBad: Int32Array;
    offsets: number[];
  };

  constructor(api: WasmApi, module: object) {
    this.memory = new api.Memory({ initial: 1 });
    const instance = new api.Instance(module, { env: { memory: this.memory } });
    const e = instance.exports as Record<string, VanillaFn>;
    this.fns = VANILLA_VARIANTS.map((x) => e[x.name] as VanillaFn);
    this.agg = e.agg as VanillaFn;
    this.reserve(16384, 16384);
  }

  /** Makes room for `tokens` tokens and `rows` rows per chunk (grows the memory, rebuilds the views). */
  reserve(tokens: number, rows: number): void {
    if (tokens <= this.capacity && rows <= this.rowCapacity) return;
    const cap = Math.max(tokens, this.capacity);
    const rowCap = Math.max(rows, this.rowCapacity);
    const f32Bytes = Math.ceil((cap * 4) / 64) * 64;
    const rowBytes = Math.ceil((rowCap * 8) / 64) * 64;
    const total = BUFFERS + 6 * f32Bytes + 2 * rowBytes;
    const pages = Math.ceil(total / PAGE);
    const have = this.memory.buffer.byteLength / PAGE;
    if (pages > have) this.memory.grow(pages - have);
    const buf = this.memory.buffer;
    // negated: the kernel computes −ratio (see `vanillaFunction`)
    const table = new Float64Array(buf, 0, FAST_EXP_TABLE.pow2.length);
    for (let j = 0; j < table.length; j++) table[j] = -(FAST_EXP_TABLE.pow2[j] as number);
    const offsets: number[] = [];
    let at = BUFFERS;
    for (let j = 0; j < 6; j++) {
      offsets.push(at);
      at += f32Bytes;
    }
    offsets.push(at, at + rowBytes);
    const f32 = (j: number) => new Float32Array(buf, offsets[j] as number, cap);
    this.views = {
      old: f32(0),
      lp: f32(1),
      adv: f32(2),
      mask: f32(3),
      w: f32(4),
      out: f32(5),
      rowSum: new Float64Array(buf, offsets[6] as number, rowCap),
      rowCount: new Float64Array(buf, offsets[7] as number, rowCap),
      res: new Float64Array(buf, RES, 4),
      resTail: new Float32Array(buf, RES + 32, 4),
      resBad: new Int32Array(buf, RES + 48, 4),
      offsets,
    };
    this.capacity = cap;
    this.rowCapacity = rowCap;
  }

  /**
   * Rows `[b0, b1)` of a `[·, cols]` batch: copies the inputs in, runs the kernel, copies the
   * per-token loss out to `out` at the same positions. `bounds` as vanillaPolicyLoss.ts's pass.
   */
  run(
    old: Float32Array,
    lp: Float32Array,
    adv: Float32Array,
    mask: Float32Array | Uint8Array,
    w: Float32Array | null,
    b0: number,
    b1: number,
    cols: number,
    bounds: Float64Array,
    padCheck: boolean,
    out: Float32Array,
  ): VanillaChunk {
    const rows = b1 - b0;
    const from = b0 * cols;
    const to = b1 * cols;
    this.reserve(to - from, rows);
    const s = this.views;
    s.old.set(old.subarray(from, to));
    s.lp.set(lp.subarray(from, to));
    s.adv.set(adv.subarray(from, to));
    s.mask.set(mask.subarray(from, to));
    if (w !== null) s.w.set(w.subarray(from, to));
    const o = s.offsets;
    const fn = this.fns[(padCheck ? 2 : 0) + (w !== null ? 1 : 0)] as VanillaFn; // VANILLA_VARIANTS' order
    fn(
      rows,
      cols,
      o[0] as number,
      o[1] as number,
      o[2] as number,
      o[3] as number,
      o[4] as number,
      o[5] as number,
      o[6] as number,
      o[7] as number,
      RES,
      FAST_EXP_TABLE.offset * 8,
      bounds[0] as number,
      bounds[1] as number,
      bounds[2] as number,
      bounds[3] as number,
      bounds[4] as number,
      bounds[5] as number,
      bounds[6] as number,
    );
    out.set(s.out.subarray(0, to - from), from);
    const t = s.resTail;
    const bad = s.resBad;
    const anyBad = (bad[0] as number) | (bad[1] as number) | (bad[2] as number) | (bad[3] as number);
    return {
      rowSum: s.rowSum,
      rowCount: s.rowCount,
      kl: s.res[0] as number,
      clip: s.res[1] as number,
      lower: s.res[2] as number,
      check:
        (s.res[3] as number) +
        (t[0] as number) +
        (t[1] as number) +
        (t[2] as number) +
        (t[3] as number) +
        (anyBad !== 0 ? 1 : 0),
    };
  }

  /** Rows `[b0, b1)` of aggLoss.ts's row sums (see `aggFunction`). */
  runAgg(
    x: Float32Array,
    mask: Float32Array | Uint8Array,
    b0: number,
    b1: number,
    cols: number,
    padCheck: boolean,
  ): AggChunk {
    const rows = b1 - b0;
    const from = b0 * cols;
    const to = b1 * cols;
    this.reserve(to - from, rows);
    const s = this.views;
    s.old.set(x.subarray(from, to));
    s.mask.set(mask.subarray(from, to));
    const o = s.offsets;
    this.agg(
      rows,
      cols,
      o[0] as number,
      o[3] as number,
      o[6] as number,
      o[7] as number,
      RES,
      padCheck ? 1 : 0,
    );
    const bad = s.resBad;
    return {
      rowSum: s.rowSum,
      rowCount: s.rowCount,
      bad: (bad[0] as number) | (bad[1] as number) | (bad[2] as number) | (bad[3] as number),
    };
  }
}

/** Per-chunk results of {@link LossSimdKernel.runAgg}. */
export interface AggChunk {
  rowSum: Float64Array;
  rowCount: Float64Array;
  /** Non-zero when a mask entry was neither 0 nor 1. */
  bad: number;
}

/** The kernel once built, or why there is none (kept so the fallback is visible to tests). */
let cached: { kernel: LossSimdKernel; reason: null } | { kernel: null; reason: string } | undefined;

function built(): NonNullable<typeof cached> {
  if (cached === undefined) {
    try {
      cached = wasmApi
        ? { kernel: new LossSimdKernel(wasmApi, new wasmApi.Module(lossSimdModule())), reason: null }
        : { kernel: null, reason: 'this JavaScript engine has no WebAssembly' };
    } catch (e) {
      cached = { kernel: null, reason: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
    }
  }
  return cached;
}

/** The kernel, assembled and instantiated on first use; null where WebAssembly SIMD is unavailable. */
export function lossSimdKernel(): LossSimdKernel | null {
  return built().kernel;
}

/**
 * Why {@link lossSimdKernel} is null: the error caught while assembling or instantiating the module
 * (or that there is no WebAssembly), null when the kernel is in use. The catch keeps the losses
 * running on an engine without SIMD, but the same catch would hide a module that this file assembles
 * wrongly (the losses would silently run the slower JavaScript pass); lossSimd.test.ts fails when
 * {@link wasmSimdSupported} says SIMD is there and this is not null.
 */
export function lossSimdFallbackReason(): string | null {
  return built().reason;
}

/**
 * A minimal module using SIMD, written out by hand rather than by wasmAssembler.ts (whose output is
 * what is being checked): one function `() -> v128` returning `v128.const 0`.
 */
const SIMD_PROBE = Uint8Array.of(
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // magic, version 1
  ...[0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b], // type section: (func (result v128))
  ...[0x03, 0x02, 0x01, 0x00], // function section: one function of type 0
  ...[0x0a, 0x16, 0x01, 0x14, 0x00, 0xfd, 0x0c, ...new Array<number>(16).fill(0), 0x0b], // code: v128.const 0
);

/** Whether this JavaScript engine accepts WebAssembly SIMD (it validates {@link SIMD_PROBE}). */
export function wasmSimdSupported(): boolean {
  return wasmApi?.validate(SIMD_PROBE) === true;
}

/** Whether the SIMD pass serves these inputs (float32 arrays, a uint8/float32 mask, clamp in the exp table). */
export function simdEligible(
  arrays: readonly (FloatArray | null)[],
  mask: MaskArray,
  logRatioClamp: number,
): boolean {
  if (!(logRatioClamp <= FAST_EXP_RANGE)) return false;
  if (!(mask instanceof Float32Array || mask instanceof Uint8Array)) return false;
  return arrays.every((x) => x === null || x instanceof Float32Array);
}
