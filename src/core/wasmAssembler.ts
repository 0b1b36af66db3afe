/**
 * A minimal WebAssembly binary writer (internal): enough of the format (types, one imported memory,
 * exported functions, locals, structured control, scalar and SIMD instructions) to assemble the
 * lab's SIMD kernels from their TypeScript source at first use, and a typed folded-expression layer
 * over it (`f64x2.mul(local.get(x), f64x2.splat(local.get(c)))`) in which the kernels are written.
 * The kernels ship as source, not as a binary: nothing is downloaded or prebuilt, and a fresh clone
 * assembles the same bytes (the writer is deterministic; wasmAssembler.test.ts pins encodings
 * against the specification's tables, lossSimd.bytes.test.ts the loss module's bytes).
 *
 * Encodings follow the WebAssembly core specification (its binary format chapter) and its fixed-width SIMD
 * chapter (prefix 0xFD, opcode as unsigned LEB128).
 */

/** Value types (the binary format's value types). */
export const I32 = 0x7f;
export const I64 = 0x7e;
export const F32 = 0x7d;
export const F64 = 0x7c;
export const V128 = 0x7b;
export type ValType = typeof I32 | typeof I64 | typeof F32 | typeof F64 | typeof V128;

/** Unsigned LEB128 of a non-negative integer below 2^32. */
export function uleb(n: number): number[] {
  const out: number[] = [];
  let v = n >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
export function sleb(n: number): number[] {
  const out: number[] = [];
  let v = n | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

function name(s: string): number[] {
  const bytes = [...new TextEncoder().encode(s)];
  return [...uleb(bytes.length), ...bytes];
}

function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function section(id: number, body: number[]): number[] {
  return [id, ...uleb(body.length), ...body];
}

/** One function of a module: its signature, extra locals (after the params) and body. */
export interface FuncDef {
  name: string;
  params: ValType[];
  results: ValType[];
  locals: ValType[];
  /** Instruction bytes, without the final `end`. */
  body: number[];
}

/**
 * A module importing one memory `env.memory` (at least `minPages` 64 KiB pages) and exporting every
 * function under its name.
 */
export function assembleModule(minPages: number, funcs: FuncDef[]): Uint8Array {
  const types = funcs.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec(f.results.map((t) => [t]))]);
  const imports = [[...name('env'), ...name('memory'), 0x02, 0x00, ...uleb(minPages)]];
  const codes = funcs.map((f) => {
    // locals as (count, type) runs
    const runs: number[][] = [];
    for (const t of f.locals) {
      const last = runs[runs.length - 1];
      if (last && last[1] === t) last[0] = (last[0] as number) + 1;
      else runs.push([1, t]);
    }
    const body = [...vec(runs.map(([c, t]) => [...uleb(c as number), t as number])), ...f.body, 0x0b];
    return [...uleb(body.length), ...body];
  });
  const bytes = [
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(2, vec(imports)),
    ...section(3, vec(funcs.map((_, i) => uleb(i)))),
    ...section(7, vec(funcs.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]))),
    ...section(10, vec(codes)),
  ];
  return Uint8Array.from(bytes);
}

const memarg = (align: number, offset: number) => [...uleb(align), ...uleb(offset)];
const simd = (op: number) => [0xfd, ...uleb(op)];

