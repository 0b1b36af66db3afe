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
 * Math.exp). The kernel is assembled from this file by wasmAssembler.ts the first time it is needed;
 * where WebAssembly SIMD is unavailable {@link lossSimdKernel} returns null and the JavaScript pass
 * runs; {@link lossSimdFallbackReason} says why, and lossSimd.test.ts fails when the engine supports
 * SIMD ({@link wasmSimdSupported}) but the kernel was not built or not used.
 */
import type { FloatArray, MaskArray } from './batch.js';
import { FAST_EXP_RANGE, FAST_EXP_TABLE } from './fastExp.js';
import {
  assembleModule,
  F32,
  F64,
  f32x4Const,
  f64x2Const,
  I32,
  op,
  V128,
  type ValType,
  type WasmApi,
  type WasmMemory,
  wasmApi,
} from './wasmAssembler.js';

/** Named locals of one function: params first, then extra locals in declaration order. */
class Locals {
  readonly params: ValType[] = [];
  readonly extra: ValType[] = [];
  private readonly index = new Map<string, number>();
  param(name: string, t: ValType): number {
    this.index.set(name, this.params.length);
    this.params.push(t);
    return this.params.length - 1;
  }
  local(name: string, t: ValType): number {
    const i = this.params.length + this.extra.length;
    this.index.set(name, i);
    this.extra.push(t);
    return i;
  }
}

const { get, set, tee } = op;

/** `while (!exit) body`: `exit` (an i32) is tested at the top; `brIf(1)` in `body` leaves the loop too. */
const until = (exit: number[], body: number[]) => [
  ...op.block(),
  ...op.loop(),
  ...exit,
  ...op.brIf(1),
  ...body,
  ...op.br(0),
  ...op.end(),
  ...op.end(),
];

/** Byte address `base + (index << shift)`. */
const addrOf = (base: number, index: number[], shift: number) => [
  ...get(base),
  ...index,
  ...op.i32Const(shift),
  ...op.i32Shl(),
  ...op.i32Add(),
];

const inc = (x: number, by: number) => [...get(x), ...op.i32Const(by), ...op.i32Add(), ...set(x)];

/** The sum of the two i64 lanes of `x`. */
const i64x2Total = (x: number) => [
  ...get(x),
  ...op.i64x2ExtractLane(0),
  ...get(x),
  ...op.i64x2ExtractLane(1),
  ...op.i64Add(),
];

/**
 * Loads a v128 of float32 mask entries (`load`) into `m`; `nz` = lanes where m != 0 (NaN counts as
 * valid, as `m === 0` is false in the JS passes), and `bad` |= lanes where m != 0 and m != 1.
 */
const maskTests = (load: number[], m: number, nz: number, zero: number[], one: number[], bad: number) => [
  ...load,
  ...tee(m),
  ...zero,
  ...op.f32x4Ne(),
  ...tee(nz),
  ...get(m),
  ...one,
  ...op.f32x4Ne(),
  ...op.v128And(),
  ...get(bad),
  ...op.v128Or(),
  ...set(bad),
];

/**
 * Moves `end` back over the row's right-padding tail of mask zeros (down to `start`): sixteen
 * entries at a time while all of them are zero, then four, then one. `zero` pushes f32x4 zeros.
 */
const trimPadding = (maskP: number, start: number, end: number, zero: number[]) => {
  /** Steps back `w` (a multiple of 4) entries at a time while all of them are zero. */
  const stage = (w: number) => {
    const test: number[] = [];
    for (let j = 0; j < w / 4; j++) {
      test.push(
        ...addrOf(maskP, [...get(end), ...op.i32Const(w), ...op.i32Sub()], 2),
        ...op.v128Load(16 * j),
        ...zero,
        ...op.f32x4Ne(),
      );
      if (j > 0) test.push(...op.v128Or());
    }
    return until(
      [...get(end), ...get(start), ...op.i32Sub(), ...op.i32Const(w), ...op.i32LtS()],
      [
        ...test,
        ...op.v128AnyTrue(),
        ...op.brIf(1),
        ...get(end),
        ...op.i32Const(w),
        ...op.i32Sub(),
        ...set(end),
      ],
    );
  };
  return [
    ...stage(16),
    ...stage(4),
    ...until(
      [...get(end), ...get(start), ...op.i32LeS()],
      [
        ...addrOf(maskP, [...get(end), ...op.i32Const(1), ...op.i32Sub()], 2),
        ...op.f32Load(),
        ...op.f32Const(0),
        ...op.f32Ne(),
        ...op.brIf(1),
        ...get(end),
        ...op.i32Const(1),
        ...op.i32Sub(),
        ...set(end),
      ],
    ),
  ];
};

