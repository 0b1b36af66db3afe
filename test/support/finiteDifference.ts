/**
 * Test helper: central finite differences, the reference every analytic gradient is checked against.
 *
 *   g_j = (f(x + h·e_j) − f(x − h·e_j)) / (2h)
 *
 * `params` is perturbed in place and each entry restored to its exact value afterwards, so `f` may
 * read it directly (a policy's own logits) or through a closure.
 */
export function centralDifferences(f: () => number, params: Float64Array, h: number): Float64Array {
  const g = new Float64Array(params.length);
  for (let j = 0; j < params.length; j++) {
    const x = params[j] as number;
    params[j] = x + h;
    const up = f();
    params[j] = x - h;
    const down = f();
    params[j] = x;
    g[j] = (up - down) / (2 * h);
  }
  return g;
}
