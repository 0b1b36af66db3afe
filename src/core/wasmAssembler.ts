/**
 * A minimal WebAssembly binary writer (internal): enough of the format (types, one imported memory,
 * exported functions, locals, structured control, scalar and SIMD instructions) to assemble the
 * lab's SIMD kernels from their TypeScript source at first use. The kernels ship as source, not as
 * a binary: nothing is downloaded or prebuilt, and a fresh clone assembles the same bytes (the
 * writer is deterministic; wasmAssembler.test.ts pins encodings against the specification's tables).
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
