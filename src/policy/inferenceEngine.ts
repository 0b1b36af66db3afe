/**
 * An inference engine for the GRU sequence policy ({@link SequenceModel}) that differs from the trainer
 * for the reasons a real one does (issue 30): it holds its own copy of the weights (synced from the
 * trainer now and then: `engine_lag`), computes at a lower precision (`engine_precision`), and samples
 * from a truncated distribution (`top_k`, `top_p`) whose log-prob it reports as the behaviour log-prob,
 * while the trainer recomputes the full-softmax log-prob in float64.
 *
 * Forward pass at precision F (round = {@link roundToPrecision} to F, round-to-nearest-even):
 *
 *   W ← round(W) for every parameter, at each sync        (weights stored in F)
 *   T_tok = round(E·Wx),  T_pos = round(P·Wx)              (input projection, matmul outputs)
 *   a_t = round(T_tok[tok_t] + T_pos[t] + bx)              (x_t·Wx + bx)
 *   c_t = round(h_{t−1}·Wh + bh)                           (recurrent matmul output)
 *   r, z = σ(a + c) per gate,  n = tanh(a_n + r ⊙ c_n)     (nonlinearities in float64, as fused
 *   h_t = round((1 − z) ⊙ n + z ⊙ h_{t−1})                 kernels compute them in fp32; the state
 *                                                           is stored in F, like any activation)
 *   logits_t = round(h_t·Wo + bo)                          (the LM head's output)
 *
 * Matmuls accumulate in float64 and round their output once, as tensor-core kernels accumulate in
 * fp32 and round the result to the output dtype.
 *
 * That plain cast (`quantization: 'cast'`, the default) is the literal "everything in F". At fp8 it is
 * not what an fp8 inference engine does, and it exaggerates the error (small weights flush to 0). vLLM's
 * `quantization="fp8"` on a bf16 checkpoint (`Fp8LinearMethod`, vllm/model_executor/layers/quantization
 * /fp8.py at 0071b24b) quantizes only the linear layers: each weight with one per-tensor scale
 * (`ops.scaled_fp8_quant(layer.weight, scale=None)`: s = amax|W| / 448, W ≈ s · fp8(W / s)), each input
 * activation with a dynamic scale per token (`use_per_token_if_dynamic`), and the GEMM writes bf16
 * (`out_dtype` = the model dtype); embeddings and the LM head (not `LinearBase`) stay bf16.
 * `quantization: 'w8a8'` (fp8 precisions only) does that here:
 *
 *   every weight ← bf16(W);  Wx, Wh ← s_W · fp8(W / s_W), s_W = amax|W| / max_fp8
 *   x_t = bf16(E[tok_t] + P[t]),  x̂ = s_x · fp8(x_t / s_x), s_x = amax|x_t| / max_fp8   (per token)
 *   a_t = bf16(x̂·Wx + bx),  c_t = bf16(ĥ_{t−1}·Wh + bh) with ĥ quantized like x̂
 *   h_t = bf16(…),  logits_t = bf16(h_t·Wo + bo)                                         (head in bf16) The operations and their order are exactly those of
 * `SequenceModel.logProbs` (the same factorised input projection `(E·Wx)[tok] + (P·Wx)[t]`, the same
 * summation order), so at `fp64` (round = identity) and without truncation the engine's log-probs
 * equal the trainer's bit for bit: every difference the engine shows comes from a knob.
 */
import { LabError } from '../core/errors.js';
import {
  type OverflowMode,
  PRECISION_SPECS,
  type PrecisionFormat,
  roundArrayToPrecision,
  roundToPrecision,
} from '../core/precision.js';
import type { TranscriptAgent } from '../envs/promptedArithmetic.js';
import type { Rng } from '../random.js';
import type { SequenceBatch, SequenceModel, TensorView } from './sequenceModel.js';
import {
  checkTruncation,
  sampleTruncated,
  type TruncatedSample,
  type TruncationOptions,
  truncatedLogProbs,
} from './truncatedSampling.js';

/** The engine's knobs. */
export interface InferenceEngineOptions extends TruncationOptions {
  /** `engine_precision`: the format weights and matmul outputs are rounded to; default `fp64` (none). */
  precision?: PrecisionFormat | undefined;
  /** Overflow handling of the format (default: the format's own, see `core/precision.ts`). */
  overflow?: OverflowMode | undefined;
  /**
   * `engine_quantization`: `cast` (default) rounds every weight and output to `precision`; `w8a8` is
   * vLLM's fp8 scheme (scaled fp8 linear layers, bf16 elsewhere; fp8 precisions only). See the file comment.
   */
  quantization?: 'cast' | 'w8a8' | undefined;
}