/** Instructions (the binary format's instruction encodings), each returning its bytes; `offset` is a constant byte offset. */
export const op = {
  // control
  block: () => [0x02, 0x40],
  loop: () => [0x03, 0x40],
  if: () => [0x04, 0x40],
  else: () => [0x05],
  end: () => [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  // variables
  get: (i: number) => [0x20, ...uleb(i)],
  set: (i: number) => [0x21, ...uleb(i)],
  tee: (i: number) => [0x22, ...uleb(i)],
  // scalar memory
  f32Load: (offset = 0) => [0x2a, ...memarg(2, offset)],
  f64Load: (offset = 0) => [0x2b, ...memarg(3, offset)],
  f64Store: (offset = 0) => [0x39, ...memarg(3, offset)],
  memoryFill: () => [0xfc, ...uleb(11), 0x00],
  // scalar numeric
  i32Const: (n: number) => [0x41, ...sleb(n)],
  f32Const: (x: number) => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, x, true);
    return [0x43, ...b];
  },
  f64Const: (x: number) => {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, x, true);
    return [0x44, ...b];
  },
  i32Eqz: () => [0x45],
  i32Eq: () => [0x46],
  i32Ne: () => [0x47],
  i32LtS: () => [0x48],
  i32GtS: () => [0x4a],
  i32LeS: () => [0x4c],
  i32GeS: () => [0x4e],
  f32Eq: () => [0x5b],
  f32Ne: () => [0x5c],
  f64Gt: () => [0x64],
  i32Add: () => [0x6a],
  i32Sub: () => [0x6b],
  i32Mul: () => [0x6c],
  i32And: () => [0x71],
  i32Or: () => [0x72],
  i32Shl: () => [0x74],
  f64Add: () => [0xa0],
  f64Sub: () => [0xa1],
  f64Div: () => [0xa3],
  f64ConvertI32S: () => [0xb7],
  f64PromoteF32: () => [0xbb],
  f64Mul: () => [0xa2],
  i64Add: () => [0x7c],
  f64ConvertI64S: () => [0xb9],
  // SIMD memory
  v128Load: (offset = 0) => [...simd(0x00), ...memarg(4, offset)],
  v128Store: (offset = 0) => [...simd(0x0b), ...memarg(4, offset)],
  v128Load32Zero: (offset = 0) => [...simd(0x5c), ...memarg(2, offset)],
  v128Load64Zero: (offset = 0) => [...simd(0x5d), ...memarg(3, offset)],
  v128Load64Lane: (lane: number, offset = 0) => [...simd(0x57), ...memarg(3, offset), lane],
  v128Store32Lane: (lane: number, offset = 0) => [...simd(0x5a), ...memarg(2, offset), lane],
  v128Store64Lane: (lane: number, offset = 0) => [...simd(0x5b), ...memarg(3, offset), lane],
  // SIMD constants, lanes
  v128Const: (bytes: number[]) => [...simd(0x0c), ...bytes],
  f64x2Splat: () => simd(0x14),
  i32x4ExtractLane: (lane: number) => [...simd(0x1b), lane],
  i32x4ReplaceLane: (lane: number) => [...simd(0x1c), lane],
  i64x2ExtractLane: (lane: number) => [...simd(0x1d), lane],
  f64x2ExtractLane: (lane: number) => [...simd(0x21), lane],
  // SIMD comparisons (all-ones lanes where true)
  f32x4Eq: () => simd(0x41),
  f32x4Ne: () => simd(0x42),
  f64x2Eq: () => simd(0x47),
  f64x2Lt: () => simd(0x49),
  f64x2Gt: () => simd(0x4a),
  // SIMD bitwise
  v128Not: () => simd(0x4d),
  v128And: () => simd(0x4e),
  v128AndNot: () => simd(0x4f),
  v128Or: () => simd(0x50),
  v128Bitselect: () => simd(0x52),
  v128AnyTrue: () => simd(0x53),
  // SIMD conversions
  f32x4DemoteF64x2Zero: () => simd(0x5e),
  f64x2PromoteLowF32x4: () => simd(0x5f),
  i64x2ExtendLowI32x4S: () => simd(0xc7),
  i64x2ExtendHighI32x4S: () => simd(0xc8),
  // SIMD arithmetic
  i32x4Sub: () => simd(0xb1),
  i64x2Sub: () => simd(0xd1),
  f32x4Add: () => simd(0xe4),
  f32x4Sub: () => simd(0xe5),
  f64x2Neg: () => simd(0xed),
  f64x2Add: () => simd(0xf0),
  f64x2Sub: () => simd(0xf1),
  f64x2Mul: () => simd(0xf2),
  f64x2Min: () => simd(0xf4),
  f64x2Max: () => simd(0xf5),
  /** `b < a ? b : a` per lane (one instruction; no NaN propagation). */
  f64x2Pmin: () => simd(0xf6),
  /** `a < b ? b : a` per lane. */
  f64x2Pmax: () => simd(0xf7),
} as const;

/*
 * Folded expressions: the text format's `(f64x2.mul (local.get $x) (f64x2.splat (local.get $c)))`
 * written as `f64x2.mul(local.get(x), f64x2.splat(local.get(c)))`. Each builder takes its operands
 * (themselves expressions) and returns their bytes followed by its own instruction's bytes, which is
 * exactly the stack-machine order the binary format runs: a tree of builders reads like the formula
 * and assembles to the same bytes as the flat opcode list. Builders carry the value type they leave
 * on the stack, so TypeScript rejects an operand of the wrong type (an f64 where a v128 goes, a
 * value set into a local of another type). Names are the text format's (`i32.lt_s`,
 * `v128.load64_zero`); operands come in stack order, then immediates (a lane, then a memory offset
 * in bytes). The encodings themselves are `op`'s.
 */

/** A value type by its text-format name. */
export type WasmType = 'i32' | 'i64' | 'f32' | 'f64' | 'v128';

