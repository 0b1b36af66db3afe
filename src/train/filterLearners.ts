/**
 * The two learners of the `filter` experiment behind one interface, so the experiment's loop (which
 * groups to keep, which denominator, which rows get the KL term) is written once:
 *
 * - `agent`: the agent experiment's tool-arithmetic env and [2,3,4] softmax table, one on-policy
 *   REINFORCE step per update (ratio 1, no clip), plain gradient ascent;
 * - `token`: the token lab's env (tool errors, verify, a token budget) and context-tabular policy,
 *   verl's clipped PPO loss over `ppo_epochs` with Adam (the `mask`/`aggregation` learner).
 *
 * Both aggregate the policy-gradient loss by token-mean over the policy's own tokens with an explicit
 * denominator D (verl's `global_batch_info.batch_num_tokens`), so leaving zero-variance groups out of
 * D is one number, and both can add verl's `use_kl_loss` term
 *   beta x (sum over KL-masked tokens of k3(logprob, ref_logprob)) / (number of KL-masked tokens)
 * against the initial policy as the reference. Every random draw comes from streams forked from the
 * seed under labels shared by all arms (common random numbers).
 */
import { LabError } from '../core/errors.js';
import { klPenaltyDerivative } from '../core/klLoss.js';
import {
  contextCount,
  FIRST_OBSERVATION_TOKEN,
  ROLE_MODEL,
  sampleTokenTask,
  type TokenEpisode,
  VOCAB_SIZE,
} from '../envs/tokenArithmetic.js';
import { type Outcome, sampleTasks } from '../envs/toolArithmetic.js';
import { ContextPolicy } from '../policy/contextPolicy.js';
import { accumulateGradLogProb, actionProbs, createLogits, logProb, NUM_LOGITS } from '../policy/tabular.js';
import { Rng } from '../random.js';
import { Optimizer, type OptimizerKind } from './adam.js';
import { evaluationTasks } from './armLearners.js';
import { packBatch } from './batching.js';
import type { Episode } from './episode.js';
import { evaluatePolicy } from './evaluate.js';
import { ascend, collectGroups } from './groupReinforce.js';
import { tabularModel } from './policyModel.js';
import { ppoUpdate } from './ppoUpdate.js';
import { sampleTaskBatch, tokenEnvRollout } from './rollout.js';
import { gatherLogProbs } from './tokenLearner.js';

/** Rows sampled by one call of {@link FilterLearner.sample}: `groups x groupSize` rows, group-major. */
export interface Generated<R> {
  rows: R[];
  /** 1 for a correct final answer, else 0 (the success measure of every arm). */
  success: Float64Array;
  /** Partial credit before noise: 1 success, 0.5 right protocol but wrong answer, 0 otherwise. */
  partial: Float64Array;
  /** Policy tokens (actions) per row: what a token-mean denominator counts. */
  tokens: Float64Array;
}

/** What the filter experiment's loop needs of a policy and its environment. */
export interface FilterLearner<R> {
  /** Samples `groups` tasks x the group size with the current policy. */
  sample(groups: number): Generated<R>;
  /**
   * One update on `rows` with per-row advantages `adv`: the policy-gradient loss summed over the rows'
   * tokens divided by `pgDenominator` (0: no policy-gradient term), plus `beta` x the k3 KL to the
   * reference over the tokens of rows with `klRows[i] = 1`, averaged over those tokens.
   */
  update(rows: R[], adv: Float64Array, pgDenominator: number, klRows: Uint8Array, beta: number): void;
  /** Exact KL(pi || pi_ref) at each policy token's context, averaged over the tokens of `rows`. */
  klToRef(rows: R[]): number;
  /** Held-out success of the current policy (its own seeded tasks, the same for every arm). */
  evaluate(): number;
}

function partialCredit(success: boolean, wrongAnswer: boolean): number {
  return success ? 1 : wrongAnswer ? 0.5 : 0;
}

function klRowCounts(tokens: ArrayLike<number>, klRows: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < klRows.length; i++) if (klRows[i]) n += tokens[i] as number;
  return n;
}

/** KL(p || q) of two distributions given as arrays of equal length (0 log 0 = 0). */
function klDivergence(p: ArrayLike<number>, q: ArrayLike<number>): number {
  let kl = 0;
  for (let j = 0; j < p.length; j++) {
    const pj = p[j] as number;
    if (pj > 0) kl += pj * (Math.log(pj) - Math.log(q[j] as number));
  }
  return kl;
}

