/**
 * One arm of a token-lab experiment per seed, with its held-out success per level before RL (the
 * warm start's pass rate, init=sft) and after RL: the measurement behind docs/experiments/neural.md,
 * "Warm start: measured", at the cost of one arm instead of all of them.
 *
 *   npx tsx scripts/warmStartArm.ts SEEDS [key=value ...]
 *   npx tsx scripts/warmStartArm.ts 1,2,3,4 policy=neural init=sft neural_lr=0.001
 *
 * The config is the `mask` experiment's (`--set` pairs as given; defaults otherwise) and the arm its
 * `correct` one (model-token mask, token-mean, zero-score truncation). An arm draws every stream
 * from the seed by label and shares no state with other arms, so these are the numbers of
 * `labs run --experiment mask` for that arm (`eval_success_level_<k>.correct`,
 * `pretrain_pass_rate.level_<k>`), bit for bit. Prints one line per seed; where the warm start came
 * from goes first (the cache of init=sft is used and filled as by `labs run`).
 */
import { mask } from '../src/experiments/mask/mask.js';
import { resolveConfig } from '../src/experiments/options.js';
import { runArms, type TokenLabConfig } from '../src/experiments/tokenLab.js';

const [seedList, ...sets] = process.argv.slice(2);
if (!seedList) {
  process.stderr.write('usage: npx tsx scripts/warmStartArm.ts SEEDS [key=value ...]\n');
  process.exit(2);
}
const cfg = resolveConfig(mask, sets) as TokenLabConfig;
const rates = (xs: readonly { success: number }[] | undefined) =>
  xs ? xs.map((l) => l.success.toFixed(3)).join(' ') : '-';
process.stdout.write(
  `seed  before RL (level 1 2 3)  after RL (level 1 2 3)  eval_success  [${sets.join(' ')}]\n`,
);
for (const seed of seedList.split(',').map(Number)) {
  const [arm] = runArms(
    [{ arm: 'correct', maskRule: 'model_tokens', lossAggMode: 'token-mean', truncation: 'zero_score' }],
    cfg,
    seed,
    undefined,
    (line) => process.stdout.write(`${line}\n`),
  );
  if (!arm) continue;
  process.stdout.write(
    `${seed}  ${rates(arm.warmStart?.before)}  ${rates(arm.evaluationByLevel)}  ${arm.evaluation.success.toFixed(3)}\n`,
  );
}
