/**
 * One episode of the tool-arithmetic env played by the tabular policy: the data unit of every learner
 * that uses this env (group REINFORCE here, the async rollout simulation of the rollout experiment).
 *
 * Each step records the observation (kind, stage), the action and the behaviour log-prob
 * log pi_behaviour(action | kind, stage) under the logits the episode was sampled with, so a learner
 * that trains on it later (with newer logits) can form the true probability ratio.
 */
import { LabError } from '../core/errors.js';
import {
  type Action,
  type EnvState,
  isCoincidentalSuccess,
  MAX_STEPS,
  type Outcome,
  reset,
  type Stage,
  step,
  type Task,
  type TaskKind,
} from '../envs/toolArithmetic.js';
import { greedyAction, logProb, sampleAction } from '../policy/tabular.js';
import type { Rng } from '../random.js';

export interface EpisodeStep {
  kind: TaskKind;
  stage: Stage;
  action: Action;
  /** log pi(action | kind, stage) under the logits that sampled the episode (0 for greedy). */
  logProb: number;
}

export interface Episode {
  task: Task;
  steps: EpisodeStep[];
  reward: 0 | 1;
  outcome: Outcome;
  /** The tool whose output was held at the end (null when no tool ran). */
  tool: Action | null;
  /** Success with the wrong tool (only possible for b = 0). */
  coincidental: boolean;
}

/** `sample`: actions drawn from the policy (on-policy training, the course's eval); `greedy`: argmax. */
export type ActionSelection = 'sample' | 'greedy';

/**
 * Plays `task` to the end with the policy `logits` (length 24, validated by the caller once per batch
 * with `checkLogits`). `sample` uses one draw from `rng` per step; `greedy` draws nothing and records
 * logProb 0 (a deterministic policy's log-prob of its own action).
 */
export function rolloutEpisode(
  logits: ArrayLike<number>,
  task: Task,
  rng: Rng,
  selection: ActionSelection = 'sample',
): Episode {
  let state: EnvState = reset(task);
  const steps: EpisodeStep[] = [];
  for (let t = 0; t < MAX_STEPS; t++) {
    const { stage } = state;
    const kind = task.kind;
    const action =
      selection === 'sample' ? sampleAction(logits, kind, stage, rng) : greedyAction(logits, kind, stage);
    const lp = selection === 'sample' ? logProb(logits, kind, stage, action) : 0;
    steps.push({ kind, stage, action, logProb: lp });
    const result = step(state, action);
    state = result.state;
    if (result.done) {
      const outcome = result.outcome as Outcome;
      return {
        task,
        steps,
        reward: result.reward,
        outcome,
        tool: state.tool,
        coincidental: isCoincidentalSuccess(task, outcome, state.tool),
      };
    }
  }
  // Unreachable: every path through the env ends by step 3 (tested); kept as a loud guard.
  throw new LabError('BAD_ARGUMENT', `rolloutEpisode: episode exceeded ${MAX_STEPS} steps`, {
    details: { field: 'task' },
  });
}