// --- agent: tool-arithmetic env, [2,3,4] table, one REINFORCE ascent step per update ------------------

export interface AgentLearnerOptions {
  groupSize: number;
  lr: number;
  evalTasks: number;
}

/** The agent env's learner (see the file header). Reference policy: the initial (uniform) table. */
export function agentLearner(seed: number, o: AgentLearnerOptions): FilterLearner<Episode> {
  const root = new Rng(seed);
  const taskRng = root.fork('filter/agent/train-tasks');
  const pick = root.fork('filter/agent/train-policy');
  const evalTasks = sampleTasks(root.fork('filter/agent/eval-tasks'), o.evalTasks);
  const logits = createLogits();
  const ref = createLogits();
  const grad = new Float64Array(NUM_LOGITS);
  let step = 0;
  return {
    sample(groups) {
      const batch = collectGroups(logits, sampleTasks(taskRng, groups), o.groupSize, pick);
      const n = batch.episodes.length;
      const partial = new Float64Array(n);
      const tokens = new Float64Array(n);
      batch.episodes.forEach((e, i) => {
        partial[i] = partialCredit(e.outcome === 'success', e.outcome === ('wrong_answer' as Outcome));
        tokens[i] = e.steps.length;
      });
      return { rows: batch.episodes, success: Float64Array.from(batch.rewards), partial, tokens };
    },
    update(rows, adv, pgDenominator, klRows, beta) {
      step++;
      grad.fill(0);
      if (pgDenominator > 0) {
        rows.forEach((e, i) => {
          const a = adv[i] as number;
          if (a === 0) return;
          for (const s of e.steps)
            accumulateGradLogProb(logits, s.kind, s.stage, s.action, a / pgDenominator, grad);
        });
      }
      const klTokens = klRowCounts(
        rows.map((e) => e.steps.length),
        klRows,
      );
      if (beta > 0 && klTokens > 0) {
        rows.forEach((e, i) => {
          if (!klRows[i]) return;
          for (const s of e.steps) {
            const lp = logProb(logits, s.kind, s.stage, s.action);
            const rf = logProb(ref, s.kind, s.stage, s.action);
            const dk = klPenaltyDerivative(lp - rf, 'low_var_kl');
            // ascent on J = PG - beta x KL: the KL term enters with a minus sign
            accumulateGradLogProb(logits, s.kind, s.stage, s.action, (-beta * dk) / klTokens, grad);
          }
        });
      }
      ascend(logits, grad, o.lr);
      const bad = logits.findIndex((z) => !Number.isFinite(z));
      if (bad >= 0) {
        throw new LabError(
          'NON_FINITE',
          `update ${step}: lr=${o.lr} pushed logit ${bad} to ${logits[bad]}; use a smaller lr`,
          { details: { field: 'lr', value: o.lr, update: step } },
        );
      }
    },
    klToRef(rows) {
      let sum = 0;
      let n = 0;
      for (const e of rows) {
        for (const s of e.steps) {
          sum += klDivergence(actionProbs(logits, s.kind, s.stage), actionProbs(ref, s.kind, s.stage));
          n++;
        }
      }
      return n === 0 ? 0 : sum / n;
    },
    evaluate() {
      return evaluatePolicy(logits, evalTasks, root.fork('filter/agent/eval'), 'sample').success;
    },
  };
}

// --- token: token-arithmetic env, context table, PPO epochs with Adam ---------------------------------

/** The token learner's options: the token lab's config keys it reads (env, optimizer, PPO, evaluation). */
export interface TokenLearnerOptions {
  budget: number;
  tool_error_rate: number;
  think_buckets: number;
  observation_logit_init: number;
  max_operand: number;
  optimizer: OptimizerKind;
  lr: number;
  group_size: number;
  ppo_epochs: number;
  clip_ratio: number;
  eval_tasks: number;
}