/** The binary value type of each text-format name. */
export const VALTYPE: Readonly<Record<WasmType, ValType>> = {
  i32: I32,
  i64: I64,
  f32: F32,
  f64: F64,
  v128: V128,
};

/**
 * An instruction with its operands folded in: `code` is its bytes in stack order; `type` is what it
 * leaves on the stack (`none`: a statement).
 */
export interface Expr<T extends WasmType | 'none' = WasmType | 'none'> {
  readonly type: T;
  readonly code: readonly number[];
  /** Appends `code` to `out`. */
  emit(out: number[]): void;
}

/** An expression that leaves nothing on the stack. */
export type Stmt = Expr<'none'>;

/**
 * An expression tree, flattened once when its code is asked for (building a tree that copied its
 * operands' bytes at every level would copy each byte once per level above it).
 */
class Folded<T extends WasmType | 'none'> implements Expr<T> {
  constructor(
    readonly type: T,
    private readonly parts: readonly (Expr | readonly number[])[],
  ) {}
  emit(out: number[]): void {
    for (const part of this.parts) {
      if (Array.isArray(part)) for (const byte of part as readonly number[]) out.push(byte);
      else (part as Expr).emit(out);
    }
  }
  get code(): number[] {
    const out: number[] = [];
    this.emit(out);
    return out;
  }
}

/** The operands' code (in order), then the instruction's bytes. */
const fold = <T extends WasmType | 'none'>(
  type: T,
  operands: readonly Expr[],
  instruction: number[],
): Expr<T> => new Folded(type, [...operands, instruction]);

/** A statement list as one statement (its code concatenated; interleaving treats it as a unit). */
export const seq = (...stmts: Stmt[]): Stmt => fold('none', stmts, []);

// `unary`/`binary` make an instruction builder from operand type (for TypeScript only), result type and encoding
type Unary<A extends WasmType, R extends WasmType> = (a: Expr<A>) => Expr<R>;
type Binary<A extends WasmType, R extends WasmType> = (a: Expr<A>, b: Expr<A>) => Expr<R>;
const unary =
  <A extends WasmType, R extends WasmType>(_a: A, r: R, instruction: () => number[]): Unary<A, R> =>
  (a) =>
    fold(r, [a], instruction());
const binary =
  <A extends WasmType, R extends WasmType>(_a: A, r: R, instruction: () => number[]): Binary<A, R> =>
  (a, b) =>
    fold(r, [a, b], instruction());

/** A local (or parameter) of one function: its index and type. */
export interface Local<T extends WasmType = WasmType> {
  readonly name: string;
  readonly index: number;
  readonly type: T;
}

/** `local.get`, `local.set`, `local.tee`. */
export const local = {
  get: <T extends WasmType>(x: Local<T>): Expr<T> => fold(x.type, [], op.get(x.index)),
  set: <T extends WasmType>(x: Local<T>, value: Expr<NoInfer<T>>): Stmt =>
    fold('none', [value], op.set(x.index)),
  tee: <T extends WasmType>(x: Local<T>, value: Expr<NoInfer<T>>): Expr<T> =>
    fold(x.type, [value], op.tee(x.index)),
};

/**
 * Named locals of one function, declared in order: every parameter first, then the extra locals
 * (their declaration order is their index order, so it is part of the module's bytes).
 */
export class Locals {
  readonly params: ValType[] = [];
  readonly extra: ValType[] = [];
  param<T extends WasmType>(name: string, type: T): Local<T> {
    this.params.push(VALTYPE[type]);
    return { name, index: this.params.length - 1, type };
  }
  local<T extends WasmType>(name: string, type: T): Local<T> {
    this.extra.push(VALTYPE[type]);
    return { name, index: this.params.length + this.extra.length - 1, type };
  }
}

/** A function of no results whose locals are `locals` and whose body is `body`. */
export function funcDef(name: string, locals: Locals, body: readonly Stmt[]): FuncDef {
  return {
    name,
    params: locals.params,
    results: [],
    locals: locals.extra,
    body: seq(...body).code as number[],
  };
}

/**
 * Structured control (blocks without results). `br(d)`/`br_if(d, …)` jump to the d-th enclosing
 * construct: the end of a `block`, the start of a `loop`.
 */
export const control = {
  block: (...body: Stmt[]): Stmt => new Folded('none', [op.block(), ...body, op.end()]),
  loop: (...body: Stmt[]): Stmt => new Folded('none', [op.loop(), ...body, op.end()]),
  if: (cond: Expr<'i32'>, ...then: Stmt[]): Stmt => new Folded('none', [cond, op.if(), ...then, op.end()]),
  br: (depth: number): Stmt => fold('none', [], op.br(depth)),
  br_if: (depth: number, cond: Expr<'i32'>): Stmt => fold('none', [cond], op.brIf(depth)),
};

