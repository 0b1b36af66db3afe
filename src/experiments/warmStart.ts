/**
 * The warm start of the neural policy (`--set policy=neural --set init=sft`): real reasoning RL
 * starts from a supervised model that already solves some tasks some of the time, not from random
 * weights. Before RL, the GRU is pretrained on the scripted demonstrator's transcripts
 * (src/train/demonstrator.ts, src/train/sft.ts), once per seed; every arm of the run starts from
 * the same pretrained parameters, which are cached on disk (src/policy/checkpoint.ts) so other
 * experiments' arms and reruns skip the pretraining.
 *
 * Options (declared here once and spread into the token lab's options; read only with
 * policy=neural): `init`, `init_checkpoint`, `sft_steps`, `sft_batch`, `sft_lr`, one
 * `sft_weight_<behaviour>` per demonstrator behaviour, `sft_cache_dir`. How the defaults were chosen:
 * docs/experiments/neural.md, "Warm start".
 *
 * The cache: `<sft_cache_dir>/sft-<key>.ckpt`, key = the first 16 hex digits of the SHA-256 of
 * (checkpoint format, {@link SFT_CODE_VERSION}, package version, seed, model config, pretraining
 * config, the env options the demonstrations are played in). A file there is trusted only after the
 * checks of `loadCheckpoint` (format, hash, model); a damaged one is an error naming the file, never
 * silently replaced.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { LabError } from '../core/errors.js';
import {
  CHECKPOINT_FORMAT_VERSION,
  checkCheckpointDir,
  loadCheckpoint,
  saveCheckpoint,
} from '../policy/checkpoint.js';
import { Rng } from '../random.js';
import { createSequenceModel, type LearnerConfig } from '../train/armLearners.js';
import { DEMONSTRATOR_BEHAVIOURS, type DemonstratorMixture, mixtureCdf } from '../train/demonstrator.js';
import { pretrainSequenceModel, SFT_CODE_VERSION } from '../train/sft.js';
import { asOptionError, option } from './options.js';
import type { JsonValue } from './types.js';
import { VERSION } from './version.js';

const int = (min: number, max: number) => z.number().int().min(min).max(max);
const num = (min: number, max: number) => z.number().min(min).max(max);
const weight = (value: number, what: string) =>
  option(
    num(0, 1000),
    value,
    `neural init=sft: relative weight of demonstrations that ${what} (>= 0; the weights need not sum to 1, their sum must be > 0)`,
  );

/**
 * The warm-start options. Defaults measured at seeds 1..4 and 7 (docs/experiments/neural.md, "Warm
 * start: measured"): with them the pretrained policy's held-out pass rate is inside [0.1, 0.8] at
 * every level (0.45-0.57 on 1-call tasks, 0.17-0.26 on 3-call tasks) — some tasks solved some of the
 * time, none always. The weights favour `direct` (3 of 8.5) so the correct protocols are the
 * plurality while flawed ones stay common.
 */
export const WARM_START_OPTIONS = {
  init: option(
    z.enum(['scratch', 'sft']),
    'scratch',
    'neural: initial parameters. scratch: random (seeded) | sft: pretrained on scripted demonstrations (cached; see sft_*), as RL starts from an SFT model',
  ),
  init_checkpoint: option(
    z.string(),
    '',
    "neural init=sft: a checkpoint file to start from instead of the cached pretraining ('' = use the cache)",
    'path',
  ),
  sft_steps: option(
    int(0, 100000),
    300,
    'neural init=sft: pretraining steps (Adam, one batch of fresh demonstrations each; 0 = no pretraining). 300: every level lands inside [0.1, 0.8]',
    'steps',
  ),
  sft_batch: option(int(1, 4096), 32, 'neural init=sft: demonstrations per pretraining step', 'transcripts'),
  sft_lr: option(
    num(1e-6, 1),
    0.01,
    "neural init=sft: Adam step size of pretraining (neural_lr's value from scratch, which trains this model stably)",
  ),
  sft_weight_direct: weight(3, 'play read, the right tools, submit'),
  sft_weight_verify: weight(1, 'play read, the right tools, verify, submit'),
  sft_weight_think: weight(1, 'think 1-2 times before each tool call (then verify with probability 1/2)'),
  sft_weight_wrong_tool: weight(1, 'use the wrong tool at one call (then verify with probability 1/2)'),
  sft_weight_extra_call: weight(1, 'make one tool call too many (a protocol error)'),
  sft_weight_missing_call: weight(1, 'submit one tool call too early (a protocol error)'),
  sft_weight_early_submit: weight(0.5, 'submit before reading (a protocol error)'),
  sft_cache_dir: option(
    z.string(),
    'runs/.cache/sft',
    "neural init=sft: directory of cached pretrained checkpoints, relative to the working directory ('' = no cache: pretrain every run)",
    'path',
  ),
} as const;

