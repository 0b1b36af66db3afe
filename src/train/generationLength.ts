/**
 * Long-tailed generation lengths for the rollout simulation: how many tokens a policy "writes" before
 * each tool call. The tabular policy has no tokens, so the length is a modelled quantity attached to
 * each real action of an episode; what matters for the schedule is its spread (a few very long
 * generations hold a worker for many trainer steps), which is what real reasoning traces show.
 *
 *   tokens = round(clamp(exp(log(median) + sigma * N(0, 1)), min, max))    (log-normal, per action)
 *
 * With sigma = 1 the 5%..95% range is median * [0.19, 5.2], a factor of 27: lengths vary by more than
 * an order of magnitude. A trajectory's length is the sum over its actions, so episodes that end early
 * (a protocol error at step 1) are also short ones.
 */
import { LabError } from '../core/errors.js';
import type { Rng } from '../random.js';

export interface LengthModel {
  /** Median tokens per action. Default 100. */
  median: number;
  /** Standard deviation of log(tokens). Default 1. */
  sigma: number;
  /** Clamp range, tokens (inclusive). Defaults 4 and 4096. */
  min: number;
  max: number;
}

export const LENGTH_DEFAULTS: LengthModel = Object.freeze({ median: 100, sigma: 1, min: 4, max: 4096 });

/** Throws BAD_ARGUMENT naming the field unless median > 0, sigma >= 0 and 1 <= min <= max (integers). */
export function checkLengthModel(m: LengthModel): void {
  const bad = (field: string, value: number, want: string) =>
    new LabError('BAD_ARGUMENT', `length model: ${field} must be ${want}, got ${value}`, {
      details: { field, value },
    });
  if (!(Number.isFinite(m.median) && m.median > 0)) throw bad('median', m.median, 'a finite number > 0');
  if (!(Number.isFinite(m.sigma) && m.sigma >= 0)) throw bad('sigma', m.sigma, 'a finite number >= 0');
  if (!(Number.isInteger(m.min) && m.min >= 1)) throw bad('min', m.min, 'an integer >= 1');
  if (!(Number.isInteger(m.max) && m.max >= m.min)) throw bad('max', m.max, `an integer >= min (${m.min})`);
}

/** One standard normal draw (Box-Muller, two uniforms from `rng`; 1 - u keeps the log finite). */
export function standardNormal(rng: Rng): number {
  const u1 = 1 - rng.next();
  const u2 = rng.next();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** Tokens generated for one action (two draws from `rng`). The model is validated by the caller. */
export function sampleActionTokens(model: LengthModel, rng: Rng): number {
  const raw = Math.exp(Math.log(model.median) + model.sigma * standardNormal(rng));
  return Math.round(Math.min(model.max, Math.max(model.min, raw)));
}
