/**
 * A small causal sequence model over a token vocabulary — the lab's stand-in for an LLM: one set of
 * parameters shared by every context, reading the whole transcript (prompt, its own actions, the
 * environment's tokens) and giving next-token logits at every position.
 *
 * Architecture (torch `nn.Embedding` x2 + `nn.GRU` (1 layer) + `nn.Linear`), `d = dModel`:
 *
 *   x_t = E[tok_t] + P[t]                                  token + position embedding, [d]
 *   a_t = x_t·Wx + bx,  c_t = h_{t−1}·Wh + bh               [3d] each, gate order (r, z, n) as torch
 *   r_t = σ(a_r + c_r),  z_t = σ(a_z + c_z)
 *   n_t = tanh(a_n + r_t ⊙ c_n)
 *   h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1},   h_{−1} = 0
 *   logits_t = h_t·Wo + bo                                 [V]: the distribution of token t+1
 *
 * A GRU rather than an attention block: the transcript is short (≤ a few dozen tokens) and the state
 * the policy needs (which operator comes next, how many thinks so far, verified or not) is a running
 * count/flag that a recurrence carries in its state; incremental generation is one step per token with
 * a d-vector of cached state (no key/value cache), and training is the same loop over a `[B, T]`
 * batch. Because x_t is a sum of two table rows, `x_t·Wx = (E·Wx)[tok] + (P·Wx)[t]`: the input
 * projection is computed once per pass for the V + C table rows, not per token (exact; the backward
 * pass accumulates the gradient per table row and chains it through Wx once).
 *
 * Numbers are float64 throughout (V8 computes in doubles; at these sizes every weight fits in L1, so
 * float32 storage would save nothing and would cost conversions), which also makes the finite
 * difference check exact to ~1e-9. Parameters and gradients are two flat `Float64Array`s with named
 * views ({@link SequenceModel.tensors}), so one optimizer step, one clip and one finiteness check cover
 * all of them. Activation buffers are allocated once and grown only when a larger batch arrives
 * (fresh memory pages are expensive).
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';
import { dotRows, outerAndDot } from './blockedProducts.js';

/** The range of `dModel` (width of embeddings and state); 32 is the default. */
export const D_MODEL_RANGE = Object.freeze({ min: 4, max: 128 });

export interface SequenceModelOptions {
  /** Vocabulary size V (2..4096). */
  vocab: number;
  /** Context length C: the longest sequence (prompt + response) the model reads (2..4096). */
  context: number;
  /**
   * Width d of embeddings and recurrent state, in [4, 128]; default 32. The task's state is a few
   * counters and flags, so 32 is ample; cost per token grows as 6·d² + 2·d·V FLOPs forward.
   */
  dModel?: number;
  /**
   * Initial output bias per token (length V; default all 0). The token lab puts its "pretrained
   * prior" here (observation tokens start unlikely), as the tabular policy does with its logits.
   */
  outputBias?: ArrayLike<number>;
}

/** A named parameter tensor: `params[offset .. offset + rows·cols)`, row-major `[rows, cols]`. */
export interface TensorView {
  name: 'token_embedding' | 'position_embedding' | 'w_x' | 'w_h' | 'b_x' | 'b_h' | 'w_out' | 'b_out';
  offset: number;
  rows: number;
  cols: number;
}

/**
 * A batch of sequences for {@link SequenceModel.logProbs}: row b holds `lengths[b]` tokens at
 * `tokens[b·cols ..]` (prompt then response); the response starts at `starts[b]` (≥ 1: the first
 * response token is predicted from at least one prompt token). Log-probs are returned for response
 * positions only, in a right-padded `[rows, responseCols]` layout (verl's `log_prob [B, T_resp]`).
 */
export interface SequenceBatch {
  rows: number;
  cols: number;
  tokens: Int32Array;
  lengths: Int32Array;
  starts: Int32Array;
  /** max over rows of `lengths[b] − starts[b]`. */
  responseCols: number;
}

/**
 * Packs prompts and responses into a {@link SequenceBatch} (`cols` = longest prompt + response).
 * Errors: SHAPE_MISMATCH for different counts or an empty batch; BAD_ARGUMENT for an empty prompt.
 */
