import { describe, expect, it } from 'vitest';
import { PROMPTED_VOCAB_SIZE, samplePromptedTask } from '../../envs/promptedArithmetic.js';
import { FIRST_OBSERVATION_TOKEN } from '../../envs/tokenArithmetic.js';
import { Rng } from '../../random.js';
import { createExploreLearner, type ExploreEpisode, type UpdateTerms } from '../../train/exploreLearner.js';
import { configOf } from '../options.js';
import { explore } from './explore.js';

const cfg = configOf(explore, {});
const tasks = [1, 2, 3].map((l) => samplePromptedTask(new Rng(10 + l), 99, l, l));
const terms = (over: Partial<UpdateTerms> = {}): UpdateTerms => ({
  temperature: 1,
  entropyCoef: 0,
  isCorrection: false,
  lossAggMode: 'token-mean',
  demonstrations: [],
  sftCoef: 0,
  ...over,
});

/** log softmax(z / tau) of the table's initial logits (0 for actions, the prior for observations). */
function initialTemperedLogProbs(tau: number, vocab: number): number[] {
  const z = Array.from({ length: vocab }, (_, v) =>
    v >= FIRST_OBSERVATION_TOKEN ? cfg.observation_logit_init : 0,
  );
  const m = Math.max(...z.map((x) => x / tau));
  const lse = m + Math.log(z.reduce((s, x) => s + Math.exp(x / tau - m), 0));
  return z.map((x) => x / tau - lse);
}

const modelTokens = (rows: readonly ExploreEpisode[]) =>
  rows.flatMap((e) => e.tokens.flatMap((tok, t) => (e.roles[t] === 1 ? [[tok, e.behaviourLogProb[t]]] : [])));

describe('explore learner', () => {
  it.each([0.5, 1, 2])(
    'table rollouts record the log-prob of the tau = %s distribution they drew from',
    (tau) => {
      // at init every tabular context has the same logits, so the tempered log-prob of a token is known
      const learner = createExploreLearner({ ...cfg, policy: 'table' }, new Rng(1));
      const rows = learner.rollout(tasks, 16, tau, new Rng(2), new Rng(3));
      const pairs = modelTokens(rows);
      expect(pairs.length).toBeGreaterThan(40);
      const expected = initialTemperedLogProbs(tau, PROMPTED_VOCAB_SIZE);
      for (const [tok, lp] of pairs) expect(lp).toBeCloseTo(expected[tok as number] as number, 12);
      // env tokens carry no behaviour log-prob
      for (const e of rows)
        expect(e.behaviourLogProb.filter((lp, t) => e.roles[t] !== 1 && lp !== 0)).toEqual([]);
    },
  );

  it('neural rollouts record finite log-probs on model tokens only; colder draws are likelier under their own tau', () => {
    const learner = createExploreLearner({ ...cfg, policy: 'neural' }, new Rng(1));
    const meanLogProb = (tau: number) => {
      const rows = learner.rollout(tasks, 16, tau, new Rng(2), new Rng(3));
      for (const e of rows)
        expect(e.behaviourLogProb.filter((lp, t) => e.roles[t] !== 1 && lp !== 0)).toEqual([]);
      const lps = modelTokens(rows).map(([, l]) => l as number);
      for (const l of lps) expect(Number.isFinite(l) && l <= 0).toBe(true);
      return lps.reduce((a, b) => a + b, 0) / lps.length;
    };
    // the mean log-prob of a draw under its own distribution is minus its cross-entropy: it falls
    // as the temperature flattens the distribution
    const cold = meanLogProb(0.25);
    const one = meanLogProb(1);
    const hot = meanLogProb(4);
    expect(cold).toBeGreaterThan(one);
    expect(one).toBeGreaterThan(hot);
  });

  it.each(['table', 'neural'] as const)(
    '%s: with zero advantages only the entropy bonus moves the policy, and it raises the entropy',
    (policy) => {
      const entropyAfter = (beta: number) => {
        const learner = createExploreLearner({ ...cfg, policy }, new Rng(1));
        const rows = learner.rollout(tasks, 4, 1, new Rng(2), new Rng(3)).map((e) => ({ ...e, score: 0 }));
        const group = Int32Array.from(rows.map((_, i) => Math.floor(i / 4)));
        const before = learner.update(rows, group, terms({ entropyCoef: beta })).entropy;
        const after = learner.update(rows, group, terms()).entropy;
        return { before, after };
      };
      const none = entropyAfter(0);
      const bonus = entropyAfter(0.05);
      expect(none.after).toBeCloseTo(none.before, 12); // no signal, no bonus: no step
      expect(bonus.before).toBeCloseTo(none.before, 12);
      expect(bonus.after).toBeGreaterThan(bonus.before + 1e-4);
    },
  );
});