export const i32 = {
  const: (n: number): Expr<'i32'> => fold('i32', [], op.i32Const(n)),
  add: binary('i32', 'i32', op.i32Add),
  sub: binary('i32', 'i32', op.i32Sub),
  mul: binary('i32', 'i32', op.i32Mul),
  and: binary('i32', 'i32', op.i32And),
  or: binary('i32', 'i32', op.i32Or),
  shl: binary('i32', 'i32', op.i32Shl),
  eqz: unary('i32', 'i32', op.i32Eqz),
  eq: binary('i32', 'i32', op.i32Eq),
  ne: binary('i32', 'i32', op.i32Ne),
  lt_s: binary('i32', 'i32', op.i32LtS),
  gt_s: binary('i32', 'i32', op.i32GtS),
  le_s: binary('i32', 'i32', op.i32LeS),
  ge_s: binary('i32', 'i32', op.i32GeS),
};

export const i64 = {
  add: binary('i64', 'i64', op.i64Add),
};

export const f32 = {
  const: (x: number): Expr<'f32'> => fold('f32', [], op.f32Const(x)),
  load: (addr: Expr<'i32'>, offset = 0): Expr<'f32'> => fold('f32', [addr], op.f32Load(offset)),
  eq: binary('f32', 'i32', op.f32Eq),
  ne: binary('f32', 'i32', op.f32Ne),
};

export const f64 = {
  const: (x: number): Expr<'f64'> => fold('f64', [], op.f64Const(x)),
  load: (addr: Expr<'i32'>, offset = 0): Expr<'f64'> => fold('f64', [addr], op.f64Load(offset)),
  store: (addr: Expr<'i32'>, value: Expr<'f64'>, offset = 0): Stmt =>
    fold('none', [addr, value], op.f64Store(offset)),
  add: binary('f64', 'f64', op.f64Add),
  sub: binary('f64', 'f64', op.f64Sub),
  mul: binary('f64', 'f64', op.f64Mul),
  div: binary('f64', 'f64', op.f64Div),
  gt: binary('f64', 'i32', op.f64Gt),
  convert_i32_s: unary('i32', 'f64', op.f64ConvertI32S),
  convert_i64_s: unary('i64', 'f64', op.f64ConvertI64S),
  promote_f32: unary('f32', 'f64', op.f64PromoteF32),
};

export const v128 = {
  /** 16 literal bytes. */
  const: (bytes: number[]): Expr<'v128'> => fold('v128', [], op.v128Const(bytes)),
  load: (addr: Expr<'i32'>, offset = 0): Expr<'v128'> => fold('v128', [addr], op.v128Load(offset)),
  /** One 32-bit value into lane 0, zeros elsewhere. */
  load32_zero: (addr: Expr<'i32'>, offset = 0): Expr<'v128'> =>
    fold('v128', [addr], op.v128Load32Zero(offset)),
  /** One 64-bit value into lane 0 (of two), zeros elsewhere. */
  load64_zero: (addr: Expr<'i32'>, offset = 0): Expr<'v128'> =>
    fold('v128', [addr], op.v128Load64Zero(offset)),
  /** `vec` with 64-bit lane `lane` loaded from memory. */
  load64_lane: (addr: Expr<'i32'>, vec: Expr<'v128'>, lane: number, offset = 0): Expr<'v128'> =>
    fold('v128', [addr, vec], op.v128Load64Lane(lane, offset)),
  store: (addr: Expr<'i32'>, value: Expr<'v128'>, offset = 0): Stmt =>
    fold('none', [addr, value], op.v128Store(offset)),
  store32_lane: (addr: Expr<'i32'>, vec: Expr<'v128'>, lane: number, offset = 0): Stmt =>
    fold('none', [addr, vec], op.v128Store32Lane(lane, offset)),
  store64_lane: (addr: Expr<'i32'>, vec: Expr<'v128'>, lane: number, offset = 0): Stmt =>
    fold('none', [addr, vec], op.v128Store64Lane(lane, offset)),
  not: unary('v128', 'v128', op.v128Not),
  and: binary('v128', 'v128', op.v128And),
  /** `a & ~b`. */
  andnot: binary('v128', 'v128', op.v128AndNot),
  or: binary('v128', 'v128', op.v128Or),
  /** Bits of `a` where `mask` is set, of `b` elsewhere. */
  bitselect: (a: Expr<'v128'>, b: Expr<'v128'>, mask: Expr<'v128'>): Expr<'v128'> =>
    fold('v128', [a, b, mask], op.v128Bitselect()),
  any_true: unary('v128', 'i32', op.v128AnyTrue),
};