export function packSequences(
  prompts: readonly (readonly number[])[],
  responses: readonly (readonly number[])[],
): SequenceBatch {
  const rows = prompts.length;
  if (rows === 0 || responses.length !== rows) {
    throw new LabError(
      'SHAPE_MISMATCH',
      `packSequences: ${rows} prompts and ${responses.length} responses (need the same, ≥ 1)`,
      { details: { field: 'responses', expected: rows, actual: responses.length } },
    );
  }
  let cols = 1;
  let responseCols = 1;
  for (let b = 0; b < rows; b++) {
    const p = (prompts[b] as readonly number[]).length;
    const r = (responses[b] as readonly number[]).length;
    if (p < 1) {
      throw new LabError('BAD_ARGUMENT', `prompts: row ${b} is empty (the model needs a first token)`, {
        details: { field: 'prompts', row: b },
      });
    }
    cols = Math.max(cols, p + r);
    responseCols = Math.max(responseCols, r);
  }
  const tokens = new Int32Array(rows * cols);
  const lengths = new Int32Array(rows);
  const starts = new Int32Array(rows);
  for (let b = 0; b < rows; b++) {
    const p = prompts[b] as readonly number[];
    const r = responses[b] as readonly number[];
    tokens.set(p, b * cols);
    tokens.set(r, b * cols + p.length);
    starts[b] = p.length;
    lengths[b] = p.length + r.length;
  }
  return { rows, cols, tokens, lengths, starts, responseCols };
}

function checkInt(field: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new LabError('BAD_ARGUMENT', `${field}: expected an integer in [${min}, ${max}], got ${value}`, {
      details: { field, value, min, max },
    });
  }
}

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/** The GRU sequence model; see the file comment for the formulas. */
export class SequenceModel {
  readonly vocab: number;
  readonly context: number;
  readonly dModel: number;
  /** All parameters, flat (views in {@link tensors}). */
  readonly params: Float64Array;
  /** `dLoss/dparams` of the last {@link backward}, same layout as {@link params}. */
  readonly grads: Float64Array;
  readonly tensors: readonly TensorView[];
  private readonly off: Record<TensorView['name'], number>;

  // Per-pass tables: (E·Wx) [V, 3d] and (P·Wx) [C, 3d], and their gradients.
  private readonly xwTok: Float64Array;
  private readonly xwPos: Float64Array;
  private readonly dxwTok: Float64Array;
  private readonly dxwPos: Float64Array;
  // Transposed copies of Wh and Wo, refreshed with the tables at the start of every pass.
  private readonly whT: Float64Array;
  private readonly woT: Float64Array;
  // Activations of the last logProbs call, [rows·cols·d] (probs: [rows·cols·V]); grown on demand.
  private hs = new Float64Array(0);
  private rs = new Float64Array(0);
  private zs = new Float64Array(0);
  private ns = new Float64Array(0);
  private cns = new Float64Array(0);
  private probs = new Float64Array(0);
  private last: SequenceBatch | null = null;
  // Scratch vectors reused in every step.
  private readonly gate: Float64Array;
  private readonly dh: Float64Array;
  private readonly dhPrev: Float64Array;
  private readonly ga: Float64Array;
  private readonly gh: Float64Array;
  private readonly dlog: Float64Array;

