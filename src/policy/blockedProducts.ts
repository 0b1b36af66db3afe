/**
 * The two matrix-vector products of the sequence model's hot loops (src/policy/sequenceModel.ts),
 * blocked four rows at a time so a shared operand is loaded once per four multiply-adds, with every
 * sum in its original order: the results are the same bits as the plain loops (blockedProducts.test.ts
 * checks this against them). Pure functions over typed arrays with offsets; no allocation.
 */

/**
 * `out[oo + j] = bias[bo + j] + Σ_k x[xo + k] · wt[j·d + k]` for j < n: n dot products of length d
 * against the rows of a transposed weight `wt` [n, d]. Four rows at a time, so each `x[k]` is loaded
 * once per four products; every sum still runs over k in order from the bias, so the result is the
 * same bit for bit as one row at a time.
 */
export function dotRows(
  wt: Float64Array,
  x: Float64Array,
  xo: number,
  d: number,
  n: number,
  bias: Float64Array,
  bo: number,
  out: Float64Array,
  oo: number,
): void {
  let j = 0;
  for (; j + 4 <= n; j += 4) {
    let a0 = bias[bo + j] as number;
    let a1 = bias[bo + j + 1] as number;
    let a2 = bias[bo + j + 2] as number;
    let a3 = bias[bo + j + 3] as number;
    const w0 = j * d;
    const w1 = w0 + d;
    const w2 = w1 + d;
    const w3 = w2 + d;
    for (let k = 0; k < d; k++) {
      const xk = x[xo + k] as number;
      a0 += xk * (wt[w0 + k] as number);
      a1 += xk * (wt[w1 + k] as number);
      a2 += xk * (wt[w2 + k] as number);
      a3 += xk * (wt[w3 + k] as number);
    }
    out[oo + j] = a0;
    out[oo + j + 1] = a1;
    out[oo + j + 2] = a2;
    out[oo + j + 3] = a3;
  }
  for (; j < n; j++) {
    let acc = bias[bo + j] as number;
    const w = j * d;
    for (let k = 0; k < d; k++) acc += (x[xo + k] as number) * (wt[w + k] as number);
    out[oo + j] = acc;
  }
}

/**
 * The two products of a backward step through `y = x·W` (W [rows, n] row-major at `w` in `weights`):
 * the weight gradient `grads[w + k·n + j] += x[xo + k] · q[qo + j]` and the input gradient
 * `out[oo + k] = addend[ao + k] + Σ_j W[k, j] · q[qo + j]`. Four rows of W at a time, so each `q[j]`
 * is loaded once per four rows; every element gets its additions in the original order (bit for bit
 * the same as one row at a time). `out` may be `addend`, and may lie in `grads` outside W's rows.
 */
export function outerAndDot(
  x: Float64Array,
  xo: number,
  q: Float64Array,
  qo: number,
  n: number,
  rows: number,
  weights: Float64Array,
  grads: Float64Array,
  w: number,
  addend: Float64Array,
  ao: number,
  out: Float64Array,
  oo: number,
): void {
  let k = 0;
  for (; k + 4 <= rows; k += 4) {
    const x0 = x[xo + k] as number;
    const x1 = x[xo + k + 1] as number;
    const x2 = x[xo + k + 2] as number;
    const x3 = x[xo + k + 3] as number;
    const w0 = w + k * n;
    const w1 = w0 + n;
    const w2 = w1 + n;
    const w3 = w2 + n;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let j = 0; j < n; j++) {
      const qj = q[qo + j] as number;
      grads[w0 + j] = (grads[w0 + j] as number) + x0 * qj;
      grads[w1 + j] = (grads[w1 + j] as number) + x1 * qj;
      grads[w2 + j] = (grads[w2 + j] as number) + x2 * qj;
      grads[w3 + j] = (grads[w3 + j] as number) + x3 * qj;
      a0 += (weights[w0 + j] as number) * qj;
      a1 += (weights[w1 + j] as number) * qj;
      a2 += (weights[w2 + j] as number) * qj;
      a3 += (weights[w3 + j] as number) * qj;
    }
    out[oo + k] = (addend[ao + k] as number) + a0;
    out[oo + k + 1] = (addend[ao + k + 1] as number) + a1;
    out[oo + k + 2] = (addend[ao + k + 2] as number) + a2;
    out[oo + k + 3] = (addend[ao + k + 3] as number) + a3;
  }
  for (; k < rows; k++) {
    const xk = x[xo + k] as number;
    const wk = w + k * n;
    let acc = 0;
    for (let j = 0; j < n; j++) {
      const qj = q[qo + j] as number;
      grads[wk + j] = (grads[wk + j] as number) + xk * qj;
      acc += (weights[wk + j] as number) * qj;
    }
    out[oo + k] = (addend[ao + k] as number) + acc;
  }
}