export const f64x2 = {
  /** The same float64 in both lanes, as a literal. */
  const: (x: number): Expr<'v128'> => fold('v128', [], f64x2Const(x)),
  splat: unary('f64', 'v128', op.f64x2Splat),
  extract_lane: (vec: Expr<'v128'>, lane: number): Expr<'f64'> =>
    fold('f64', [vec], op.f64x2ExtractLane(lane)),
  eq: binary('v128', 'v128', op.f64x2Eq),
  lt: binary('v128', 'v128', op.f64x2Lt),
  gt: binary('v128', 'v128', op.f64x2Gt),
  neg: unary('v128', 'v128', op.f64x2Neg),
  add: binary('v128', 'v128', op.f64x2Add),
  sub: binary('v128', 'v128', op.f64x2Sub),
  mul: binary('v128', 'v128', op.f64x2Mul),
  min: binary('v128', 'v128', op.f64x2Min),
  max: binary('v128', 'v128', op.f64x2Max),
  /** `b < a ? b : a` per lane. */
  pmin: binary('v128', 'v128', op.f64x2Pmin),
  /** `a < b ? b : a` per lane. */
  pmax: binary('v128', 'v128', op.f64x2Pmax),
  /** Float32 lanes 0 and 1, as float64. */
  promote_low_f32x4: unary('v128', 'v128', op.f64x2PromoteLowF32x4),
};

export const f32x4 = {
  /** The same float32 in all four lanes, as a literal. */
  const: (x: number): Expr<'v128'> => fold('v128', [], f32x4Const(x)),
  eq: binary('v128', 'v128', op.f32x4Eq),
  ne: binary('v128', 'v128', op.f32x4Ne),
  add: binary('v128', 'v128', op.f32x4Add),
  sub: binary('v128', 'v128', op.f32x4Sub),
  /** The two float64 lanes rounded to float32 lanes 0 and 1; lanes 2 and 3 zero. */
  demote_f64x2_zero: unary('v128', 'v128', op.f32x4DemoteF64x2Zero),
};

export const i32x4 = {
  extract_lane: (vec: Expr<'v128'>, lane: number): Expr<'i32'> =>
    fold('i32', [vec], op.i32x4ExtractLane(lane)),
  replace_lane: (vec: Expr<'v128'>, value: Expr<'i32'>, lane: number): Expr<'v128'> =>
    fold('v128', [vec, value], op.i32x4ReplaceLane(lane)),
  sub: binary('v128', 'v128', op.i32x4Sub),
};

export const i64x2 = {
  extract_lane: (vec: Expr<'v128'>, lane: number): Expr<'i64'> =>
    fold('i64', [vec], op.i64x2ExtractLane(lane)),
  sub: binary('v128', 'v128', op.i64x2Sub),
  /** i32 lanes 0 and 1, sign-extended. */
  extend_low_i32x4_s: unary('v128', 'v128', op.i64x2ExtendLowI32x4S),
  /** i32 lanes 2 and 3, sign-extended. */
  extend_high_i32x4_s: unary('v128', 'v128', op.i64x2ExtendHighI32x4S),
};

export const memory = {
  /** Sets `n` bytes from `dest` to the low byte of `value`. */
  fill: (dest: Expr<'i32'>, value: Expr<'i32'>, n: Expr<'i32'>): Stmt =>
    fold('none', [dest, value, n], op.memoryFill()),
};

/** A v128 constant with the same float32 in all four lanes. */
export function f32x4Const(x: number): number[] {
  const b = new Uint8Array(16);
  const view = new DataView(b.buffer);
  for (let i = 0; i < 4; i++) view.setFloat32(4 * i, x, true);
  return op.v128Const([...b]);
}

/** A v128 constant with the same float64 in both lanes. */
export function f64x2Const(x: number): number[] {
  const b = new Uint8Array(16);
  const view = new DataView(b.buffer);
  view.setFloat64(0, x, true);
  view.setFloat64(8, x, true);
  return op.v128Const([...b]);
}

/** The part of the WebAssembly JS API used by the lab (the project's TypeScript lib has no DOM types). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
export interface WasmApi {
  Memory: new (d: { initial: number }) => WasmMemory;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (m: object, imports: object) => { exports: Record<string, unknown> };
  validate(bytes: Uint8Array): boolean;
}
export const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