  /** Initialises every parameter from `rng` (same seed, same model, byte for byte). */
  constructor(options: SequenceModelOptions, rng: Rng) {
    const V = options.vocab;
    const C = options.context;
    const d = options.dModel ?? 32;
    checkInt('vocab', V, 2, 4096);
    checkInt('context', C, 2, 4096);
    checkInt('d_model', d, D_MODEL_RANGE.min, D_MODEL_RANGE.max);
    this.vocab = V;
    this.context = C;
    this.dModel = d;
    const shapes: [TensorView['name'], number, number][] = [
      ['token_embedding', V, d],
      ['position_embedding', C, d],
      ['w_x', d, 3 * d],
      ['w_h', d, 3 * d],
      ['b_x', 1, 3 * d],
      ['b_h', 1, 3 * d],
      ['w_out', d, V],
      ['b_out', 1, V],
    ];
    let offset = 0;
    const tensors: TensorView[] = [];
    const off = {} as Record<TensorView['name'], number>;
    for (const [name, rows, cols] of shapes) {
      tensors.push({ name, offset, rows, cols });
      off[name] = offset;
      offset += rows * cols;
    }
    this.tensors = tensors;
    this.off = off;
    this.params = new Float64Array(offset);
    this.grads = new Float64Array(offset);
    // Init as torch: embeddings N(0,1)-scaled (here uniform with variance 1/3 per entry, kept small
    // so x_t stays O(1) when two rows add), GRU and output U(±1/√d); biases 0 except the GRU's.
    const k = 1 / Math.sqrt(d);
    // one stream per tensor (forked by name), so a longer context does not shift the other tensors
    const fill = (name: TensorView['name'], scale: number) => {
      const t = tensors.find((x) => x.name === name) as TensorView;
      const stream = rng.fork(`sequence-model/${name}`);
      for (let i = 0; i < t.rows * t.cols; i++) this.params[t.offset + i] = (2 * stream.next() - 1) * scale;
    };
    fill('token_embedding', 1);
    fill('position_embedding', 0.5);
    fill('w_x', k);
    fill('w_h', k);
    fill('b_x', k);
    fill('b_h', k);
    fill('w_out', k);
    if (options.outputBias) {
      const bias = options.outputBias;
      if (bias.length !== V) {
        throw new LabError('SHAPE_MISMATCH', `outputBias: expected ${V} values, got ${bias.length}`, {
          details: { field: 'outputBias', expected: V, actual: bias.length },
        });
      }
      for (let v = 0; v < V; v++) {
        const b = bias[v] as number;
        if (!Number.isFinite(b)) {
          throw new LabError('NON_FINITE', `outputBias: value ${b} at token ${v} is not finite`, {
            details: { field: 'outputBias', token: v, value: b },
          });
        }
        this.params[off.b_out + v] = b;
      }
    }
    this.xwTok = new Float64Array(V * 3 * d);
    this.xwPos = new Float64Array(C * 3 * d);
    this.dxwTok = new Float64Array(V * 3 * d);
    this.dxwPos = new Float64Array(C * 3 * d);
    this.whT = new Float64Array(3 * d * d);
    this.woT = new Float64Array(V * d);
    this.dh = new Float64Array(d);
    this.dhPrev = new Float64Array(d);
    this.ga = new Float64Array(3 * d);
    this.gh = new Float64Array(3 * d);
    this.dlog = new Float64Array(V);
    this.gate = new Float64Array(3 * d);
  }

  /** Number of parameters: V·d + C·d + 2·(3d·d) + 2·3d + d·V + V. */
  get size(): number {
    return this.params.length;
  }

  /** Positions whose `(P·Wx)[t]` row is current (rows are projected only as far as a pass reads). */
  private projected = 0;

  /**
   * `(E·Wx)[v]` for every token and `(P·Wx)[t]` for positions `t < positions`, for the current
   * parameters (one pass's input projections; the context may be far longer than the batch).
   */
  private projectTables(positions: number): void {
    const d = this.dModel;
    const d3 = 3 * d;
    const p = this.params;
    const wx = this.off.w_x;
    const project = (src: number, count: number, out: Float64Array) => {
      out.fill(0, 0, count * d3);
      for (let i = 0; i < count; i++) {
        const o = i * d3;
        for (let k = 0; k < d; k++) {
          const e = p[src + i * d + k] as number;
          const w = wx + k * d3;
          for (let j = 0; j < d3; j++) out[o + j] = (out[o + j] as number) + e * (p[w + j] as number);
        }
      }
    };
    project(this.off.token_embedding, this.vocab, this.xwTok);
    project(this.off.position_embedding, positions, this.xwPos);
    this.projected = positions;
    // transposed copies of Wh [d, 3d] and Wo [d, V], so the per-token products are dot products
    const wh = this.off.w_h;
    for (let k = 0; k < d; k++)
      for (let j = 0; j < d3; j++) this.whT[j * d + k] = p[wh + k * d3 + j] as number;
    const V = this.vocab;
    const wo = this.off.w_out;
    for (let k = 0; k < d; k++) for (let v = 0; v < V; v++) this.woT[v * d + k] = p[wo + k * V + v] as number;
  }