/** The row loop header: exits when `b >= rows`, else sets `start = b·cols` and `rowEnd = end = start + cols`. */
const rowHeader = (b: number, rows: number, cols: number, start: number, rowEnd: number, end: number) => ({
  exit: [...get(b), ...get(rows), ...op.i32GeS()],
  head: [
    ...get(b),
    ...get(cols),
    ...op.i32Mul(),
    ...tee(start),
    ...get(cols),
    ...op.i32Add(),
    ...tee(rowEnd),
    ...set(end),
  ],
});

const INV_STEP = FAST_EXP_TABLE.invStep;

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
type LaneLocal = (typeof LANE_LOCALS)[number];

/**
 * One kernel variant: `padCheck` checks padding values for finiteness (every mode but token-mean),
 * `hasW` multiplies rollout IS weights in. Signature (byte addresses, float64 bounds):
 * `(rows, cols, old, lp, adv, mask, w, out, rowSum, rowCount, res, table, lo, hi, c, L, logLo, logHi, logC)`.
 * Writes `out` (float32), per-row loss sums and valid-token counts (float64), and at `res`: kl, clip
 * count, lower count, the float64 finiteness sum (0 or NaN) at +0..+24, the float32 padding-tail
 * finiteness lanes at +32, and non-zero lanes at +48 where a mask entry was neither 0 nor 1.
 *
 * Why one long function: it emits the body of one WebAssembly function, and every piece of that
 * body (`tailCheck`, {@link lanes}, the row loop) allocates or reads that function's locals (`v`),
 * so the pieces are closures over them rather than functions of their own. Issue 26 plans a
 * folded-expression form a reviewer can check by eye; until then lossSimd.test.ts checks the
 * output against the JavaScript pass bit for bit.
 */
