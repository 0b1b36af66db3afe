/**
 * The options of `labs run --experiment clip` (clip.ts) and its config type. In their own file because
 * the experiment (clip.ts) and its tests need `ClipConfig`; the learner (src/train/clipLab.ts) reads
 * the keys it needs through its own `ClipLabConfig`, which `ClipConfig` satisfies.
 */
import { z } from 'zod';
import { KL_PENALTY_NAMES, type KlPenaltyName } from '../../core/kl.js';
import { defineOptions, option } from '../options.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const num = (min: number, max: number) => z.number().min(min).max(max);
const list = <T extends z.ZodType>(item: T) => z.array(item).min(1).max(12);

export const CLIP_OPTIONS = defineOptions({
  policy: option(
    z.enum(['table']),
    'table',
    "policy the sweep updates: table (the token lab's 36-context softmax table); the neural policy is not wired in yet",
  ),
  clip_ratios: option(
    list(num(0.001, 10)),
    [0.05, 0.1, 0.2, 0.3],
    "symmetric clip ratios ε swept (verl clip_ratio; verl's default 0.2)",
  ),
  include_no_clip: option(z.boolean(), true, 'also sweep the unclipped surrogate (clip "none")'),
  clip_ratio_high: option(
    num(0, 10),
    0.28,
    "clip-higher arm: clip_ratio_low 0.2, clip_ratio_high this (DAPO's 0.28); 0 leaves the arm out",
  ),
  clip_ratio_c: option(
    z.number().gt(1).max(100),
    3,
    "dual-clip bound c for negative advantages (verl's default 3); 'off' uses a c that never binds",
  ),
  dual_clip: option(
    z.enum(['both', 'on', 'off']),
    'both',
    'sweep dual clip on and off (both), or only one; the headline slice uses on unless off',
  ),
  ppo_epochs: option(
    list(int(1, 64)),
    [1, 2, 4, 8, 16, 32],
    'PPO epochs measured (verl ppo_epochs); one run to the largest, measured at each',
  ),
  mini_batches: option(
    list(int(1, 64)),
    [1, 4],
    'mini-batches per epoch (verl: batch / ppo_mini_batch_size); each is one optimizer step',
  ),
  optimizers: option(
    list(z.enum(['adam', 'sgd'])),
    ['adam', 'sgd'],
    'optimizers swept (fresh state per arm); adam steps ~lr per logit whatever the loss scale',
  ),
  // adam 0.05: the token lab's learner; 0.01: a 5x smaller step, to see the clip at another step size.
  adam_lrs: option(
    list(num(1e-5, 10)),
    [0.05, 0.01],
    "Adam learning rates (0.05 is the token lab's default)",
  ),
  // sgd 5 gives about the same first-step true KL as adam 0.05 on these batches (seed 7: 9.8e-4 vs 7.2e-4);
  // 20 is a large step whose first epoch already leaves the band.
  sgd_lrs: option(
    list(num(1e-5, 1000)),
    [20, 5],
    'SGD learning rates (the token-mean loss gradient per logit is small: ~1/(tokens per context))',
  ),
  // 2 batches keep the default run at seconds (each arm x batch is 32 epochs); across seeds the batches vary anyway.
  batches: option(int(1, 16), 2, 'fixed rollout batches per seed; sweep rows are means over them'),
  warmup_updates: option(
    int(0, 1000),
    25,
    'updates of the standard learner before the fixed batches are drawn (25: training success ~0.4, mid-training)',
  ),
  train_ppo_epochs: option(
    int(1, 64),
    2,
    'PPO epochs per update of the warm-up and of the reference-KL runs (the token lab default)',
  ),
  train_lr: option(num(1e-5, 10), 0.05, 'Adam learning rate of the warm-up and the reference-KL runs'),
  train_clip_ratio: option(num(0.001, 10), 0.2, 'clip ratio of the warm-up and the reference-KL runs'),
  ref_updates: option(
    int(1, 10000),
    150,
    'updates of each reference-KL training run (the token lab default)',
  ),
  // 0.1 and 0.3: verl's default 0.001 (and 0.01) left the KL to the reference unchanged within noise on
  // this policy (seed 7: 1.86 vs 1.75 without); 0.3 halves it, 1 collapses held-out success (0.09).
  kl_loss_coefs: option(
    list(num(1e-6, 100)),
    [0.1, 0.3],
    "verl kl_loss_coef values of the reference-KL arm, each also run against 0 (verl's default 0.001 barely moves this table policy)",
  ),
  kl_loss_type: option(
    z.enum(KL_PENALTY_NAMES as [KlPenaltyName, ...KlPenaltyName[]]),
    'low_var_kl',
    "verl kl_loss_type (low_var_kl = k3, verl's recommended choice for GRPO)",
  ),
  // 1.2: a common rollout temperature above 1; 1.5 gave 91% of sampled tokens outside the band (seed 7).
  temperature: option(
    num(0.05, 10),
    1.2,
    'sampling temperature of the behaviour-shift arm (pi_old stays the temperature-1 policy, as when the trainer recomputes log-probs without the rollout temperature)',
  ),
  // 4 updates: the eta = 4 row of the rollout experiment's knobs (AReaL's max_head_offpolicyness; its unbounded mean lag is ~5).
  stale_lag: option(
    int(1, 100),
    4,
    'behaviour-shift arm: samples drawn by the policy this many updates before pi_old',
  ),
  tasks_per_update: option(int(1, 1000), 16, 'tasks per batch (groups)'),
  group_size: option(int(2, 256), 8, 'samples per task (GRPO group size G)'),
  budget: option(int(4, 1000), 48, 'token budget per transcript, model + env tokens'),
  tool_error_rate: option(num(0, 1), 0.3, 'probability that add/sub returns a wrong number'),
  think_buckets: option(int(1, 10), 3, 'think-count buckets in the policy context'),
  max_operand: option(int(0, 1e6), 99, 'operands uniform in [0, max_operand]'),
  observation_logit_init: option(
    num(-20, 5),
    -3,
    'initial logit of each observation token (the "pretrained" prior; also the reference policy)',
  ),
  eval_tasks: option(int(1, 100000), 400, 'held-out tasks of the reference-KL runs, one sample each'),
});

/** What `run` receives: snake_case, every option present, already validated. */
export type ClipConfig = z.output<typeof CLIP_OPTIONS>;