  /** Extends the `(P·Wx)` rows to `positions` (same parameters), for generation past the projected rows. */
  private projectMorePositions(positions: number): void {
    const d = this.dModel;
    const d3 = 3 * d;
    const p = this.params;
    const wx = this.off.w_x;
    const src = this.off.position_embedding;
    const out = this.xwPos;
    for (let i = this.projected; i < positions; i++) {
      const o = i * d3;
      out.fill(0, o, o + d3);
      for (let k = 0; k < d; k++) {
        const e = p[src + i * d + k] as number;
        const w = wx + k * d3;
        for (let j = 0; j < d3; j++) out[o + j] = (out[o + j] as number) + e * (p[w + j] as number);
      }
    }
    this.projected = positions;
  }

  /**
   * One GRU step: from `hPrev` (at `prev`, or zeros when `prev < 0`) and token `tok` at position `t`
   * writes h into `hOut[ho..]`, and r, z, n, c_n into the activation arrays at `ao` when `store`.
   */
  private gruStep(
    tok: number,
    t: number,
    hPrevBuf: Float64Array,
    prev: number,
    hOut: Float64Array,
    ho: number,
    store: number,
  ): void {
    const d = this.dModel;
    const d3 = 3 * d;
    const p = this.params;
    const g = this.gate;
    const bh = this.off.b_h;
    const bx = this.off.b_x;
    const xt = tok * d3;
    const xp = t * d3;
    // c = h_{t-1}·Wh + bh as 3d dot products over Wh's transposed copy (loads only, one store each)
    if (prev >= 0) dotRows(this.whT, hPrevBuf, prev, d, d3, p, bh, g, 0);
    else for (let j = 0; j < d3; j++) g[j] = p[bh + j] as number;
    for (let j = 0; j < d; j++) {
      const ar = (this.xwTok[xt + j] as number) + (this.xwPos[xp + j] as number) + (p[bx + j] as number);
      const az =
        (this.xwTok[xt + d + j] as number) + (this.xwPos[xp + d + j] as number) + (p[bx + d + j] as number);
      const an =
        (this.xwTok[xt + 2 * d + j] as number) +
        (this.xwPos[xp + 2 * d + j] as number) +
        (p[bx + 2 * d + j] as number);
      const r = sigmoid(ar + (g[j] as number));
      const z = sigmoid(az + (g[d + j] as number));
      const cn = g[2 * d + j] as number;
      const n = Math.tanh(an + r * cn);
      const hp = prev >= 0 ? (hPrevBuf[prev + j] as number) : 0;
      hOut[ho + j] = (1 - z) * n + z * hp;
      if (store >= 0) {
        this.rs[store + j] = r;
        this.zs[store + j] = z;
        this.ns[store + j] = n;
        this.cns[store + j] = cn;
      }
    }
  }

  /** `logits = h·Wo + bo` into `out[oo .. oo + V)`. */
  private outputLogits(h: Float64Array, ho: number, out: Float64Array, oo: number): void {
    const d = this.dModel;
    const V = this.vocab;
    const p = this.params;
    const bo = this.off.b_out;
    dotRows(this.woT, h, ho, d, V, p, bo, out, oo);
  }

  private ensureCapacity(n: number): void {
    const d = this.dModel;
    if (this.hs.length >= n * d) return;
    const grow = Math.max(n, Math.ceil((this.hs.length / d) * 1.5));
    this.hs = new Float64Array(grow * d);
    this.rs = new Float64Array(grow * d);
    this.zs = new Float64Array(grow * d);
    this.ns = new Float64Array(grow * d);
    this.cns = new Float64Array(grow * d);
    this.probs = new Float64Array(grow * this.vocab);
  }