function vanillaFunction(padCheck: boolean, hasW: boolean) {
  const v = new Locals();
  const rows = v.param('rows', I32);
  const cols = v.param('cols', I32);
  const oldP = v.param('old', I32);
  const lpP = v.param('lp', I32);
  const advP = v.param('adv', I32);
  const maskP = v.param('mask', I32);
  const wP = v.param('w', I32);
  const outP = v.param('out', I32);
  const rowSumP = v.param('rowSum', I32);
  const rowCountP = v.param('rowCount', I32);
  const resP = v.param('res', I32);
  const tableP = v.param('table', I32);
  const boundNames = ['lo', 'hi', 'c', 'L', 'logLo', 'logHi', 'logC'] as const;
  const bound = Object.fromEntries(boundNames.map((n) => [n, v.param(n, F64)])) as Record<
    (typeof boundNames)[number],
    number
  >;
  const b = v.local('b', I32);
  const start = v.local('start', I32);
  const end = v.local('end', I32);
  const rowEnd = v.local('rowEnd', I32);
  const i = v.local('i', I32);
  const p = v.local('p', I32);
  const sum = v.local('sum', F64);
  const kl = v.local('kl', F64);
  const chkS = v.local('chkS', F64);
  const splat: Record<string, number> = {};
  for (const n of boundNames) splat[n] = v.local(`v_${n}`, V128);
  const negL = v.local('negL', V128);
  const chk = v.local('chk', V128);
  const chkTail = v.local('chkTail', V128);
  const bad = v.local('bad', V128);
  const nAcc = v.local('nAcc', V128);
  const clipAcc = v.local('clipAcc', V128);
  const lowerAcc = v.local('lowerAcc', V128);
  const m = v.local('m', V128);
  const valid4 = v.local('valid4', V128);
  /** The locals of one f64x2 of tokens; a group of four interleaves two such sets (see `token`). */
  const laneLocals = (h: number) =>
    Object.fromEntries(LANE_LOCALS.map((n) => [n, v.local(`${n}${h}`, V128)])) as Record<LaneLocal, number>;
  const h0 = laneLocals(0);
  const h1 = laneLocals(1);

  // v128 constants live in locals initialised once (a v128.const inside the loop is rematerialised
  // on every iteration)
  const consts = new Map<string, { local: number; init: number[] }>();
  const konst = (key: string, init: number[]) => {
    let c = consts.get(key);
    if (!c) {
      c = { local: v.local(`const_${key}`, V128), init };
      consts.set(key, c);
    }
    return get(c.local);
  };
  const f64x2 = (x: number) => konst(`f64_${x}`, f64x2Const(x));
  const ZERO_F32X4 = konst('f32_0', f32x4Const(0));
  const ONE_F32X4 = konst('f32_1', f32x4Const(1));
  const ZERO_F64X2 = f64x2(0);
  const ONE_F64X2 = f64x2(1);

  /** Byte address `base + 4·index`. */
  const at = (base: number, index: number[]) => addrOf(base, index, 2);

  /** `n` float32 values (1, 2 or 4) of `base` at byte `p + off` into the low lanes of a v128. */
  const load = (base: number, n: 1 | 2 | 4, off = 0) => [
    ...get(base),
    ...get(p),
    ...op.i32Add(),
    ...(n === 4 ? op.v128Load(off) : n === 2 ? op.v128Load64Zero(off) : op.v128Load32Zero(off)),
  ];

  /**
   * `n` tokens (4, 2 or 1) from `i`. A group of four runs as two f64x2 whose instructions are
   * interleaved statement by statement: the exp is a long dependency chain, and two independent
   * chains side by side keep the core busy where one would leave it waiting.
   */
  const token = (n: 1 | 2 | 4) => {
    const out: number[] = [
      ...get(i),
      ...op.i32Const(2),
      ...op.i32Shl(),
      ...set(p),
      // mask: valid where m != 0; a valid entry other than 1 is a bad mask value
      ...maskTests(load(maskP, n), m, valid4, ZERO_F32X4, ONE_F32X4, bad),
    ];
    if (n === 4) {
      out.push(...get(valid4), ...op.i64x2ExtendLowI32x4S(), ...set(h0.valid));
      out.push(...get(valid4), ...op.i64x2ExtendHighI32x4S(), ...set(h1.valid));
      const s0 = lanes(2, 0, h0);
      const s1 = lanes(2, 8, h1);
      for (let j = 0; j < s0.length; j++) out.push(...(s0[j] as number[]), ...(s1[j] as number[]));
    } else {
      out.push(...get(valid4), ...op.i64x2ExtendLowI32x4S(), ...set(h0.valid));
      for (const st of lanes(n, 0, h0)) out.push(...st);
    }
    out.push(...inc(i, n));
    return out;
  };

  /**
   * The per-token body of `n` (2 or 1) tokens at byte `p + off` in the f64x2 lanes of locals `L`
   * (whose `valid` is set), as statements that each leave the stack empty. Sums are added in
   * statement order, so interleaving two such bodies keeps the index order.
   *
   * Why long: it is one token's whole loss (clamp, the clip regions, fastExp, the weight, the sums)
   * as straight-line lane code without a branch, the JavaScript pass's per-token body operation for
   * operation in the same order: that correspondence is what makes the two bit-identical, and it
   * reads best unbroken.
   */
  function lanes(n: 1 | 2, off: number, L: Record<LaneLocal, number>): number[][] {
    const loadF64 = (base: number) => [...load(base, n, off), ...op.f64x2PromoteLowF32x4()];
    const st: number[][] = [];
    st.push([...loadF64(advP), ...set(L.a)]);
    st.push([...loadF64(lpP), ...loadF64(oldP), ...op.f64x2Sub(), ...set(L.d)]);
    // l = min(max(d, −L), L); the pseudo-min/max are the same for any d but NaN (which they send
    // to −L, keeping the exp table index in range; a NaN d always ends in the slow path)
    st.push([
      ...get(splat.L as number),
      ...get(negL),
      ...get(L.d),
      ...op.f64x2Pmax(),
      ...op.f64x2Pmin(),
      ...set(L.l),
    ]);
    // finiteness: chk sums d (and, in modes other than token-mean, a and w) and ends as
    // chk − chk, NaN exactly when a summand was not finite: the summands come from float32, so
    // the float64 sum of any chunk stays far from overflow. a or w under mask 1 show in the row's
    // loss sum (checked per row).
    const chkSt = [...get(L.d)];
    if (padCheck) {
      chkSt.push(...get(L.a), ...op.f64x2Add());
      if (hasW) chkSt.push(...loadF64(wP), ...tee(L.wv), ...op.f64x2Add());
    } else {
      chkSt.push(...get(L.valid), ...op.v128And());
      if (hasW) st.push([...loadF64(wP), ...set(L.wv)]);
    }
    st.push([...chkSt, ...get(chk), ...op.f64x2Add(), ...set(chk)]);
    // fastExp(l): k = round(32·l/ln2) via the 1.5·2^52 shift, r = l − k·HI − k·LO,
    // p = 1 + r + r2·(0.5 + r/6 + r2·(1/24 + r/120)), exp = 2^(k/32)·p
    st.push([
      ...get(L.l),
      ...f64x2(INV_STEP),
      ...op.f64x2Mul(),
      ...f64x2(FAST_EXP_TABLE.round),
      ...op.f64x2Add(),
      ...tee(L.t),
      ...f64x2(FAST_EXP_TABLE.round),
      ...op.f64x2Sub(),
      ...set(L.k),
    ]);
    st.push([
      ...get(L.l),
      ...get(L.k),
      ...f64x2(FAST_EXP_TABLE.stepHi),
      ...op.f64x2Mul(),
      ...op.f64x2Sub(),
      ...get(L.k),
      ...f64x2(FAST_EXP_TABLE.stepLo),
      ...op.f64x2Mul(),
      ...op.f64x2Sub(),
      ...tee(L.r),
      ...get(L.r),
      ...op.f64x2Mul(),
      ...set(L.r2),
    ]);
    // × −2^(k/32) from the negated table: the low 32 bits of t = k + 1.5·2^52 are k
    st.push([
      ...get(tableP),
      ...get(L.t),
      ...op.i32x4ExtractLane(0),
      ...op.i32Const(3),
      ...op.i32Shl(),
      ...op.i32Add(),
      ...op.v128Load64Zero(),
      ...set(L.k),
      ...get(tableP),
      ...get(L.t),
      ...op.i32x4ExtractLane(2),
      ...op.i32Const(3),
      ...op.i32Shl(),
      ...op.i32Add(),
      ...get(L.k),
      ...op.v128Load64Lane(1),
      ...set(L.k),
    ]);
    st.push([
      ...ONE_F64X2,
      ...get(L.r),
      ...op.f64x2Add(),
      ...get(L.r2),
      ...f64x2(0.5),
      ...get(L.r),
      ...f64x2(1 / 6),
      ...op.f64x2Mul(),
      ...op.f64x2Add(),
      ...get(L.r2),
      ...f64x2(1 / 24),
      ...get(L.r),
      ...f64x2(1 / 120),
      ...op.f64x2Mul(),
      ...op.f64x2Add(),
      ...op.f64x2Mul(),
      ...op.f64x2Add(),
      ...op.f64x2Mul(),
      ...op.f64x2Add(),
      ...get(L.k),
      ...op.f64x2Mul(),
      ...set(L.ratio),
    ]);
    // regions of valid tokens: A < 0 → lo below log lo (clip), c above log c (lower; the two
    // tests exclude each other since log lo <= 0 < log c); A > 0 → hi above log hi (clip);
    // elsewhere the exp (A = 0 gives the same ±0 loss with any positive ratio); A is +0 in
    // masked lanes, so they fall in no region
    st.push([
      ...get(L.a),
      ...get(L.valid),
      ...op.v128And(),
      ...tee(L.a),
      ...ZERO_F64X2,
      ...op.f64x2Lt(),
      ...set(L.neg),
    ]);
    st.push([
      ...get(L.neg),
      ...get(L.l),
      ...get(splat.logLo as number),
      ...op.f64x2Lt(),
      ...op.v128And(),
      ...set(L.negLo),
    ]);
    st.push([
      ...get(L.neg),
      ...get(L.l),
      ...get(splat.logC as number),
      ...op.f64x2Gt(),
      ...op.v128And(),
      ...set(L.negC),
    ]);
    st.push([
      ...get(L.a),
      ...ZERO_F64X2,
      ...op.f64x2Gt(),
      ...get(L.l),
      ...get(splat.logHi as number),
      ...op.f64x2Gt(),
      ...op.v128And(),
      ...set(L.posHi),
    ]);
    // −ratio: the (negated) bound of the lane's region, else −exp (the table holds −2^(k/32),
    // and −T·p = −(T·p) exactly); the regions are disjoint, so the bounds merge by `or`.
    // `keep` selects −exp in valid lanes outside the regions: masked lanes get +0.
    st.push([...get(L.negLo), ...get(L.posHi), ...op.v128Or(), ...set(L.clipM)]);
    st.push([
      ...get(L.valid),
      ...get(L.clipM),
      ...get(L.negC),
      ...op.v128Or(),
      ...op.v128AndNot(),
      ...set(L.keep),
    ]);
    st.push([
      ...get(splat.lo as number),
      ...get(L.negLo),
      ...op.v128And(),
      ...get(splat.c as number),
      ...get(L.negC),
      ...op.v128And(),
      ...op.v128Or(),
      ...get(splat.hi as number),
      ...get(L.posHi),
      ...op.v128And(),
      ...op.v128Or(),
      ...set(L.bnd),
    ]);
    // loss = A·(−ratio), the bits of −A·ratio; +0·+0 = +0 in masked lanes (an IS weight there
    // may not be finite, hence the mask after × w)
    const lossSt = [
      ...get(L.a),
      ...get(L.ratio),
      ...get(L.keep),
      ...op.v128And(),
      ...get(L.bnd),
      ...op.v128Or(),
      ...op.f64x2Mul(),
    ];
    if (hasW) lossSt.push(...get(L.wv), ...op.f64x2Mul(), ...get(L.valid), ...op.v128And());
    st.push([...lossSt, ...set(L.loss)]);
    st.push([
      ...get(outP),
      ...get(p),
      ...op.i32Add(),
      ...get(L.loss),
      ...op.f32x4DemoteF64x2Zero(),
      ...(n === 2 ? op.v128Store64Lane(0, off) : op.v128Store32Lane(0, off)),
    ]);
    // running sums, one token at a time in index order
    const sumSt = [...get(sum), ...get(L.loss), ...op.f64x2ExtractLane(0), ...op.f64Add()];
    if (n === 2) sumSt.push(...get(L.loss), ...op.f64x2ExtractLane(1), ...op.f64Add());
    st.push([...sumSt, ...set(sum)]);
    const klSt = [...get(L.l), ...get(L.valid), ...op.v128And(), ...set(L.l)];
    klSt.push(...get(kl), ...get(L.l), ...op.f64x2ExtractLane(0), ...op.f64Sub());
    if (n === 2) klSt.push(...get(L.l), ...op.f64x2ExtractLane(1), ...op.f64Sub());
    st.push([...klSt, ...set(kl)]);
    // counts: a true lane is −1 as an integer
    st.push([...get(nAcc), ...get(L.valid), ...op.i64x2Sub(), ...set(nAcc)]);
    st.push([...get(clipAcc), ...get(L.clipM), ...op.i64x2Sub(), ...set(clipAcc)]);
    st.push([...get(lowerAcc), ...get(L.negC), ...op.i64x2Sub(), ...set(lowerAcc)]);
    return st;
  }

  /**
   * chkTail += the sum of x − x over the float32 lanes that `load(base, offset)` reads, for
   * `vectors` byte offsets 16 apart: summed as a tree first, so that the running sum is not a chain
   * of one addition per load.
   */
  const tailCheck = (load: (base: number, offset: number) => number[], vectors: number) => {
    const arrays = hasW ? [lpP, oldP, advP, wP] : [lpP, oldP, advP];
    const terms: number[][] = [];
    for (let j = 0; j < vectors; j++) {
      for (const base of arrays) terms.push([...load(base, 16 * j), ...tee(m), ...get(m), ...op.f32x4Sub()]);
    }
    while (terms.length > 1) {
      const next: number[][] = [];
      for (let j = 0; j + 1 < terms.length; j += 2)
        next.push([...(terms[j] as number[]), ...(terms[j + 1] as number[]), ...op.f32x4Add()]);
      if (terms.length % 2) next.push(terms[terms.length - 1] as number[]);
      terms.splice(0, terms.length, ...next);
    }
    return [...get(chkTail), ...(terms[0] as number[]), ...op.f32x4Add(), ...set(chkTail)];
  };

  const row = rowHeader(b, rows, cols, start, rowEnd, end);
  const body: number[] = [];
  for (const n of boundNames) {
    // the ratio bounds negated, as the exp table (see `token`)
    const neg = n === 'lo' || n === 'hi' || n === 'c' ? op.f64x2Neg() : [];
    body.push(...get(bound[n]), ...op.f64x2Splat(), ...neg, ...set(splat[n] as number));
  }
  body.push(...f64x2(0), ...get(bound.L), ...op.f64x2Splat(), ...op.f64x2Sub(), ...set(negL));
  const rowBody: number[] = [
    ...row.head,
    ...trimPadding(maskP, start, end, ZERO_F32X4),
    // zero the tail of out
    ...at(outP, get(end)),
    ...op.i32Const(0),
    ...get(rowEnd),
    ...get(end),
    ...op.i32Sub(),
    ...op.i32Const(2),
    ...op.i32Shl(),
    ...op.memoryFill(),
  ];
  if (padCheck) {
    rowBody.push(
      ...get(end),
      ...set(i),
      ...until(
        [...get(i), ...op.i32Const(16), ...op.i32Add(), ...get(rowEnd), ...op.i32GtS()],
        [...tailCheck((base, o) => [...at(base, get(i)), ...op.v128Load(o)], 4), ...inc(i, 16)],
      ),
      ...until(
        [...get(i), ...op.i32Const(4), ...op.i32Add(), ...get(rowEnd), ...op.i32GtS()],
        [...tailCheck((base) => [...at(base, get(i)), ...op.v128Load()], 1), ...inc(i, 4)],
      ),
      ...until(
        [...get(i), ...get(rowEnd), ...op.i32GeS()],
        [...tailCheck((base) => [...at(base, get(i)), ...op.v128Load32Zero()], 1), ...inc(i, 1)],
      ),
    );
  }
  rowBody.push(
    // the valid span [start, end): groups of four, then a pair, then a single token
    ...get(start),
    ...set(i),
    ...op.f64Const(0),
    ...set(sum),
    ...ZERO_F64X2, // all-zero bits: integer 0 too
    ...set(nAcc),
    ...until([...get(i), ...op.i32Const(4), ...op.i32Add(), ...get(end), ...op.i32GtS()], token(4)),
    ...get(i),
    ...op.i32Const(2),
    ...op.i32Add(),
    ...get(end),
    ...op.i32LeS(),
    ...op.if(),
    ...token(2),
    ...op.end(),
    ...get(i),
    ...get(end),
    ...op.i32LtS(),
    ...op.if(),
    ...token(1),
    ...op.end(),
    // per-row outputs
    ...addrOf(rowSumP, get(b), 3),
    ...get(sum),
    ...op.f64Store(),
    ...addrOf(rowCountP, get(b), 3),
    ...i64x2Total(nAcc),
    ...op.f64ConvertI64S(),
    ...op.f64Store(),
    // a non-finite advantage or IS weight under mask 1 makes the row's loss sum non-finite
    ...get(chkS),
    ...get(sum),
    ...get(sum),
    ...op.f64Sub(),
    ...op.f64Add(),
    ...set(chkS),
    ...inc(b, 1),
  );
  body.push(
    ...until(row.exit, rowBody),
    // chunk outputs
    ...get(chk),
    ...get(chk),
    ...op.f64x2Sub(),
    ...set(chk),
    ...get(resP),
    ...get(kl),
    ...op.f64Store(0),
    ...get(resP),
    ...i64x2Total(clipAcc),
    ...op.f64ConvertI64S(),
    ...op.f64Store(8),
    ...get(resP),
    ...i64x2Total(lowerAcc),
    ...op.f64ConvertI64S(),
    ...op.f64Store(16),
    ...get(resP),
    ...get(chk),
    ...op.f64x2ExtractLane(0),
    ...get(chk),
    ...op.f64x2ExtractLane(1),
    ...op.f64Add(),
    ...get(chkS),
    ...op.f64Add(),
    ...op.f64Store(24),
    ...get(resP),
    ...get(chkTail),
    ...op.v128Store(32),
    ...get(resP),
    ...get(bad),
    ...op.v128Store(48),
  );
  const init: number[] = [];
  for (const c of consts.values()) init.push(...c.init, ...set(c.local));
  body.unshift(...init);
  return {
    name: `vanilla${padCheck ? '_pad' : ''}${hasW ? '_w' : ''}`,
    params: v.params,
    results: [],
    locals: v.extra,
    body,
  };
}

