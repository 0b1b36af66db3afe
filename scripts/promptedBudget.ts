/**
 * Scripted protocols in the prompted env (src/envs/promptedArithmetic.ts), to choose a truncation
 * budget for the neural policy by the same rule as the tabular truncation default (25): the smallest
 * budget at which a policy that verifies directly beats one that submits directly, under the budget.
 *
 *   npx tsx scripts/promptedBudget.ts [TASKS] [MIN_BUDGET] [MAX_BUDGET]
 *
 * For each budget, prints the success rate under the budget (over TASKS tasks, levels 1..3 uniform,
 * default 20,000) of four scripted protocols: direct (read, k tools, submit), verify (read, k tools,
 * verify, submit), and both with `think_cap` (2) thinks before every tool call; plus the truncation
 * rate of the verify protocol. Same task and tool-noise streams for every protocol and budget.
 */
import {
  PROMPTED_ENV_DEFAULTS,
  runPromptedEpisode,
  samplePromptedTask,
  type TranscriptAgent,
} from '../src/envs/promptedArithmetic.js';
import {
  TOK_ADD,
  TOK_READ,
  TOK_SUB,
  TOK_SUBMIT,
  TOK_THINK,
  TOK_VERIFY,
} from '../src/envs/tokenArithmetic.js';
import { Rng } from '../src/random.js';

const tasks = Number(process.argv[2] ?? 20_000);
const minBudget = Number(process.argv[3] ?? 20);
const maxBudget = Number(process.argv[4] ?? 60);
const buckets = PROMPTED_ENV_DEFAULTS.thinkBuckets;

/** A scripted agent reading the tabular context id: (phase · 2 + verified) · buckets + think bucket. */
function scripted(verify: boolean, thinksPerCall: number): TranscriptAgent {
  return {
    start() {},
    append() {},
    choose(context: number) {
      const bucket = context % buckets;
      const verified = Math.floor(context / buckets) % 2 === 1;
      const phase = Math.floor(context / (2 * buckets));
      if (phase === 0) return TOK_READ;
      if (phase === 1 || phase === 2) {
        if (bucket < Math.min(thinksPerCall, buckets - 1)) return TOK_THINK;
        return phase === 1 ? TOK_ADD : TOK_SUB;
      }
      return verify && !verified ? TOK_VERIFY : TOK_SUBMIT;
    },
  };
}

const protocols = [
  ['direct', scripted(false, 0)],
  ['verify', scripted(true, 0)],
  ['think2+direct', scripted(false, 2)],
  ['think2+verify', scripted(true, 2)],
] as const;

process.stdout.write(`budget | ${protocols.map(([n]) => n).join(' | ')} | verify truncated\n`);
for (let budget = minBudget; budget <= maxBudget; budget++) {
  const success = protocols.map(() => 0);
  let verifyTruncated = 0;
  const taskRng = new Rng(1);
  for (let i = 0; i < tasks; i++) {
    const task = samplePromptedTask(taskRng);
    protocols.forEach(([name, agent], p) => {
      const ep = runPromptedEpisode(task, agent, new Rng(1000 + i), { budget });
      if (ep.status === 'success') success[p] = (success[p] as number) + 1;
      if (name === 'verify' && ep.status === 'truncated') verifyTruncated++;
    });
  }
  const rate = (x: number) => (x / tasks).toFixed(3);
  process.stdout.write(`${budget} | ${success.map(rate).join(' | ')} | ${rate(verifyTruncated)}\n`);
}