  /** Throws unless every token id is in the vocabulary and every row fits the context. */
  private checkBatch(batch: SequenceBatch): void {
    const { rows, cols, tokens, lengths, starts } = batch;
    if (tokens.length !== rows * cols || lengths.length !== rows || starts.length !== rows) {
      throw new LabError('SHAPE_MISMATCH', `batch: tokens/lengths/starts do not match [${rows}, ${cols}]`, {
        details: { field: 'batch', rows, cols },
      });
    }
    for (let b = 0; b < rows; b++) {
      const L = lengths[b] as number;
      const s = starts[b] as number;
      if (L > this.context) {
        throw new LabError(
          'BAD_ARGUMENT',
          `transcript: row ${b} has ${L} tokens, longer than the model's context ${this.context}`,
          { details: { field: 'transcript', row: b, length: L, context: this.context } },
        );
      }
      if (!(s >= 1 && s <= L && L <= cols && L - s <= batch.responseCols)) {
        throw new LabError('BAD_ARGUMENT', `batch: row ${b} has start ${s} and length ${L} (cols ${cols})`, {
          details: { field: 'starts', row: b },
        });
      }
      for (let t = 0; t < L; t++) {
        const tok = tokens[b * cols + t] as number;
        if (!(tok >= 0 && tok < this.vocab)) {
          throw new LabError(
            'BAD_ARGUMENT',
            `tokens: id ${tok} at row ${b}, token ${t} is outside [0, ${this.vocab})`,
            {
              details: { field: 'tokens', row: b, token: t, value: tok },
            },
          );
        }
      }
    }
  }

  /**
   * Forward pass over a batch: `log pi(tok_t | tok_<t)` of every response token, `[rows, responseCols]`
   * row-major, 0 at padding (verl's actor `compute_log_prob`, environment tokens included). Keeps the
   * activations for {@link backward}. `out` is reused when given.
   * Errors: BAD_ARGUMENT for a token outside the vocabulary or a row longer than the context.
   */
  logProbs(batch: SequenceBatch, out?: Float64Array): Float64Array {
    this.checkBatch(batch);
    const { rows, cols, tokens, lengths, starts, responseCols } = batch;
    const d = this.dModel;
    const V = this.vocab;
    const res = out && out.length === rows * responseCols ? out : new Float64Array(rows * responseCols);
    res.fill(0);
    this.ensureCapacity(rows * cols);
    this.projectTables(cols);
    const hs = this.hs;
    const probs = this.probs;
    for (let b = 0; b < rows; b++) {
      const L = lengths[b] as number;
      const s = starts[b] as number;
      for (let t = 0; t < L; t++) {
        const i = b * cols + t;
        this.gruStep(tokens[i] as number, t, hs, t === 0 ? -1 : (i - 1) * d, hs, i * d, i * d);
        if (t + 1 < s || t + 1 >= L) continue;
        // log-softmax of logits_t at the next token; probs kept for the backward pass
        const po = i * V;
        this.outputLogits(hs, i * d, probs, po);
        let max = Number.NEGATIVE_INFINITY;
        for (let v = 0; v < V; v++) max = Math.max(max, probs[po + v] as number);
        const next = tokens[i + 1] as number;
        const zNext = probs[po + next] as number;
        let sum = 0;
        for (let v = 0; v < V; v++) {
          const e = Math.exp((probs[po + v] as number) - max);
          probs[po + v] = e;
          sum += e;
        }
        // z − max − log Σ exp(z − max): finite even where the probability underflows to 0
        res[b * responseCols + (t + 1 - s)] = zNext - max - Math.log(sum);
        const inv = 1 / sum;
        for (let v = 0; v < V; v++) probs[po + v] = (probs[po + v] as number) * inv;
      }
    }
    this.last = batch;
    return res;
  }