/** `v[o .. o+n)` quantized to `format` with one scale `amax / max` (vLLM `scaled_fp8_quant`, dynamic). */
function scaledQuantize(
  v: Float64Array,
  o: number,
  n: number,
  format: PrecisionFormat,
  out: Float64Array,
): void {
  let amax = 0;
  for (let i = 0; i < n; i++) amax = Math.max(amax, Math.abs(v[o + i] as number));
  if (amax === 0) {
    for (let i = 0; i < n; i++) out[i] = 0;
    return;
  }
  const scale = amax / PRECISION_SPECS[format].maxFinite;
  for (let i = 0; i < n; i++) {
    out[i] = roundToPrecision((v[o + i] as number) / scale, format, { overflow: 'saturate' }) * scale;
  }
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/**
 * A copy of a {@link SequenceModel}'s weights at a precision, with its own incremental generation.
 * `sync(model, update)` refreshes the weights; between syncs the trainer may change its parameters
 * freely (the engine never reads them). Generation: `reset()`, `feed(token)` for each token, and
 * `sample(rng)` for the next one.
 */
export class InferenceEngine {
  readonly vocab: number;
  readonly context: number;
  readonly dModel: number;
  readonly precision: PrecisionFormat;
  readonly overflow: OverflowMode;
  readonly quantization: 'cast' | 'w8a8';
  /** The format of matmul outputs, state and logits: `precision` when casting, bf16 in `w8a8`. */
  private readonly outFormat: PrecisionFormat;
  readonly truncation: Readonly<TruncationOptions>;
  /** The trainer update the weights were taken at (the `update` of the last {@link sync}). */
  version = 0;
  private readonly params: Float64Array;
  private readonly off: Record<TensorView['name'], number>;
  private readonly xwTok: Float64Array;
  private readonly xwPos: Float64Array;
  private readonly whT: Float64Array;
  private readonly woT: Float64Array;
  private readonly gate: Float64Array;
  // w8a8 scratch: the token's input x_t, and x_t, h_{t−1} quantized
  private readonly x: Float64Array;
  private readonly xq: Float64Array;
  private readonly hq: Float64Array;
  /** a_t = x_t·Wx + bx of the current step, [3d]. */
  private readonly aIn: Float64Array;
  private h: Float64Array;
  private hNext: Float64Array;
  /** Logits of the next token after the last {@link feed} (rounded to the precision). */
  readonly logits: Float64Array;
  private position = 0;

  /**
   * Copies `model`'s weights now (version 0). Errors: UNKNOWN_MODE for an unknown precision or
   * overflow mode; BAD_ARGUMENT naming `top_k` / `top_p` for a bad truncation.
   */
  constructor(model: SequenceModel, options: InferenceEngineOptions = {}) {
    const precision = options.precision ?? 'fp64';
    if (!(precision in PRECISION_SPECS)) {
      throw new LabError('UNKNOWN_MODE', `engine_precision: unknown precision '${precision}'`, {
        details: { field: 'engine_precision', value: precision },
      });
    }
    checkTruncation(options);
    const quantization = options.quantization ?? 'cast';
    if (quantization !== 'cast' && quantization !== 'w8a8') {
      throw new LabError(
        'UNKNOWN_MODE',
        `engine_quantization: unknown scheme '${quantization}' (cast or w8a8)`,
        {
          details: { field: 'engine_quantization', value: quantization },
        },
      );
    }
    if (quantization === 'w8a8' && precision !== 'fp8_e4m3' && precision !== 'fp8_e5m2') {
      throw new LabError(
        'BAD_ARGUMENT',
        `engine_quantization: w8a8 needs an fp8 engine_precision, got ${precision}`,
        { details: { field: 'engine_quantization', value: quantization, precision } },
      );
    }
    this.quantization = quantization;
    this.outFormat = quantization === 'w8a8' ? 'bf16' : precision;
    this.precision = precision;
    this.overflow = options.overflow ?? PRECISION_SPECS[precision].defaultOverflow;
    roundToPrecision(0, precision, { overflow: this.overflow }); // validates the overflow mode
    const truncation: TruncationOptions = {};
    if (options.topK !== undefined) truncation.topK = options.topK;
    if (options.topP !== undefined) truncation.topP = options.topP;
    this.truncation = Object.freeze(truncation);
    this.vocab = model.vocab;
    this.context = model.context;
    const d = model.dModel;
    this.dModel = d;
    this.params = new Float64Array(model.size);
    const off = {} as Record<TensorView['name'], number>;
    for (const t of model.tensors) off[t.name] = t.offset;
    this.off = off;
    this.xwTok = new Float64Array(this.vocab * 3 * d);
    this.xwPos = new Float64Array(this.context * 3 * d);
    this.whT = new Float64Array(3 * d * d);
    this.woT = new Float64Array(this.vocab * d);
    this.gate = new Float64Array(3 * d);
    this.x = new Float64Array(d);
    this.xq = new Float64Array(d);
    this.hq = new Float64Array(d);
    this.aIn = new Float64Array(3 * d);
    this.h = new Float64Array(d);
    this.hNext = new Float64Array(d);
    this.logits = new Float64Array(this.vocab);
    this.sync(model, 0);
  }

  private round(x: number): number {
    return this.outFormat === 'fp64' ? x : roundToPrecision(x, this.outFormat, { overflow: this.overflow });
  }

  /**
   * Takes the trainer's current weights (rounded to the precision) and records `update` as the
   * engine's version; resets generation. Errors: SHAPE_MISMATCH for a model of another shape;
   * NON_FINITE when a weight is not finite after rounding (an fp8 'nonfinite' overflow, or NaN weights).
   */
  sync(model: SequenceModel, update: number): void {
    if (model.size !== this.params.length || model.vocab !== this.vocab || model.dModel !== this.dModel) {
      throw new LabError('SHAPE_MISMATCH', 'sync: the model has another shape than the engine', {
        details: { field: 'model', expected: this.params.length, actual: model.size },
      });
    }
    if (this.quantization === 'cast') {
      roundArrayToPrecision(model.params, this.precision, this.params, { overflow: this.overflow });
    } else {
      // the bf16 checkpoint, then the two linear layers in scaled fp8
      roundArrayToPrecision(model.params, 'bf16', this.params);
      for (const t of model.tensors) {
        if (t.name !== 'w_x' && t.name !== 'w_h') continue;
        const n = t.rows * t.cols;
        const q = new Float64Array(n);
        scaledQuantize(this.params, t.offset, n, this.precision, q);
        this.params.set(q, t.offset);
      }
    }
    for (let i = 0; i < this.params.length; i++) {
      if (!Number.isFinite(this.params[i] as number)) {
        throw new LabError(
          'NON_FINITE',
          `sync: weight ${i} is ${this.params[i]} at ${this.precision} (update ${update})`,
          { details: { field: 'params', index: i, update } },
        );
      }
    }
    this.version = update;
    this.project();
    this.reset();
  }

  /** Positions whose `T_pos` row is current (rows are projected as generation reaches them). */
  private projected = 0;

  /** Rows `[from, to)` of a projection table `round(src·Wx)`, in `SequenceModel.projectTables`'s order. */
  private projectRows(src: number, from: number, to: number, out: Float64Array): void {
    const d = this.dModel;
    const d3 = 3 * d;
    const p = this.params;
    const wx = this.off.w_x;
    out.fill(0, from * d3, to * d3);
    for (let i = from; i < to; i++) {
      const o = i * d3;
      for (let k = 0; k < d; k++) {
        const e = p[src + i * d + k] as number;
        const w = wx + k * d3;
        for (let j = 0; j < d3; j++) out[o + j] = (out[o + j] as number) + e * (p[w + j] as number);
      }
      for (let j = 0; j < d3; j++) out[o + j] = this.round(out[o + j] as number);
    }
  }

  /** The token table, the first position rows, and transposed Wh, Wo, from the current weights. */
  private project(): void {
    const d = this.dModel;
    const d3 = 3 * d;
    const p = this.params;
    if (this.quantization === 'cast') {
      this.projectRows(this.off.token_embedding, 0, this.vocab, this.xwTok);
      this.projected = Math.min(64, this.context);
      this.projectRows(this.off.position_embedding, 0, this.projected, this.xwPos);
    }
    const wh = this.off.w_h;
    for (let k = 0; k < d; k++)
      for (let j = 0; j < d3; j++) this.whT[j * d + k] = p[wh + k * d3 + j] as number;
    const V = this.vocab;
    const wo = this.off.w_out;
    for (let k = 0; k < d; k++) for (let v = 0; v < V; v++) this.woT[v * d + k] = p[wo + k * V + v] as number;
  }

  /** Starts a new sequence (state 0, position 0). */
  reset(): void {
    this.position = 0;
    this.h.fill(0);
  }

  /** Tokens fed since the last reset. */
  get length(): number {
    return this.position;
  }

  /**
   * Appends one token: one GRU step at the precision, then the next token's logits into
   * {@link logits}. Errors: BAD_ARGUMENT for a token outside the vocabulary or beyond the context.
   */
  feed(token: number): void {
    if (this.position >= this.context) {
      throw new LabError(
        'BAD_ARGUMENT',
        `transcript: token ${this.position} is beyond the model's context ${this.context}`,
        { details: { field: 'transcript', token: this.position, context: this.context } },
      );
    }
    if (!(Number.isInteger(token) && token >= 0 && token < this.vocab)) {
      throw new LabError(
        'BAD_ARGUMENT',
        `token: id ${token} at position ${this.position} is outside [0, ${this.vocab})`,
        {
          details: { field: 'token', token: this.position, value: token },
        },
      );
    }
    if (this.quantization === 'cast' && this.position >= this.projected) {
      const to = Math.min(this.context, 2 * this.projected);
      this.projectRows(this.off.position_embedding, this.projected, to, this.xwPos);
      this.projected = to;
    }
    const d = this.dModel;
    const d3 = 3 * d;
    const p = this.params;
    const g = this.gate;
    const bh = this.off.b_h;
    const bx = this.off.b_x;
    const xt = token * d3;
    const xp = this.position * d3;
    const hp = this.h;
    const first = this.position === 0;
    const wt = this.whT;
    const w8a8 = this.quantization === 'w8a8';
    // the recurrent GEMM's input: h_{t−1}, quantized per token in w8a8
    let hIn = hp;
    if (w8a8 && !first) {
      scaledQuantize(hp, 0, d, this.precision, this.hq);
      hIn = this.hq;
    }
    for (let j = 0; j < d3; j++) {
      let acc = p[bh + j] as number;
      if (!first) {
        const w = j * d;
        for (let k = 0; k < d; k++) acc += (hIn[k] as number) * (wt[w + k] as number);
      }
      g[j] = this.round(acc);
    }
    if (w8a8) {
      // x_t = bf16(E[tok] + P[t]), quantized per token, times the scaled-fp8 Wx
      const e = this.off.token_embedding + token * d;
      const pe = this.off.position_embedding + this.position * d;
      for (let k = 0; k < d; k++) this.x[k] = this.round((p[e + k] as number) + (p[pe + k] as number));
      scaledQuantize(this.x, 0, d, this.precision, this.xq);
      const wx = this.off.w_x;
      for (let j = 0; j < d3; j++) {
        let acc = 0;
        for (let k = 0; k < d; k++) acc += (this.xq[k] as number) * (p[wx + k * d3 + j] as number);
        this.aIn[j] = this.round(acc + (p[bx + j] as number));
      }
    } else {
      // a_t = T_tok[tok] + T_pos[t] + bx from the tables (the trainer's factorisation)
      for (let j = 0; j < d3; j++) {
        this.aIn[j] = this.round(
          (this.xwTok[xt + j] as number) + (this.xwPos[xp + j] as number) + (p[bx + j] as number),
        );
      }
    }
    const a = this.aIn;
    const out = this.hNext;
    for (let j = 0; j < d; j++) {
      const ar = a[j] as number;
      const az = a[d + j] as number;
      const an = a[2 * d + j] as number;
      const r = sigmoid(ar + (g[j] as number));
      const z = sigmoid(az + (g[d + j] as number));
      const n = Math.tanh(an + r * (g[2 * d + j] as number));
      const prev = first ? 0 : (hp[j] as number);
      out[j] = this.round((1 - z) * n + z * prev);
    }
    const V = this.vocab;
    const bo = this.off.b_out;
    const wo = this.woT;
    for (let v = 0; v < V; v++) {
      let acc = p[bo + v] as number;
      const w = v * d;
      for (let k = 0; k < d; k++) acc += (out[k] as number) * (wo[w + k] as number);
      this.logits[v] = this.round(acc);
    }
    this.hNext = this.h;
    this.h = out;
    this.position++;
  }

  /**
   * Draws the next token from the engine's truncated distribution (see `truncatedSampling.ts`) with
   * one uniform draw; returns it with the engine log-prob (the behaviour log-prob a rollout records)
   * and the full-softmax log-prob of the engine's own logits. Errors: BAD_ARGUMENT before any feed,
   * NON_FINITE when the logits overflowed to a non-finite value.
   */
  sample(rng: Rng): TruncatedSample {
    if (this.position === 0) {
      throw new LabError('BAD_ARGUMENT', 'sample: feed at least one token first', {
        details: { field: 'transcript' },
      });
    }
    return sampleTruncated(this.logits, rng, this.truncation);
  }

  /**
   * The engine's log-probs of given sequences, `[rows, responseCols]` like `SequenceModel.logProbs`
   * (0 at padding): `engine` is the truncated, renormalised log-prob (−Infinity for a token outside
   * the kept set, e.g. an environment token the engine would not have sampled), `full` the full
   * softmax of the engine's logits. The generation state is reset afterwards.
   */
  scoreBatch(batch: SequenceBatch): { engine: Float64Array; full: Float64Array } {
    const { rows, cols, tokens, lengths, starts, responseCols } = batch;
    const engine = new Float64Array(rows * responseCols);
    const full = new Float64Array(rows * responseCols);
    const lpEngine = new Float64Array(this.vocab);
    const lpFull = new Float64Array(this.vocab);
    for (let b = 0; b < rows; b++) {
      const L = lengths[b] as number;
      const s = starts[b] as number;
      if (!(s >= 1 && s <= L && L <= cols && L - s <= responseCols)) {
        throw new LabError('BAD_ARGUMENT', `batch: row ${b} has start ${s} and length ${L} (cols ${cols})`, {
          details: { field: 'starts', row: b },
        });
      }
      this.reset();
      for (let t = 0; t < L - 1; t++) {
        this.feed(tokens[b * cols + t] as number);
        if (t + 1 < s) continue;
        const next = tokens[b * cols + t + 1] as number;
        truncatedLogProbs(this.logits, this.truncation, lpEngine);
        truncatedLogProbs(this.logits, {}, lpFull);
        engine[b * responseCols + (t + 1 - s)] = lpEngine[next] as number;
        full[b * responseCols + (t + 1 - s)] = lpFull[next] as number;
      }
    }
    this.reset();
    return { engine, full };
  }
}

/**
 * `engine_lag`: when the engine takes the trainer's weights. With `engine_lag = k` (integer ≥ 0) the
 * engine syncs before the rollout of update u whenever `u − version > k`, i.e. every k + 1 updates
 * (at updates 0, k+1, 2(k+1), …), so the weights it samples with are 0, 1, …, k updates old in turn:
 * k = 0 syncs before every rollout (no lag). This is the "weights snapshot synced every k+1 updates"
 * of an asynchronous trainer whose inference workers reload weights periodically (prime-rl's
 * `async_level`, verl's one-step-off-policy at k = 1 have the same bound on staleness).
 */
export class EngineWeightSync {
  readonly lag: number;

  /** Errors: BAD_ARGUMENT naming `engine_lag` unless `lag` is an integer ≥ 0. */
  constructor(lag: number) {
    if (!(Number.isInteger(lag) && lag >= 0)) {
      throw new LabError('BAD_ARGUMENT', `engine_lag: expected an integer >= 0, got ${lag}`, {
        details: { field: 'engine_lag', value: lag },
      });
    }
    this.lag = lag;
  }

  /**
   * Before the rollout of update `update` (0, 1, 2, …): syncs `engine` from `model` when the engine's
   * weights are more than `lag` updates old (or from the future: a restarted count), and returns the
   * staleness the rollout samples with (`update − engine.version`, in [0, lag]).
   */
  beforeRollout(engine: InferenceEngine, model: SequenceModel, update: number): number {
    const staleness = update - engine.version;
    if (staleness > this.lag || staleness < 0) {
      engine.sync(model, update);
      return 0;
    }
    return staleness;
  }
}

/**
 * The engine as the prompted environment's {@link TranscriptAgent}: feeds every transcript token and
 * samples each action from the engine, recording the engine and full log-probs of every action it
 * chose (in order, since the last `start`), which a rollout stores as its behaviour log-probs.
 */
export class EngineAgent implements TranscriptAgent {
  private readonly engine: InferenceEngine;
  private readonly rng: Rng;
  /** Engine log-prob of each action since the last start. */
  readonly engineLogProbs: number[] = [];
  /** Full-softmax log-prob (engine logits) of each action since the last start. */
  readonly fullLogProbs: number[] = [];

  constructor(engine: InferenceEngine, rng: Rng) {
    this.engine = engine;
    this.rng = rng;
  }

  start(prompt: readonly number[]): void {
    this.engine.reset();
    this.engineLogProbs.length = 0;
    this.fullLogProbs.length = 0;
    for (const tok of prompt) this.engine.feed(tok);
  }

  choose(_context: number): number {
    const s = this.engine.sample(this.rng);
    this.engineLogProbs.push(s.engineLogProb);
    this.fullLogProbs.push(s.fullLogProb);
    return s.token;
  }

  append(token: number): void {
    this.engine.feed(token);
  }
}