/**
 * The warm-start keys of a config, and the model and env options the pretraining reads (the token
 * lab's and explore's configs both have them; explore, whose tasks are levels 1..3, passes
 * max_level 3).
 */
export interface WarmStartConfig
  extends Pick<
    LearnerConfig,
    | 'policy'
    | 'observation_logit_init'
    | 'think_buckets'
    | 'tool_error_rate'
    | 'max_operand'
    | 'budget'
    | 'unbounded_budget'
    | 'd_model'
    | 'grad_clip'
    | 'max_level'
    | 'think_decay'
    | 'think_cap'
  > {
  init: 'scratch' | 'sft';
  init_checkpoint: string;
  sft_steps: number;
  sft_batch: number;
  sft_lr: number;
  sft_weight_direct: number;
  sft_weight_verify: number;
  sft_weight_think: number;
  sft_weight_wrong_tool: number;
  sft_weight_extra_call: number;
  sft_weight_missing_call: number;
  sft_weight_early_submit: number;
  sft_cache_dir: string;
}

/**
 * Bumped whenever what a cached checkpoint holds would change for the same options: the
 * demonstrator's scripts, the pretraining loop or loss, the model's parameter layout or init. Part of
 * the cache key, so an old cache entry is never read by new code.
 */
export const WARM_START_CODE_VERSION = `sft-${SFT_CODE_VERSION}`;

/** The demonstrator mixture of a config. */
export function mixtureOf(cfg: WarmStartConfig): DemonstratorMixture {
  return Object.fromEntries(
    DEMONSTRATOR_BEHAVIOURS.map((b) => [b, cfg[`sft_weight_${b}` as keyof WarmStartConfig] as number]),
  ) as unknown as DemonstratorMixture;
}

/**
 * Checks the warm-start options against each other (before anything runs). Errors
 * (BAD_OPTION_VALUE, a usage error): init=sft without policy=neural; init_checkpoint without
 * init=sft; demonstrator weights that do not sum to a positive number (naming them).
 */
export function checkWarmStartOptions(cfg: WarmStartConfig): void {
  const fail = (key: string, why: string) =>
    new LabError('BAD_OPTION_VALUE', `option ${key}: ${why}`, { details: { field: key, key } });
  if (cfg.init === 'sft' && cfg.policy !== 'neural') {
    throw fail('init', 'init=sft pretrains the neural policy: set policy=neural as well');
  }
  if (cfg.init_checkpoint !== '' && cfg.init !== 'sft') {
    throw fail('init_checkpoint', `a checkpoint is read only with init=sft (got init=${cfg.init})`);
  }
  if (cfg.init === 'sft' && cfg.init_checkpoint === '') asOptionError(() => mixtureCdf(mixtureOf(cfg)));
}

/** The cache key of the pretraining `cfg` describes for `seed` (see the file comment). */
export function warmStartKey(cfg: WarmStartConfig, seed: number, model: Record<string, number>): string {
  const identity = {
    checkpoint_format: CHECKPOINT_FORMAT_VERSION,
    code: WARM_START_CODE_VERSION,
    version: VERSION,
    seed,
    model: { ...model, observation_logit_init: cfg.observation_logit_init },
    sft: pretrainingConfig(cfg),
  };
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex').slice(0, 16);
}

/** Everything the pretraining reads, as recorded in the checkpoint's header and hashed into its key. */
function pretrainingConfig(cfg: WarmStartConfig): Record<string, JsonValue> {
  return {
    sft_steps: cfg.sft_steps,
    sft_batch: cfg.sft_batch,
    sft_lr: cfg.sft_lr,
    grad_clip: cfg.grad_clip,
    weights: { ...mixtureOf(cfg) },
    max_operand: cfg.max_operand,
    max_level: cfg.max_level,
    budget: cfg.budget,
    tool_error_rate: cfg.tool_error_rate,
    think_decay: cfg.think_decay,
    think_cap: cfg.think_cap,
  };
}

