/**
 * Rankers of the `saturation` experiment: quality scores q that tell apart the passes of an
 * all-right group (see core/advantageRedistribution.ts for what q becomes).
 *
 * - `shorter`: q = −length (tokens, model + environment). Fewer tokens is better.
 * - `verified`: q = 1 if the trajectory executed `verify`, else 0.
 * - `random`: q uniform in [0, 1) from a seeded stream — a control: a gradient with no information.
 * - `rubric`: a simple groupwise reward synthesis ({@link Rubric}): per task kind, features that
 *   separate passes from fails in the mixed groups seen so far, weighted by how well they separate.
 *
 * A teaching construction after the ideas the MiMo-V2.6-Flash RL model card names (Groupwise Reward
 * Synthesis, Groupwise Advantage Redistribution); the card gives no formulas, this is not its system.
 */
import type { TaskKindName, TokenEpisode } from '../envs/tokenArithmetic.js';
import { ROLE_MODEL, TOK_ADD, TOK_READ, TOK_SUB, TOK_VERIFY } from '../envs/tokenArithmetic.js';
import type { Rng } from '../random.js';

export const RANKER_NAMES = ['shorter', 'verified', 'random', 'rubric'] as const;
export type RankerName = (typeof RANKER_NAMES)[number];

/** The rubric's features, in this order. */
export const RUBRIC_FEATURES = ['verified', 'tool_calls', 'thinks', 'length'] as const;
export type RubricFeature = (typeof RUBRIC_FEATURES)[number];
const F = RUBRIC_FEATURES.length;

/**
 * The features of a trajectory, in {@link RUBRIC_FEATURES} order: verified (0/1), tool calls (model
 * tokens `read`, `add`, `sub`, `verify`), thinks (think tokens) and length (all tokens).
 */
export function trajectoryFeatures(
  ep: Pick<TokenEpisode, 'verified' | 'tokens' | 'roles' | 'thinkTokens'>,
): Float64Array {
  let toolCalls = 0;
  for (let i = 0; i < ep.tokens.length; i++) {
    if (ep.roles[i] !== ROLE_MODEL) continue;
    const t = ep.tokens[i] as number;
    if (t === TOK_READ || t === TOK_ADD || t === TOK_SUB || t === TOK_VERIFY) toolCalls++;
  }
  return Float64Array.of(ep.verified ? 1 : 0, toolCalls, ep.thinkTokens, ep.tokens.length);
}

/** Running sums of one task kind's mixed groups. */
interface RubricSums {
  groups: number;
  /** Σ over mixed groups of (mean feature over passes − mean over fails), per feature. */
  contrast: Float64Array;
  trajectories: number;
  sum: Float64Array;
  sumSq: Float64Array;
}

/**
 * Groupwise reward synthesis, per task kind (tasks never repeat — operands are drawn fresh — so the
 * kind, add or sub, is the unit a rubric is built for). From every mixed group seen so far:
 *
 *   d_f = mean over mixed groups g of ( mean_{passes of g} f − mean_{fails of g} f )
 *   s_f = population std of f over every trajectory of those groups
 *   w_f = d_f / s_f   (0 when s_f = 0: a feature that never varies separates nothing)
 *
 * w_f is a standardised within-group contrast (an effect size: how many feature-stds passes sit
 * above fails). A pass of an all-right group is scored q = Σ_f w_f · f / s_f (each feature in its own
 * std units, weighted by how well it separates). Before any mixed group every w is 0 and every q
 * ties, which the redistribution turns into 0.
 */
export class Rubric {
  private readonly kinds = new Map<TaskKindName, RubricSums>();

  /** Adds a group (its passes and features) if it is mixed; all-right and all-wrong groups teach nothing. */
  observeGroup(kind: TaskKindName, passed: readonly boolean[], features: readonly Float64Array[]): void {
    const passes = passed.filter(Boolean).length;
    const fails = passed.length - passes;
    if (passes === 0 || fails === 0) return;
    let s = this.kinds.get(kind);
    if (!s) {
      s = {
        groups: 0,
        contrast: new Float64Array(F),
        trajectories: 0,
        sum: new Float64Array(F),
        sumSq: new Float64Array(F),
      };
      this.kinds.set(kind, s);
    }
    s.groups++;
    for (let f = 0; f < F; f++) {
      let p = 0;
      let q = 0;
      features.forEach((x, i) => {
        const v = x[f] as number;
        if (passed[i]) p += v;
        else q += v;
        s.sum[f] = (s.sum[f] as number) + v;
        s.sumSq[f] = (s.sumSq[f] as number) + v * v;
      });
      s.contrast[f] = (s.contrast[f] as number) + p / passes - q / fails;
    }
    s.trajectories += passed.length;
  }

  /** Mixed groups seen so far for `kind`. */
  groupsSeen(kind: TaskKindName): number {
    return this.kinds.get(kind)?.groups ?? 0;
  }

  /** Per feature: weight w_f and scale s_f of `kind` (all 0 before its first mixed group). */
  weights(kind: TaskKindName): { weight: Float64Array; scale: Float64Array } {
    const weight = new Float64Array(F);
    const scale = new Float64Array(F);
    const s = this.kinds.get(kind);
    if (!s) return { weight, scale };
    for (let f = 0; f < F; f++) {
      const mean = (s.sum[f] as number) / s.trajectories;
      const variance = Math.max(0, (s.sumSq[f] as number) / s.trajectories - mean * mean);
      const sd = Math.sqrt(variance);
      // below 1e-9 the "variation" is rounding of Σf² − n·mean²: the feature did not vary
      if (sd > 1e-9) {
        scale[f] = sd;
        weight[f] = (s.contrast[f] as number) / s.groups / sd;
      }
    }
    return { weight, scale };
  }

  /** q = Σ_f w_f · f / s_f for one trajectory's features. */
  score(kind: TaskKindName, features: Float64Array): number {
    const { weight, scale } = this.weights(kind);
    let q = 0;
    for (let f = 0; f < F; f++)
      if ((scale[f] as number) > 0)
        q += ((weight[f] as number) * (features[f] as number)) / (scale[f] as number);
    return q;
  }

  /** An independent copy (each arm of an experiment continues its own rubric from a shared start). */
  clone(): Rubric {
    const r = new Rubric();
    for (const [k, s] of this.kinds) {
      r.kinds.set(k, {
        groups: s.groups,
        contrast: s.contrast.slice(),
        trajectories: s.trajectories,
        sum: s.sum.slice(),
        sumSq: s.sumSq.slice(),
      });
    }
    return r;
  }
}

/**
 * The quality scores of one group's trajectories under `ranker` (length = the group's size).
 * `random` draws one uniform per trajectory from `rng`; `rubric` reads `rubric` (see {@link Rubric}).
 */
export function rankerScores(
  ranker: RankerName,
  episodes: readonly TokenEpisode[],
  rng: Rng,
  rubric: Rubric,
): Float64Array {
  return Float64Array.from(episodes, (ep) => {
    switch (ranker) {
      case 'shorter':
        return -ep.tokens.length;
      case 'verified':
        return ep.verified ? 1 : 0;
      case 'random':
        return rng.next();
      case 'rubric':
        return rubric.score(ep.task.kind, trajectoryFeatures(ep));
    }
  });
}