  /**
   * Backward pass of the last {@link logProbs} call: given `gradLogProb[b, s] = dL/d logp` for every
   * response token (`[rows, responseCols]`, 0 where the token is not in the loss), writes
   * `dL/dparams` into {@link grads} (overwritten, not accumulated). `gradEntropy[b, s] = dL/dH`
   * (optional, same shape) adds an entropy term (the entropy bonus, see {@link entropies}): at each
   * position `dH/dz_v = −p_v (log p_v + H)` is chained into the logits beside the log-prob term.
   * Errors: NON_FINITE naming row and token for a non-finite gradient; SHAPE_MISMATCH.
   *
   * Why one long method: backpropagation through time is one loop nest (rows, then steps backwards,
   * then the gates) whose steps share the per-step buffers and the running dh; it mirrors the
   * forward loop of {@link logProbs} step for step, and sequenceModel.test.ts checks it against
   * central finite differences on every parameter tensor.
   */
  backward(gradLogProb: ArrayLike<number>, gradEntropy?: ArrayLike<number>): Float64Array {
    const batch = this.last;
    if (!batch) {
      throw new LabError('BAD_ARGUMENT', 'backward: call logProbs first (no activations)', {
        details: { field: 'gradLogProb' },
      });
    }
    const { rows, cols, tokens, lengths, starts, responseCols } = batch;
    if (gradLogProb.length !== rows * responseCols) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `gradLogProb: expected ${rows * responseCols} values [${rows}, ${responseCols}], got ${gradLogProb.length}`,
        { details: { field: 'gradLogProb', expected: rows * responseCols, actual: gradLogProb.length } },
      );
    }
    for (let i = 0; i < gradLogProb.length; i++) {
      const g = gradLogProb[i] as number;
      if (!Number.isFinite(g)) {
        const row = Math.floor(i / responseCols);
        throw new LabError(
          'NON_FINITE',
          `gradLogProb: value ${g} at row ${row}, token ${i % responseCols} is not finite`,
          { details: { field: 'gradLogProb', row, token: i % responseCols, value: g } },
        );
      }
    }
    if (gradEntropy && gradEntropy.length !== rows * responseCols) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `gradEntropy: expected ${rows * responseCols} values [${rows}, ${responseCols}], got ${gradEntropy.length}`,
        { details: { field: 'gradEntropy', expected: rows * responseCols, actual: gradEntropy.length } },
      );
    }
    const d = this.dModel;
    const d3 = 3 * d;
    const V = this.vocab;
    const p = this.params;
    const gr = this.grads;
    gr.fill(0);
    this.dxwTok.fill(0);
    this.dxwPos.fill(0, 0, cols * d3);
    const { hs, rs, zs, ns, cns, probs, dh, dhPrev, ga, gh, dlog } = this;
    const wo = this.off.w_out;
    const bo = this.off.b_out;
    const wh = this.off.w_h;
    const gbh = this.off.b_h;
    const gbx = this.off.b_x;
    for (let b = 0; b < rows; b++) {
      const L = lengths[b] as number;
      const s = starts[b] as number;
      dh.fill(0);
      for (let t = L - 1; t >= 0; t--) {
        const i = b * cols + t;
        const ho = i * d;
        // output head: logits_t predicts token t+1
        if (t + 1 >= s && t + 1 < L) {
          const g = gradLogProb[b * responseCols + (t + 1 - s)] as number;
          const gH = gradEntropy ? (gradEntropy[b * responseCols + (t + 1 - s)] as number) : 0;
          if (g !== 0 || gH !== 0) {
            const po = i * V;
            const next = tokens[i + 1] as number;
            for (let v = 0; v < V; v++) dlog[v] = -g * (probs[po + v] as number);
            dlog[next] = (dlog[next] as number) + g;
            if (gH !== 0) {
              // dH/dz_v = −p_v (log p_v + H); p_v log p_v -> 0 where p_v underflows
              let h = 0;
              for (let v = 0; v < V; v++) {
                const q = probs[po + v] as number;
                if (q > 0) h -= q * Math.log(q);
              }
              for (let v = 0; v < V; v++) {
                const q = probs[po + v] as number;
                if (q > 0) dlog[v] = (dlog[v] as number) - gH * q * (Math.log(q) + h);
              }
            }
            for (let v = 0; v < V; v++) gr[bo + v] = (gr[bo + v] as number) + (dlog[v] as number);
            outerAndDot(hs, ho, dlog, 0, V, d, p, gr, wo, dh, 0, dh, 0);
          }
        }
        // GRU step backward
        const hasPrev = t > 0;
        const hpo = ho - d;
        for (let j = 0; j < d; j++) {
          const dhj = dh[j] as number;
          const r = rs[ho + j] as number;
          const z = zs[ho + j] as number;
          const n = ns[ho + j] as number;
          const cn = cns[ho + j] as number;
          const hp = hasPrev ? (hs[hpo + j] as number) : 0;
          const dn = dhj * (1 - z);
          const dz = dhj * (hp - n);
          const dnPre = dn * (1 - n * n);
          const dr = dnPre * cn;
          const drPre = dr * r * (1 - r);
          const dzPre = dz * z * (1 - z);
          ga[j] = drPre;
          ga[d + j] = dzPre;
          ga[2 * d + j] = dnPre;
          gh[j] = drPre;
          gh[d + j] = dzPre;
          gh[2 * d + j] = dnPre * r;
          dhPrev[j] = dhj * z;
        }
        const tok = tokens[i] as number;
        const xt = tok * d3;
        const xp = t * d3;
        for (let j = 0; j < d3; j++) {
          const a = ga[j] as number;
          this.dxwTok[xt + j] = (this.dxwTok[xt + j] as number) + a;
          this.dxwPos[xp + j] = (this.dxwPos[xp + j] as number) + a;
          gr[gbx + j] = (gr[gbx + j] as number) + a;
          gr[gbh + j] = (gr[gbh + j] as number) + (gh[j] as number);
        }
        if (hasPrev) outerAndDot(hs, hpo, gh, 0, d3, d, p, gr, wh, dhPrev, 0, dh, 0);
      }
    }
    // chain the table gradients through Wx: d(E·Wx) -> dE, dWx; d(P·Wx) -> dP, dWx
    const wx = this.off.w_x;
    const chain = (src: number, count: number, dTable: Float64Array) => {
      for (let i = 0; i < count; i++) {
        const e = src + i * d;
        outerAndDot(p, e, dTable, i * d3, d3, d, p, gr, wx, gr, e, gr, e);
      }
    };
    chain(this.off.token_embedding, this.vocab, this.dxwTok);
    chain(this.off.position_embedding, cols, this.dxwPos);
    return gr;
  }

  /**
   * Entropy `H = −Σ_v p_v log p_v` of the next-token distribution (tau = 1) at every response
   * position of the last {@link logProbs} call, `[rows, responseCols]`, 0 at padding (verl
   * `entropy_from_logits` of the actor's logits). Errors: BAD_ARGUMENT before any logProbs call.
   */
  entropies(): Float64Array {
    const batch = this.last;
    if (!batch) {
      throw new LabError('BAD_ARGUMENT', 'entropies: call logProbs first (no activations)', {
        details: { field: 'entropies' },
      });
    }
    const { rows, cols, lengths, starts, responseCols } = batch;
    const V = this.vocab;
    const out = new Float64Array(rows * responseCols);
    for (let b = 0; b < rows; b++) {
      const L = lengths[b] as number;
      const s = starts[b] as number;
      for (let t = Math.max(0, s - 1); t + 1 < L; t++) {
        const po = (b * cols + t) * V;
        let h = 0;
        for (let v = 0; v < V; v++) {
          const q = this.probs[po + v] as number;
          if (q > 0) h -= q * Math.log(q);
        }
        out[b * responseCols + (t + 1 - s)] = h;
      }
    }
    return out;
  }

  /** A generator with its own cached state (one row at a time); see {@link SequenceSampler}. */
  sampler(): SequenceSampler {
    return new SequenceSampler(this);
  }

  /** @internal Table projection before a generation phase (parameters must not change during it). */
  prepareGeneration(): void {
    this.projectTables(Math.min(64, this.context));
  }

  /** @internal One incremental step for {@link SequenceSampler}. */
  stepInto(
    tok: number,
    t: number,
    hPrev: Float64Array | null,
    hOut: Float64Array,
    logits: Float64Array,
  ): void {
    if (t >= this.projected) {
      this.projectMorePositions(Math.min(this.context, Math.max(t + 1, 2 * this.projected)));
    }
    this.gruStep(tok, t, hPrev ?? hOut, hPrev ? 0 : -1, hOut, 0, -1);
    this.outputLogits(hOut, 0, logits, 0);
  }

  /**
   * Throws NON_FINITE naming the tensor and index of the first non-finite entry of `values`
   * (`params` or `grads`), with `step` in the message: training must stop rather than continue
   * with NaN weights.
   */
  checkFinite(values: Float64Array, what: 'params' | 'grads', step: number): void {
    for (let i = 0; i < values.length; i++) {
      const v = values[i] as number;
      if (Number.isFinite(v)) continue;
      let t = this.tensors[0] as TensorView;
      for (const x of this.tensors) if (x.offset <= i) t = x;
      const at = i - t.offset;
      throw new LabError(
        'NON_FINITE',
        `${what}: ${t.name}[${Math.floor(at / t.cols)}, ${at % t.cols}] is ${v} at step ${step}`,
        { details: { field: `${what}.${t.name}`, index: at, step, value: v } },
      );
    }
  }
}

