import { describe, expect, it } from 'vitest';
import {
  assembleModule,
  control,
  F64,
  f64,
  f64x2,
  f64x2Const,
  funcDef,
  I32,
  I64,
  i32,
  Locals,
  local,
  op,
  sleb,
  uleb,
  V128,
  v128,
  type WasmApi,
  wasmApi,
} from './wasmAssembler.js';

const wasm = wasmApi as WasmApi;

/** Instantiates `body` as `f(params) -> result` and returns it (memory of one page, at `memory`). */
function compile(params: number[], result: number, body: number[], locals: number[] = []) {
  const memory = new wasm.Memory({ initial: 1 });
  const bytes = assembleModule(1, [
    {
      name: 'f',
      params: params as (typeof I32)[],
      results: [result as typeof I32],
      locals: locals as (typeof I32)[],
      body,
    },
  ]);
  const instance = new wasm.Instance(new wasm.Module(bytes), { env: { memory } });
  return { f: instance.exports.f as (...args: number[]) => number, memory };
}

describe('wasmAssembler', () => {
  it('encodes LEB128 as in the examples of the specification (binary format, integers)', () => {
    expect(uleb(0)).toEqual([0]);
    expect(uleb(127)).toEqual([0x7f]);
    expect(uleb(128)).toEqual([0x80, 0x01]);
    expect(uleb(624485)).toEqual([0xe5, 0x8e, 0x26]);
    expect(sleb(-1)).toEqual([0x7f]);
    expect(sleb(63)).toEqual([0x3f]);
    expect(sleb(64)).toEqual([0xc0, 0x00]);
    expect(sleb(-123456)).toEqual([0xc0, 0xbb, 0x78]);
  });

  it('scalar arithmetic and control flow run as written', () => {
    // sum of 1..n with a loop
    const { f } = compile(
      [I32],
      I32,
      [
        ...op.block(),
        ...op.loop(),
        ...op.get(0),
        ...op.i32Eqz(),
        ...op.brIf(1),
        ...op.get(1),
        ...op.get(0),
        ...op.i32Add(),
        ...op.set(1),
        ...op.get(0),
        ...op.i32Const(1),
        ...op.i32Sub(),
        ...op.set(0),
        ...op.br(0),
        ...op.end(),
        ...op.end(),
        ...op.get(1),
      ],
      [I32],
    );
    expect(f(100)).toBe(5050);
  });

  it('SIMD opcodes have the semantics the loss kernels rely on', () => {
    const lane0 = (vec: number[]) => compile([], F64, [...vec, ...op.f64x2ExtractLane(0)]).f();
    const binary = (o: number[], a: number, b: number) => lane0([...f64x2Const(a), ...f64x2Const(b), ...o]);
    expect(binary(op.f64x2Add(), 1.5, 2)).toBe(3.5);
    expect(binary(op.f64x2Sub(), 1.5, 2)).toBe(-0.5);
    expect(binary(op.f64x2Mul(), 1.5, 2)).toBe(3);
    expect(binary(op.f64x2Min(), Number.NaN, 2)).toBeNaN();
    expect(binary(op.f64x2Max(), -0, 0)).toBe(0);
    // pseudo-min/max: b < a ? b : a and a < b ? b : a; a NaN operand gives the other's side
    expect(binary(op.f64x2Pmin(), 20, Number.NaN)).toBe(20);
    expect(binary(op.f64x2Pmax(), -20, Number.NaN)).toBe(-20);
    expect(binary(op.f64x2Pmin(), 20, 3)).toBe(3);
    expect(binary(op.f64x2Pmax(), -20, 3)).toBe(3);
    expect(lane0([...f64x2Const(-2.5), ...op.f64x2Neg()])).toBe(2.5);
    // comparisons give all-ones lanes; bitselect takes the first operand where the mask is set
    const select = (cmp: number[], a: number, b: number) =>
      lane0([
        ...f64x2Const(10),
        ...f64x2Const(20),
        ...f64x2Const(a),
        ...f64x2Const(b),
        ...cmp,
        ...op.v128Bitselect(),
      ]);
    expect(select(op.f64x2Lt(), 1, 2)).toBe(10);
    expect(select(op.f64x2Lt(), 2, 1)).toBe(20);
    expect(select(op.f64x2Gt(), 2, 1)).toBe(10);
    expect(select(op.f64x2Eq(), Number.NaN, Number.NaN)).toBe(20);
    // float32 ↔ float64 lanes through memory, and the low 32 bits of 1.5·2^52 + k
    const { f, memory } = compile(
      [],
      F64,
      [...op.i32Const(0), ...op.v128Load64Zero(), ...op.f64x2PromoteLowF32x4(), ...op.f64x2ExtractLane(1)],
      [V128],
    );
    new Float32Array(memory.buffer, 0, 2).set([0.1, -3.25]);
    expect(f()).toBe(-3.25);
    const k = compile([], I32, [...f64x2Const(6755399441055744 - 37), ...op.i32x4ExtractLane(0)]).f();
    expect(k).toBe(-37);
    // andnot(a, b) = a & ~b; extend_high sign-extends i32 lanes 2 and 3
    const i32x4 = (xs: number[]) => op.v128Const([...new Uint8Array(Int32Array.from(xs).buffer)]);
    const andNot = [...i32x4([0b1100, 0, 0, 0]), ...i32x4([0b1010, 0, 0, 0]), ...op.v128AndNot()];
    expect(compile([], I32, [...andNot, ...op.i32x4ExtractLane(0)]).f()).toBe(0b0100);
    const high = [...i32x4([7, 8, -1, 5]), ...op.i64x2ExtendHighI32x4S()];
    expect(compile([], I64, [...high, ...op.i64x2ExtractLane(0)]).f()).toBe(-1n);
    expect(compile([], I64, [...high, ...op.i64x2ExtractLane(1)]).f()).toBe(5n);
  });

  it('folded expressions assemble to the flat opcode list they spell, and run', () => {
    // (x + y) · splat(c), lane 1, stored at address 8: the flat list in stack order, then folded
    const flat = [
      ...op.i32Const(8),
      ...op.get(0),
      ...op.get(1),
      ...op.f64x2Add(),
      ...op.get(2),
      ...op.f64x2Splat(),
      ...op.f64x2Mul(),
      ...op.f64x2ExtractLane(1),
      ...op.f64Store(),
    ];
    const v = new Locals();
    const x = v.param('x', 'v128');
    const y = v.param('y', 'v128');
    const c = v.param('c', 'f64');
    const product = f64x2.mul(f64x2.add(local.get(x), local.get(y)), f64x2.splat(local.get(c)));
    const store = f64.store(i32.const(8), f64x2.extract_lane(product, 1));
    expect(store.code).toEqual(flat);
    expect(store.type).toBe('none');
    expect(product.type).toBe('v128');
    // locals: params first, then extra locals numbered after them
    const t = v.local('t', 'f64');
    expect([x.index, y.index, c.index, t.index]).toEqual([0, 1, 2, 3]);
    expect(v.params).toEqual([V128, V128, F64]);
    expect(v.extra).toEqual([F64]);
    expect(local.tee(t, local.get(c)).code).toEqual([...op.get(2), ...op.tee(3)]);

    // the loop of the scalar test above, folded, gives the same bytes and the same answer
    const s = new Locals();
    const n = s.param('n', 'i32');
    const acc = s.local('acc', 'i32');
    const loopBody = control.block(
      control.loop(
        control.br_if(1, i32.eqz(local.get(n))),
        local.set(acc, i32.add(local.get(acc), local.get(n))),
        local.set(n, i32.sub(local.get(n), i32.const(1))),
        control.br(0),
      ),
    );
    const def = funcDef('f', s, [loopBody]);
    expect(def.body).toEqual([
      ...op.block(),
      ...op.loop(),
      ...op.get(0),
      ...op.i32Eqz(),
      ...op.brIf(1),
      ...op.get(1),
      ...op.get(0),
      ...op.i32Add(),
      ...op.set(1),
      ...op.get(0),
      ...op.i32Const(1),
      ...op.i32Sub(),
      ...op.set(0),
      ...op.br(0),
      ...op.end(),
      ...op.end(),
    ]);
    const { f } = compile([I32], I32, [...def.body, ...op.get(1)], [I32]);
    expect(f(100)).toBe(5050);
    // memory offsets and lanes are immediates after the operands: v128.store offset=16
    const stored = compile([], I32, [
      ...v128.store(i32.const(0), f64x2.const(2.5), 16).code,
      ...op.i32Const(0),
    ]);
    stored.f();
    expect(new Float64Array(stored.memory.buffer, 16, 2)).toEqual(Float64Array.of(2.5, 2.5));
  });

  it('folded expressions are typed: a wrong operand type does not compile', () => {
    const v = new Locals();
    const a = v.param('a', 'i32');
    const d = v.local('d', 'f64');
    // each line below is a type error (tsc checks these comments: an unneeded one fails the build)
    // @ts-expect-error an f64 is not an i32 operand
    i32.add(local.get(a), local.get(d));
    // @ts-expect-error an i32 cannot be set into an f64 local
    local.set(d, local.get(a));
    // @ts-expect-error f64x2 arithmetic takes v128 operands
    f64x2.mul(local.get(d), local.get(d));
    // @ts-expect-error a statement is not a value
    f64.add(local.set(d, f64.const(1)), local.get(d));
    expect(f64.add(local.get(d), f64.const(1)).type).toBe('f64');
  });
});
