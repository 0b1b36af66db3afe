import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LabError } from '../core/errors.js';
import { Rng } from '../random.js';
import { checkTemperature, sampleTempered, temperedTables } from './temperature.js';

const LOGITS = Float64Array.of(0.3, -1.2, 2.0, 0.5, 1.0, 1.0, -3, 0.1);

describe('temperature', () => {
  it('tau = 1 matches the policy softmax exactly', () => {
    const { probs, logProbs } = temperedTables(LOGITS, 2, 4, 1);
    for (let c = 0; c < 2; c++) {
      const row = Array.from(LOGITS.slice(c * 4, c * 4 + 4));
      const norm = row.reduce((a, z) => a + Math.exp(z), 0);
      row.forEach((z, v) => {
        expect(probs[c * 4 + v]).toBeCloseTo(Math.exp(z) / norm, 14);
        expect(logProbs[c * 4 + v]).toBeCloseTo(z - Math.log(norm), 14);
      });
    }
  });
  it('tau -> 0 is greedy: every draw is the argmax, with log-prob -> 0', () => {
    const rng = new Rng(3);
    for (let i = 0; i < 200; i++) {
      const s = sampleTempered(LOGITS, 0, 4, 1e-3, rng);
      expect(s.token).toBe(2);
      expect(s.logProb).toBeCloseTo(0, 10);
    }
  });
  it('the behaviour log-prob is that of the tempered distribution (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -8, max: 8, noNaN: true }), { minLength: 2, maxLength: 7 }),
        fc.double({ min: 0.05, max: 20, noNaN: true }),
        fc.integer({ min: 0, max: 1000 }),
        (z, tau, seed) => {
          const logits = Float64Array.from(z);
          const { logProbs } = temperedTables(logits, 1, z.length, tau);
          const s = sampleTempered(logits, 0, z.length, tau, new Rng(seed));
          expect(s.logProb).toBeCloseTo(logProbs[s.token] as number, 10);
          let total = 0;
          for (const lp of logProbs) total += Math.exp(lp);
          expect(total).toBeCloseTo(1, 10);
        },
      ),
    );
  });
  it('empirical frequencies follow softmax(z / tau); higher tau flattens', () => {
    const rng = new Rng(11);
    const counts = new Float64Array(4);
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const t = sampleTempered(LOGITS, 0, 4, 2, rng).token;
      counts[t] = (counts[t] as number) + 1;
    }
    const { probs } = temperedTables(LOGITS, 1, 4, 2);
    for (let v = 0; v < 4; v++) {
      expect(Math.abs((counts[v] as number) / n - (probs[v] as number))).toBeLessThan(0.015);
    }
    const cold = temperedTables(LOGITS, 1, 4, 0.5).probs[2] as number;
    const hot = temperedTables(LOGITS, 1, 4, 2).probs[2] as number;
    expect(cold).toBeGreaterThan(hot);
  });
  it('tau <= 0 or non-finite is a LabError naming the option', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => checkTemperature(bad, 'temperature')).toThrow(LabError);
      expect(() => checkTemperature(bad, 'temperature')).toThrow(/temperature/);
      expect(() => temperedTables(LOGITS, 2, 4, bad)).toThrow(/temperature/);
    }
  });
});