/**
 * Incremental generation for one sequence at a time with a cached recurrent state: `reset()`, then
 * `feed(token)` for every token as it is appended (prompt, own sample, environment output), and
 * `sample(rng, temperature)` for the next token. Each feed is one GRU step (6·d² + 2·d·V FLOPs), so
 * generating a sequence is linear in its length. Call `model.prepareGeneration()` once before a
 * phase (the table projections), and do not change the parameters during it.
 */
export class SequenceSampler {
  private readonly model: SequenceModel;
  private h: Float64Array;
  private hNext: Float64Array;
  readonly logits: Float64Array;
  private readonly weights: Float64Array;
  private position = 0;

  constructor(model: SequenceModel) {
    this.model = model;
    this.h = new Float64Array(model.dModel);
    this.hNext = new Float64Array(model.dModel);
    this.logits = new Float64Array(model.vocab);
    this.weights = new Float64Array(model.vocab);
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
   * Appends one token: advances the state and computes the logits of the next token.
   * Errors: BAD_ARGUMENT for a token outside the vocabulary or a sequence longer than the context.
   */
  feed(token: number): void {
    const m = this.model;
    if (this.position >= m.context) {
      throw new LabError(
        'BAD_ARGUMENT',
        `transcript: token ${this.position} is beyond the model's context ${m.context}`,
        { details: { field: 'transcript', token: this.position, context: m.context } },
      );
    }
    if (!(Number.isInteger(token) && token >= 0 && token < m.vocab)) {
      throw new LabError(
        'BAD_ARGUMENT',
        `token: id ${token} at position ${this.position} is outside [0, ${m.vocab})`,
        {
          details: { field: 'token', token: this.position, value: token },
        },
      );
    }
    m.stepInto(token, this.position, this.position === 0 ? null : this.h, this.hNext, this.logits);
    const tmp = this.h;
    this.h = this.hNext;
    this.hNext = tmp;
    this.position++;
  }

  /**
   * Draws the next token from softmax(logits / temperature) with one uniform draw (temperature 1:
   * the model's own distribution, the one training log-probs refer to). `temperature = 0` is the
   * greedy limit (argmax, lowest id on ties; draws nothing). Errors: BAD_ARGUMENT for a negative or
   * non-finite temperature, or before any token was fed.
   */
  sample(rng: Rng, temperature = 1): number {
    if (!(temperature >= 0 && Number.isFinite(temperature))) {
      throw new LabError('BAD_ARGUMENT', `temperature: expected a finite number >= 0, got ${temperature}`, {
        details: { field: 'temperature', value: temperature },
      });
    }
    if (this.position === 0) {
      throw new LabError('BAD_ARGUMENT', 'sample: feed at least one token first', {
        details: { field: 'transcript' },
      });
    }
    const z = this.logits;
    const V = z.length;
    let best = 0;
    for (let v = 1; v < V; v++) if ((z[v] as number) > (z[best] as number)) best = v;
    if (temperature === 0) return best;
    const max = z[best] as number;
    const w = this.weights;
    for (let v = 0; v < V; v++) w[v] = Math.exp(((z[v] as number) - max) / temperature);
    return rng.categorical(w);
  }
}
