/**
 * The neural policy's GRU (same shapes and formulas as src/policy/sequenceModel.ts) written with
 * TensorFlow.js, for the implementation choice in bench/neural.bench.ts. TensorFlow.js is not a
 * dependency of the lab (the hand-written model was measured faster, see docs/bench-neural.md); this
 * runs only when it is installed next to the repo:
 *
 *   npm i --no-save @tensorflow/tfjs@4.22.0 @tensorflow/tfjs-backend-wasm@4.22.0
 *
 * Both packages are pure JS / ship their .wasm inside the npm tarball (no download at install).
 * The gather of the embedding is a one-hot matmul because the wasm backend lacks the gradient of
 * `gather` (UnsortedSegmentSum); the per-step inputs come from one `unstack` (a slice per step
 * would make the backward pass pad a full [B, T, 3d] tensor 48 times).
 */
import { createRequire } from 'node:module';

// biome-ignore lint/suspicious/noExplicitAny: an optional, untyped import
type Tf = any;

/** Loads TensorFlow.js with `backend` ('cpu' | 'wasm'), or returns null when it is not installed. */
export async function loadTfjs(backend: 'cpu' | 'wasm'): Promise<Tf | null> {
  const require = createRequire(import.meta.url);
  let tf: Tf;
  try {
    tf = require('@tensorflow/tfjs');
    if (backend === 'wasm') require('@tensorflow/tfjs-backend-wasm');
  } catch {
    return null;
  }
  await tf.setBackend(backend);
  await tf.ready();
  return tf;
}

/**
 * Returns a function that runs one forward + backward pass (loss = Σ g · logp over next-token
 * log-probs, gradients read back with dataSync) of a GRU with d, V, context C on `tokens` [B, T].
 */
export function tfjsForwardBackward(
  tf: Tf,
  B: number,
  T: number,
  d: number,
  V: number,
  C: number,
  tokens: Int32Array,
  gradLogProb: Float32Array,
): () => void {
  let seed = 1;
  const rnd = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return (seed / 2 ** 32) * 2 - 1;
  };
  const init = (shape: number[], s: number) =>
    tf.variable(
      tf.tensor(
        Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rnd() * s),
        shape,
      ),
    );
  const k = 1 / Math.sqrt(d);
  const E = init([V, d], 1);
  const P = init([C, d], 0.5);
  const Wx = init([d, 3 * d], k);
  const Wh = init([d, 3 * d], k);
  const bx = init([3 * d], k);
  const bh = init([3 * d], k);
  const Wo = init([d, V], k);
  const bo = init([V], 0);
  const tok = tf.tensor2d(tokens, [B, T], 'int32');
  const tokOneHot = tf.oneHot(tf.reshape(tok, [B * T]), V).toFloat();
  const next = Int32Array.from(
    { length: B * (T - 1) },
    (_, i) => tokens[Math.floor(i / (T - 1)) * T + (i % (T - 1)) + 1] as number,
  );
  const nextOneHot = tf.reshape(tf.oneHot(tf.tensor1d(next, 'int32'), V), [B * (T - 1), V]);
  const g = tf.tensor2d(gradLogProb, [B, T - 1]);
  const loss = () => {
    const x = tf.add(tf.reshape(tf.matMul(tokOneHot, E), [B, T, d]), tf.slice(P, [0, 0], [T, d]));
    const xa = tf.reshape(tf.add(tf.matMul(tf.reshape(x, [B * T, d]), Wx), bx), [B, T, 3 * d]);
    const xs = tf.unstack(xa, 1);
    let h = tf.zeros([B, d]);
    const hs = [];
    for (let t = 0; t < T - 1; t++) {
      const c = tf.add(tf.matMul(h, Wh), bh);
      const [ar, az, an] = tf.split(xs[t], 3, 1);
      const [cr, cz, cn] = tf.split(c, 3, 1);
      const r = tf.sigmoid(tf.add(ar, cr));
      const z = tf.sigmoid(tf.add(az, cz));
      const n = tf.tanh(tf.add(an, tf.mul(r, cn)));
      h = tf.add(tf.mul(tf.sub(1, z), n), tf.mul(z, h));
      hs.push(h);
    }
    const H = tf.reshape(tf.stack(hs, 1), [B * (T - 1), d]);
    const logits = tf.add(tf.matMul(H, Wo), bo);
    const logp = tf.reshape(tf.sum(tf.mul(tf.logSoftmax(logits), nextOneHot), 1), [B, T - 1]);
    return tf.sum(tf.mul(logp, g));
  };
  return () =>
    tf.tidy(() => {
      const { value, grads } = tf.variableGrads(loss);
      value.dataSync();
      for (const key of Object.keys(grads)) grads[key].dataSync();
    });
}
