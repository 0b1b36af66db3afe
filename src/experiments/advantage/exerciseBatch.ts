/**
 * The batch of the `advantage` exercise: multi-turn trajectories (model text and tool output) with
 * every group kind, and their [B,T] layout (masks, token rewards, lengths) as verl's kernels take it.
 */
// ---------------------------------------------------------------------------------------------------
// The batch. Each trajectory is a list of turns: model text (mask 1) and tool output (mask 0),
// right-padded to the longest trajectory. The outcome reward sits on the last non-pad token.
// ---------------------------------------------------------------------------------------------------

/** A turn: `m` model tokens or `e` environment (tool output) tokens. */
export type Turn = { m: number } | { e: number };

export interface Trajectory {
  task: string;
  group: string;
  reward: 0 | 1;
  turns: Turn[];
}

const call = (m: number, e: number, answer: number): Turn[] => [{ m }, { e }, { m: answer }];

/** The exercise's batch: every group kind, one task seen in two groups, lengths 4..21. */
export const EXERCISE_BATCH: readonly Trajectory[] = [
  // all wrong: the model never gets 17+25 right, with or without the tool
  { task: 'add 17+25', group: 'u1', reward: 0, turns: call(5, 4, 3) },
  { task: 'add 17+25', group: 'u1', reward: 0, turns: call(6, 4, 2) },
  { task: 'add 17+25', group: 'u1', reward: 0, turns: [{ m: 4 }] },
  { task: 'add 17+25', group: 'u1', reward: 0, turns: [...call(5, 4, 5), { e: 4 }, { m: 2 }] },
  // all right
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: call(5, 3, 2) },
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: call(5, 3, 2) },
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: call(4, 3, 3) },
  { task: 'sub 40-13', group: 'u2', reward: 1, turns: [...call(5, 3, 6), { e: 3 }, { m: 2 }] },
  // mixed, 2 of 4 right
  { task: 'mul 6*7', group: 'u3', reward: 1, turns: call(5, 3, 2) },
  { task: 'mul 6*7', group: 'u3', reward: 0, turns: [{ m: 7 }] },
  { task: 'mul 6*7', group: 'u3', reward: 0, turns: [...call(5, 6, 4), { e: 6 }, { m: 3 }] },
  { task: 'mul 6*7', group: 'u3', reward: 1, turns: call(5, 3, 2) },
  // mixed, 2 of 3 right
  { task: 'add 8+9', group: 'u4', reward: 0, turns: [{ m: 6 }] },
  { task: 'add 8+9', group: 'u4', reward: 1, turns: call(5, 2, 2) },
  { task: 'add 8+9', group: 'u4', reward: 1, turns: call(4, 2, 2) },
  // a group of one (e.g. the others were filtered out)
  { task: 'div 84/4', group: 'u5', reward: 1, turns: call(5, 2, 2) },
  // the hard task again under a second uid: now 1 of 4 right
  { task: 'add 17+25', group: 'u6', reward: 0, turns: call(5, 4, 3) },
  { task: 'add 17+25', group: 'u6', reward: 1, turns: call(5, 4, 2) },
  { task: 'add 17+25', group: 'u6', reward: 0, turns: [{ m: 5 }] },
  { task: 'add 17+25', group: 'u6', reward: 0, turns: call(6, 4, 2) },
];

/** The mistake of the second batch: the easy task's uid overwritten with the hard task's. */
export const MISINDEXED_GROUP = { from: 'u2', to: 'u1' } as const;

/** Token layout of a batch: [B,T] masks of model tokens and of tool tokens, rewards at the last token. */
export interface BatchLayout {
  rows: number;
  cols: number;
  /** 1 on model tokens (verl's response_mask). */
  actionMask: Float32Array;
  /** 1 on tool-output tokens. */
  envMask: Float32Array;
  /** Outcome reward on the last non-pad token, 0 elsewhere ([B,T]). */
  tokenRewards: Float32Array;
  actionTokens: number[];
  envTokens: number[];
  lengths: number[];
}

export function layoutBatch(batch: readonly Trajectory[]): BatchLayout {
  const lengths = batch.map((t) => t.turns.reduce((s, turn) => s + ('m' in turn ? turn.m : turn.e), 0));
  const rows = batch.length;
  const cols = Math.max(...lengths);
  const actionMask = new Float32Array(rows * cols);
  const envMask = new Float32Array(rows * cols);
  const tokenRewards = new Float32Array(rows * cols);
  const actionTokens: number[] = [];
  const envTokens: number[] = [];
  batch.forEach((traj, b) => {
    let t = 0;
    let a = 0;
    let e = 0;
    for (const turn of traj.turns) {
      const n = 'm' in turn ? turn.m : turn.e;
      const target = 'm' in turn ? actionMask : envMask;
      for (let k = 0; k < n; k++) target[b * cols + t + k] = 1;
      t += n;
      if ('m' in turn) a += n;
      else e += n;
    }
    tokenRewards[b * cols + t - 1] = traj.reward;
    actionTokens.push(a);
    envTokens.push(e);
  });
  return { rows, cols, actionMask, envMask, tokenRewards, actionTokens, envTokens, lengths };
}