/** The token env's learner (see the file header). Reference policy: the initial ("pretrained") table. */
export function tokenLearner(seed: number, cfg: TokenLearnerOptions): FilterLearner<TokenEpisode> {
  const root = new Rng(seed);
  const taskRng = root.fork('filter/token/train-tasks');
  const pick = root.fork('filter/token/train-policy');
  const noise = root.fork('filter/token/train-noise');
  const env = { budget: cfg.budget, toolErrorRate: cfg.tool_error_rate, thinkBuckets: cfg.think_buckets };
  const init = Array.from({ length: VOCAB_SIZE }, (_, v) =>
    v >= FIRST_OBSERVATION_TOKEN ? cfg.observation_logit_init : 0,
  );
  const contexts = contextCount(cfg.think_buckets);
  const policy = new ContextPolicy(contexts, VOCAB_SIZE, { tokenLogits: init });
  const refPolicy = new ContextPolicy(contexts, VOCAB_SIZE, { tokenLogits: init });
  const refLogTable = refPolicy.logProbabilities();
  const refProbs = refPolicy.probabilities();
  const optimizer = new Optimizer(policy.logits.length, { kind: cfg.optimizer, learningRate: cfg.lr });
  const model = tabularModel(policy);
  return {
    sample(groups) {
      const tasks = sampleTaskBatch(taskRng, groups, (r) => sampleTokenTask(r, cfg.max_operand));
      const rows = tokenEnvRollout(policy.probabilities(), tasks, cfg.group_size, pick, noise, env);
      const success = Float64Array.from(rows, (e) => (e.status === 'success' ? 1 : 0));
      const partial = Float64Array.from(rows, (e) =>
        partialCredit(e.status === 'success', e.status === 'wrong_answer'),
      );
      const tokens = Float64Array.from(rows, (e) => e.modelTokens);
      return { rows, success, partial, tokens };
    },
    update(rows, adv, pgDenominator, klRows, beta) {
      // per-row advantages (the experiment's own), so packing and the mask only, no GRPO here
      const { batch, mask } = packBatch(rows);
      const { cols } = batch.shape;
      const advTok = new Float32Array(mask.length);
      const klMask = new Float64Array(mask.length);
      let klTokens = 0;
      for (let b = 0; b < rows.length; b++) {
        for (let t = 0; t < cols; t++) {
          const m = mask[b * cols + t] as number;
          advTok[b * cols + t] = m * (adv[b] as number);
          if (klRows[b] && m) {
            klMask[b * cols + t] = 1;
            klTokens++;
          }
        }
      }
      const old = gatherLogProbs(policy.logProbabilities(), VOCAB_SIZE, batch); // the sampling policy
      const ref = gatherLogProbs(refLogTable, VOCAB_SIZE, batch);
      const loss = { lossAggMode: 'token-mean' as const, clipRatio: cfg.clip_ratio };
      ppoUpdate(
        model,
        optimizer,
        { batch, mask, advantages: advTok, oldLogProb: old },
        {
          epochs: cfg.ppo_epochs,
          // a denominator of 0 (every group left out of it): no policy-gradient term, the KL term alone
          policyGradient: pgDenominator > 0,
          loss: pgDenominator > 0 ? { ...loss, agg: { batchNumTokens: pgDenominator } } : loss,
          // k3 over the KL rows' tokens, token-mean with its own denominator, its own backward pass
          klLoss:
            beta > 0 && klTokens > 0
              ? { coef: beta, type: 'low_var_kl', refLogProb: ref, own: { mask: klMask, tokens: klTokens } }
              : null,
        },
      );
    },
    klToRef(rows) {
      const probs = policy.probabilities();
      const perContext = new Float64Array(contexts);
      for (let c = 0; c < contexts; c++) {
        perContext[c] = klDivergence(
          probs.subarray(c * VOCAB_SIZE, (c + 1) * VOCAB_SIZE),
          refProbs.subarray(c * VOCAB_SIZE, (c + 1) * VOCAB_SIZE),
        );
      }
      let sum = 0;
      let n = 0;
      for (const e of rows) {
        e.roles.forEach((role, i) => {
          if (role !== ROLE_MODEL) return;
          sum += perContext[e.contexts[i] as number] as number;
          n++;
        });
      }
      return n === 0 ? 0 : sum / n;
    },
    evaluate() {
      const evalRoot = new Rng(seed);
      const eps = tokenEnvRollout(
        policy.probabilities(),
        evaluationTasks(seed, { ...cfg }),
        1,
        evalRoot.fork('filter/token/eval-policy'),
        evalRoot.fork('filter/token/eval-noise'),
        env,
      );
      // the success rate as the token lab's measureEpisodes computes it: successes / episodes
      return eps.filter((e) => e.status === 'success').length / eps.length;
    },
  };
}
