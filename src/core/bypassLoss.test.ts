import { describe, expect, it } from 'vitest';
import { policyLossBypass } from './bypassLoss.js';
import { LabError } from './errors.js';
import { policyLossVanilla } from './vanillaPolicyLoss.js';

const shape = { rows: 2, cols: 3 };
const rollout = Float64Array.of(-1, -1, -1, -2, -2, -2);
// current log-probs: row 0 drifts a lot on token 1 (ratio e^1.5), row 1 stays close
const lp = Float64Array.of(-1.1, 0.5, -0.9, -2.05, -1.95, 0);
const adv = Float64Array.of(1, 1, 1, -1, -1, -1);
const mask = Uint8Array.of(1, 1, 1, 1, 1, 0);

describe('policyLossBypass', () => {
  it('ppo_clip without rejection is the vanilla loss with old_log_prob = rollout log-probs', () => {
    const r = policyLossBypass(
      { oldLogProb: rollout, logProb: lp, advantages: adv, responseMask: mask },
      shape,
      { is: { level: 'token' } },
    );
    const v = policyLossVanilla(
      { oldLogProb: rollout, logProb: lp, advantages: adv, responseMask: mask },
      shape,
    );
    expect(r.loss).toBe(v.loss);
    expect(Array.from(r.perTokenLoss)).toEqual(Array.from(v.perTokenLoss));
    expect(r.metrics).toEqual(v.metrics);
    expect(r.rolloutMetrics['rollout_corr/rollout_is_max']).toBeCloseTo(Math.exp(1.5), 6);
  });
  it('ppo_clip with rejection runs vanilla on the rejected mask', () => {
    const r = policyLossBypass(
      { oldLogProb: rollout, logProb: lp, advantages: adv, responseMask: mask },
      shape,
      {
        rejection: { rolloutRs: 'seq_max_k2', threshold: 0.5 }, // row 0: ½·1.5² = 1.125 > 0.5 -> rejected
      },
    );
    expect(Array.from(r.mask)).toEqual([0, 0, 0, 1, 1, 0]);
    const v = policyLossVanilla(
      { oldLogProb: rollout, logProb: lp, advantages: adv, responseMask: Uint8Array.of(0, 0, 0, 1, 1, 0) },
      shape,
    );
    expect(r.loss).toBe(v.loss);
    expect(Array.from(r.perTokenLoss)).toEqual(Array.from(v.perTokenLoss));
  });
  it('reinforce: -A·lp times the truncated IS weights exp(lp - rollout), seq-mean-token-sum when asked', () => {
    const r = policyLossBypass(
      { oldLogProb: rollout, logProb: lp, advantages: adv, responseMask: mask },
      shape,
      {
        lossType: 'reinforce',
        lossAggMode: 'seq-mean-token-sum',
        is: { level: 'token', threshold: 2 },
      },
    );
    const w = Array.from(lp, (v, i) => Math.min(Math.exp(v - (rollout[i] as number)), 2));
    let row0 = 0;
    let row1 = 0;
    for (let t = 0; t < 3; t++) row0 += -(adv[t] as number) * (lp[t] as number) * (w[t] as number);
    for (let t = 3; t < 5; t++) row1 += -(adv[t] as number) * (lp[t] as number) * (w[t] as number);
    expect(r.loss).toBeCloseTo((row0 + row1) / 2, 6);
    expect(Array.from(r.perTokenLoss)).toEqual(
      Array.from(lp, (v, i) => Math.fround(-(adv[i] as number) * v * Math.fround(w[i] as number))),
    );
    expect(r.metrics.ppo_kl).toBeCloseTo((0.1 - 1.5 - 0.1 + 0.05 - 0.05) / 5, 7);
  });
  it('unknown loss type is UNKNOWN_MODE naming loss_type', () => {
    try {
      policyLossBypass({ oldLogProb: rollout, logProb: lp, advantages: adv, responseMask: mask }, shape, {
        lossType: 'grpo' as never,
      });
      throw new Error('expected a LabError');
    } catch (e) {
      expect(e).toBeInstanceOf(LabError);
      expect((e as LabError).code).toBe('UNKNOWN_MODE');
      expect((e as LabError).message).toContain('loss_type');
    }
  });
});