/** The initial parameters of a warm-started run and where they came from. */
export interface WarmStart {
  params: Float64Array;
  checkpoint: string;
  key: string;
  meta: Record<string, JsonValue>;
}

/**
 * The warm start of `cfg` for `seed`, or null for init=scratch. With `init_checkpoint`, its
 * parameters; else the cached checkpoint of (seed, config) when there is one, else a fresh
 * pretraining from the seed's policy-init parameters (the scratch arms' initial weights), saved to
 * the cache. `onInfo` gets one line saying which (for the CLI's summary; the record does not say
 * it, so a rerun's record is identical). Errors: BAD_OPTION_VALUE (see
 * {@link checkWarmStartOptions}); IO_ERROR / BAD_CHECKPOINT naming the file.
 */
export function warmStart(
  cfg: WarmStartConfig,
  seed: number,
  onInfo?: (line: string) => void,
): WarmStart | null {
  checkWarmStartOptions(cfg);
  if (cfg.init !== 'sft') return null;
  const root = new Rng(seed);
  const model = createSequenceModel(cfg, root.fork('token-lab/policy-init'));
  if (cfg.init_checkpoint !== '') {
    const header = loadCheckpoint(model, cfg.init_checkpoint);
    onInfo?.(`checkpoint: loaded ${cfg.init_checkpoint} (init_checkpoint; no pretraining)`);
    return {
      params: model.params,
      checkpoint: cfg.init_checkpoint,
      key: '',
      meta: header.meta as Record<string, JsonValue>,
    };
  }
  const key = warmStartKey(cfg, seed, { vocab: model.vocab, context: model.context, d_model: model.dModel });
  const file = cfg.sft_cache_dir === '' ? '' : join(cfg.sft_cache_dir, `sft-${key}.ckpt`);
  if (file !== '' && existsSync(file)) {
    const header = loadCheckpoint(model, file);
    onInfo?.(`checkpoint: reused the cached ${file} (pretraining skipped)`);
    return { params: model.params, checkpoint: file, key, meta: header.meta as Record<string, JsonValue> };
  }
  if (file !== '') checkCheckpointDir(cfg.sft_cache_dir); // fail now, not after the pretraining
  const stats = pretrainSequenceModel(
    model,
    {
      steps: cfg.sft_steps,
      batch: cfg.sft_batch,
      lr: cfg.sft_lr,
      gradClip: cfg.grad_clip,
      mixture: mixtureOf(cfg),
      maxOperand: cfg.max_operand,
      maxLevel: cfg.max_level,
      env: {
        budget: cfg.budget,
        toolErrorRate: cfg.tool_error_rate,
        thinkDecay: cfg.think_decay,
        thinkCap: cfg.think_cap,
        thinkBuckets: cfg.think_buckets,
      },
    },
    root.fork('token-lab/sft'),
  );
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN);
  const round = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : null);
  const meta: Record<string, JsonValue> = {
    produced_by: `reasoning-rl-labs ${VERSION} ${WARM_START_CODE_VERSION}`,
    seed,
    key,
    sft: pretrainingConfig(cfg),
    // mean cross-entropy per action token over the first and the last 10 steps
    sft_loss_first: round(mean(stats.losses.slice(0, 10))),
    sft_loss_last: round(mean(stats.losses.slice(-10))),
  };
  if (file !== '') {
    saveCheckpoint(model, file, meta);
    onInfo?.(
      `checkpoint: pretrained (${cfg.sft_steps} steps x ${cfg.sft_batch} demonstrations) and saved to ${file}`,
    );
  } else
    onInfo?.(
      `checkpoint: pretrained (${cfg.sft_steps} steps x ${cfg.sft_batch} demonstrations); not cached (sft_cache_dir '')`,
    );
  return { params: model.params, checkpoint: file, key, meta };
}

function flatten(value: Record<string, JsonValue>, prefix = '', out: Record<string, JsonValue> = {}) {
  for (const [k, v] of Object.entries(value)) {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) flatten(v, `${prefix}${k}.`, out);
    else out[`${prefix}${k}`] = v;
  }
  return out;
}

/**
 * The record's `tables.warm_start` row of a warm start: `init`, the checkpoint file, its cache key
 * and what produced it (the checkpoint's `meta`, nested keys joined with `.`).
 */
export function warmStartRow(w: Pick<WarmStart, 'checkpoint' | 'key' | 'meta'>): Record<string, JsonValue> {
  return { init: 'sft', checkpoint: w.checkpoint, key: w.key, ...flatten(w.meta) };
}