/**
 * aggLoss.ts's row sums (`aggRows`), four tokens at a time: the partial sums s0..s3 of `x·m` over
 * positions ≡ 0..3 (mod 4) from the row start sit in the lanes of two f64x2 (each lane adds the same
 * products in the same order as its JavaScript variable), the last < 4 tokens go to s0 one by one,
 * and `sum = s0 + s1 + (s2 + s3)`. Signature `(rows, cols, x, mask, rowSum, rowCount, res, padCheck)`;
 * without `padCheck` (token-mean) the right-padding tail of mask zeros is not read. Writes per-row
 * sums and valid counts (float64) and, at `res + 48`, non-zero lanes where a mask entry was neither 0
 * nor 1.
 *
 * Why one long function: as {@link vanillaFunction}, it emits one WebAssembly function whose
 * pieces share its locals.
 */
function aggFunction() {
  const v = new Locals();
  const rows = v.param('rows', I32);
  const cols = v.param('cols', I32);
  const xP = v.param('x', I32);
  const maskP = v.param('mask', I32);
  const rowSumP = v.param('rowSum', I32);
  const rowCountP = v.param('rowCount', I32);
  const resP = v.param('res', I32);
  const padCheck = v.param('padCheck', I32);
  const b = v.local('b', I32);
  const start = v.local('start', I32);
  const end = v.local('end', I32);
  const rowEnd = v.local('rowEnd', I32);
  const p = v.local('p', I32);
  const n = v.local('n', I32);
  const s0 = v.local('s0', F64);
  const mS = v.local('mS', F32);
  const s01 = v.local('s01', V128);
  const s23 = v.local('s23', V128);
  const mv = v.local('mv', V128);
  const nz = v.local('nz', V128);
  const nAcc = v.local('nAcc', V128);
  const bad = v.local('bad', V128);
  const zero = v.local('zero', V128);
  const one = v.local('one', V128);
  const addr = (base: number, off = 0) => [
    ...get(base),
    ...get(p),
    ...op.i32Add(),
    ...(off ? [...op.i32Const(off), ...op.i32Add()] : []),
  ];
  const byteIndex = (x: number) => [...get(x), ...op.i32Const(2), ...op.i32Shl()];
  const lane = (x: number, j: number) => [...get(x), ...op.f64x2ExtractLane(j)];
  const row = rowHeader(b, rows, cols, start, rowEnd, end);
  const rowBody: number[] = [
    ...row.head,
    // token-mean: skip the tail of mask zeros (4 at a time, then 1 at a time), as aggRows does
    ...get(padCheck),
    ...op.i32Eqz(),
    ...op.if(),
    ...trimPadding(maskP, start, end, get(zero)),
    ...op.end(),
    // groups of four from the row start
    ...byteIndex(start),
    ...set(p),
    ...byteIndex(end),
    ...set(end), // end in bytes from here on
    ...get(zero),
    ...tee(s01),
    ...tee(s23),
    ...set(nAcc),
    ...op.i32Const(0),
    ...set(n),
    ...until(
      [...get(p), ...op.i32Const(16), ...op.i32Add(), ...get(end), ...op.i32GtS()],
      [
        ...get(s01),
        ...addr(xP),
        ...op.v128Load64Zero(),
        ...op.f64x2PromoteLowF32x4(),
        ...addr(maskP),
        ...op.v128Load64Zero(),
        ...op.f64x2PromoteLowF32x4(),
        ...op.f64x2Mul(),
        ...op.f64x2Add(),
        ...set(s01),
        ...get(s23),
        ...addr(xP, 8),
        ...op.v128Load64Zero(),
        ...op.f64x2PromoteLowF32x4(),
        ...addr(maskP, 8),
        ...op.v128Load64Zero(),
        ...op.f64x2PromoteLowF32x4(),
        ...op.f64x2Mul(),
        ...op.f64x2Add(),
        ...set(s23),
        ...maskTests([...addr(maskP), ...op.v128Load()], mv, nz, get(zero), get(one), bad),
        ...get(nAcc),
        ...get(nz),
        ...op.i32x4Sub(),
        ...set(nAcc),
        ...inc(p, 16),
      ],
    ),
    // the last < 4 tokens into s0
    ...lane(s01, 0),
    ...set(s0),
    ...until(
      [...get(p), ...get(end), ...op.i32GeS()],
      [
        ...addr(maskP),
        ...op.f32Load(),
        ...set(mS),
        ...get(s0),
        ...addr(xP),
        ...op.f32Load(),
        ...op.f64PromoteF32(),
        ...get(mS),
        ...op.f64PromoteF32(),
        ...op.f64Mul(),
        ...op.f64Add(),
        ...set(s0),
        ...get(mS),
        ...op.f32Const(0),
        ...op.f32Ne(),
        ...get(n),
        ...op.i32Add(),
        ...set(n),
        ...get(bad),
        ...get(mS),
        ...op.f32Const(0),
        ...op.f32Ne(),
        ...get(mS),
        ...op.f32Const(1),
        ...op.f32Ne(),
        ...op.i32And(),
        ...op.i32x4ReplaceLane(0),
        ...get(bad),
        ...op.v128Or(),
        ...set(bad),
        ...inc(p, 4),
      ],
    ),
    // row outputs: sum = s0 + s1 + (s2 + s3), count
    ...addrOf(rowSumP, get(b), 3),
    ...get(s0),
    ...lane(s01, 1),
    ...op.f64Add(),
    ...lane(s23, 0),
    ...lane(s23, 1),
    ...op.f64Add(),
    ...op.f64Add(),
    ...op.f64Store(),
    ...addrOf(rowCountP, get(b), 3),
    ...get(n),
    ...get(nAcc),
    ...op.i32x4ExtractLane(0),
    ...op.i32Add(),
    ...get(nAcc),
    ...op.i32x4ExtractLane(1),
    ...op.i32Add(),
    ...get(nAcc),
    ...op.i32x4ExtractLane(2),
    ...op.i32Add(),
    ...get(nAcc),
    ...op.i32x4ExtractLane(3),
    ...op.i32Add(),
    ...op.f64ConvertI32S(),
    ...op.f64Store(),
    ...inc(b, 1),
  ];
  const body: number[] = [
    ...f32x4Const(0),
    ...set(zero),
    ...f32x4Const(1),
    ...set(one),
    ...until(row.exit, rowBody),
    ...get(resP),
    ...get(bad),
    ...op.v128Store(48),
  ];
  return { name: 'agg', params: v.params, results: [], locals: v.extra, body };
}

/** The module's bytes: the vanilla pass in four variants (padding check on/off × IS weights on/off), and agg. */
export function lossSimdModule(): Uint8Array {
  return assembleModule(1, [
    vanillaFunction(false, false),
    vanillaFunction(false, true),
    vanillaFunction(true, false),
    vanillaFunction(true, true),
    aggFunction(),
  ]);
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
    this.fns = [e.vanilla, e.vanilla_w, e.vanilla_pad, e.vanilla_pad_w] as VanillaFn[];
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
    const fn = this.fns[(padCheck ? 2 : 0) + (w !== null ? 1 : 0)] as VanillaFn;
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
