/**
 * The options of the `explore` experiment (declared once, docs/architecture.md §7) and its parsed
 * config type, apart from the experiment so that its sections (exploreSections.ts) can read the type.
 */
import { z } from 'zod';
import { LOSS_AGG_MODES, type LossAggMode } from '../../core/aggLoss.js';
import { D_MODEL_RANGE } from '../../policy/sequenceModel.js';
import { defineOptions, option } from '../options.js';
import { WARM_START_OPTIONS } from '../warmStart.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const num = (min: number, max: number) => z.number().min(min).max(max);
const SECTIONS = ['levers', 'task_classes', 'curriculum'] as const;
export type Section = (typeof SECTIONS)[number];

// --- config -----------------------------------------------------------------------------------------
// The default run is the design with the table policy: the full 4 x 4 lever grid (tau
// {0.7, 1, 1.5, 2} x beta {0, 0.001, 0.01, 0.05} x IS on/off), 40 updates per arm; about 9 s of
// CPU for seed 7 (the 3 x 3 grid it replaced took about 7 s). Env and learner defaults are the
// token lab's (tokenLab.ts).
export const EXPLORE_OPTIONS = defineOptions({
  policy: option(
    z.enum(['table', 'neural']),
    'table',
    'table: logits per tabular context (the control: nothing shared) | neural: GRU reading the transcript (shared parameters)',
  ),
  sections: option(
    z.array(z.enum(SECTIONS)).min(1),
    [...SECTIONS],
    'which sections to run: levers, task_classes, curriculum (JSON list)',
  ),
  updates: option(int(1, 10000), 40, 'policy updates per arm (one rollout batch each)'),
  tasks_per_update: option(int(1, 1000), 8, 'tasks per batch (groups)'),
  group_size: option(int(2, 256), 8, 'samples per task (GRPO group size G)'),
  ppo_epochs: option(int(1, 50), 2, 'PPO epochs per batch (verl ppo_epochs)'),
  clip_ratio: option(num(0, 10), 0.2, 'PPO clip_ratio (verl default 0.2)'),
  loss_agg_mode: option(
    z.enum(LOSS_AGG_MODES as [LossAggMode, ...LossAggMode[]]),
    'token-mean',
    "verl loss_agg_mode of the policy loss and the entropy term (verl's token-mean)",
  ),
  lr: option(num(1e-6, 100), 0.05, 'table: Adam step size on the logits (the token lab default)'),
  // from the warm start the token lab's default, 0.001 (chosen on the mask runs of
  // docs/findings/warm-start.json before any explore run from the warm start, not tuned here)
  neural_lr: option(num(1e-6, 1), 0.01, 'neural: Adam step size (the token lab default)', '', {
    when: { option: 'init', equals: 'sft' },
    value: 0.001,
  }),
  d_model: option(int(D_MODEL_RANGE.min, D_MODEL_RANGE.max), 32, 'neural: GRU width'),
  grad_clip: option(num(1e-6, 1e6), 1, 'neural: global gradient-norm bound (verl actor.grad_clip)'),
  budget: option(int(4, 1000), 48, 'token budget per transcript', 'tokens'),
  tool_error_rate: option(num(0, 1), 0.3, 'slip chance of a tool call with no think', 'probability'),
  think_decay: option(num(0, 1), 0.5, "each helpful think multiplies the next call's slip chance by this"),
  think_cap: option(int(0, 10), 2, 'thinks since the last call that help'),
  think_buckets: option(int(1, 10), 3, 'think-count buckets in the tabular context'),
  max_operand: option(int(0, 1e6), 99, 'operands uniform in [0, max_operand]'),
  observation_logit_init: option(num(-20, 5), -3, 'initial logit of observation tokens (the prior)', 'logit'),
  eval_per_level: option(
    int(1, 100000),
    40,
    'fixed evaluation tasks per level (1, 2, 3), one tau = 1 sample each',
  ),
  // (a) levers
  temperatures: option(
    z.array(z.number().positive().finite()).min(1),
    [0.7, 1, 1.5, 2],
    'sampling temperatures tau > 0 of the levers grid (JSON list; default: the issue grid)',
  ),
  entropy_coefs: option(
    z.array(z.number().min(0).finite()).min(1),
    [0, 0.001, 0.01, 0.05],
    'entropy bonus coefficients beta >= 0 (verl entropy_coeff; JSON list; default: the issue grid)',
  ),
  // (b) task classes
  pool_per_level: option(int(1, 1000), 6, 'tasks per level in the task-class pool'),
  class_samples: option(int(1, 10000), 32, 'samples per task to measure a pass rate (init and end)'),
  candidate_factor: option(
    int(1, 16),
    2,
    'more_candidates arm: group size x this for sometimes-solved tasks',
  ),
  hot_temperature: option(
    z.number().positive().finite(),
    1.5,
    'temperature_up arm: sampling tau (IS-corrected)',
  ),
  sft_coef: option(num(0, 100), 0.1, 'demonstrations arm: weight of the supervised NLL term'),
  demo_tasks: option(
    int(0, 1000),
    4,
    'demonstrations arm: never-solved tasks given one expert transcript each',
  ),
  // init=sft: every arm starts from the supervised warm start (warmStart.ts), the same pretraining
  // (and cache entry) as the token lab's at the same seed and options: explore's model and env are
  // the mask/aggregation ones (budget 48, levels 1..3)
  ...WARM_START_OPTIONS,
  // (c) curriculum
  eval_every: option(int(1, 10000), 10, 'curriculum: evaluate the fixed set every this many updates'),
  schedule: option(
    z.array(int(1, 3)).min(1),
    [1, 2, 3],
    'curriculum: levels of the staged arms in order, equal blocks of updates (levels exist: 1, 2, 3)',
  ),
  replay_fractions: option(
    z.array(num(0, 1)).min(1),
    [0.1, 0.3],
    "curriculum: replay fractions in [0, 1] of the staged-with-replay arms (earlier stages' levels)",
  ),
});

export type ExploreConfig = z.output<typeof EXPLORE_OPTIONS>;
