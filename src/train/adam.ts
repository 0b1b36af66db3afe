/**
 * Gradient-descent steps on a flat parameter vector (the tabular logits).
 *
 * `adam` (Kingma & Ba, torch.optim.Adam without weight decay; verl trains the actor with AdamW):
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
 *   θ ← θ − lr · (m / (1−β1^k)) / (sqrt(v / (1−β2^k)) + ε)
 * `sgd`: θ ← θ − lr·g.
 *
 * Adam divides each coordinate by a running RMS of its own gradient, so a loss multiplied by a
 * constant gives (nearly) the same steps. That matters for the aggregation experiment: with SGD the
 * four loss_agg_modes differ mostly by scale (an effective learning rate), with Adam only their
 * relative weighting of tokens and batches is left.
 */
import { LabError } from '../core/errors.js';

export type OptimizerKind = 'adam' | 'sgd';

export interface OptimizerOptions {
  kind?: OptimizerKind;
  learningRate?: number;
  beta1?: number;
  beta2?: number;
  epsilon?: number;
}

export const OPTIMIZER_DEFAULTS: Required<OptimizerOptions> = Object.freeze({
  kind: 'adam',
  learningRate: 0.05,
  beta1: 0.9,
  beta2: 0.999,
  epsilon: 1e-8,
});

export class Optimizer {
  readonly options: Required<OptimizerOptions>;
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private steps = 0;

  constructor(size: number, options: OptimizerOptions = {}) {
    const o = { ...OPTIMIZER_DEFAULTS, ...options };
    if (o.kind !== 'adam' && o.kind !== 'sgd') {
      throw new LabError('UNKNOWN_MODE', `optimizer: unknown kind '${o.kind}' (expected adam, sgd)`, {
        details: { field: 'optimizer', value: o.kind },
      });
    }
    if (!(o.learningRate > 0 && Number.isFinite(o.learningRate))) {
      throw new LabError('BAD_ARGUMENT', `learningRate: expected a positive number, got ${o.learningRate}`, {
        details: { field: 'learningRate', value: o.learningRate },
      });
    }
    if (!(o.beta1 >= 0 && o.beta1 < 1 && o.beta2 >= 0 && o.beta2 < 1)) {
      throw new LabError(
        'BAD_ARGUMENT',
        `beta1/beta2: expected values in [0, 1), got ${o.beta1}/${o.beta2}`,
        {
          details: { field: 'beta1/beta2' },
        },
      );
    }
    this.options = o;
    this.m = new Float64Array(size);
    this.v = new Float64Array(size);
  }

  /**
   * An independent copy with the same options, moments and step count: arms that branch from one
   * trained state continue exactly as the original would have.
   */
  clone(): Optimizer {
    const copy = new Optimizer(this.m.length, this.options);
    copy.m.set(this.m);
    copy.v.set(this.v);
    copy.steps = this.steps;
    return copy;
  }

  /** One descent step of `params` along `grad` (both length `size`), in place. */
  step(params: Float64Array, grad: ArrayLike<number>): void {
    if (params.length !== this.m.length || grad.length !== this.m.length) {
      throw new LabError(
        'SHAPE_MISMATCH',
        `optimizer step: expected ${this.m.length} parameters and gradients, got ${params.length} and ${grad.length}`,
        { details: { field: 'grad', expected: this.m.length } },
      );
    }
    const { kind, learningRate: lr, beta1, beta2, epsilon } = this.options;
    if (kind === 'sgd') {
      for (let i = 0; i < params.length; i++) params[i] = (params[i] as number) - lr * (grad[i] as number);
      return;
    }
    this.steps++;
    const c1 = 1 - beta1 ** this.steps;
    const c2 = 1 - beta2 ** this.steps;
    for (let i = 0; i < params.length; i++) {
      const g = grad[i] as number;
      const m = beta1 * (this.m[i] as number) + (1 - beta1) * g;
      const v = beta2 * (this.v[i] as number) + (1 - beta2) * g * g;
      this.m[i] = m;
      this.v[i] = v;
      params[i] = (params[i] as number) - (lr * (m / c1)) / (Math.sqrt(v / c2) + epsilon);
    }
  }
}
