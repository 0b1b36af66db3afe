/**
 * The training–inference corrections of frameworks other than verl, as one table: TRL's four
 * `vllm_importance_sampling_mode`s (trlVllmIs.ts) and OpenRLHF's three `is_correction_type`s
 * (openrlhfVllmIs.ts), each with the framework's own mode name, its parameters under the framework's
 * own config names with their defaults, the code it reproduces and a `run` that applies it to a batch.
 * A what-if specification such as `trl:sequence_mask,vllm_importance_sampling_clip_max=2` is read by
 * {@link findExtraCorrectionMode} (the `framework:name` part) and {@link resolveExtraCorrectionParams}
 * (the `key=value` parts, strings as typed on a command line); verl's own modes are not here, they take
 * verl's config names (`rollout_is`, `rollout_rs`, ...) through rolloutCorrection.ts.
 *
 * Every `run` returns the same {@link FrameworkCorrectionResult}: the applied `[B,T]` weights, the mask
 * after rejections, the framework's own metrics under its own names (`metricNames`) and the
 * verl-definition summary (correctionSummary.ts) that makes one comparable row per correction.
 */
import type { Shape2 } from './batch.js';
import type { FrameworkCorrectionResult } from './correctionSummary.js';
import { LabError } from './errors.js';
import {
  OPENRLHF_IS_CORRECTION_TYPES,
  OPENRLHF_IS_DEFAULTS,
  type OpenRlhfIsCorrectionType,
  openrlhfIsProblem,
  openrlhfVllmImportanceSampling,
} from './openrlhfVllmIs.js';
import type { RolloutLogProbs } from './rolloutCorrection.js';
import {
  TRL_VLLM_IS_DEFAULTS,
  TRL_VLLM_IS_MODES,
  type TrlVllmIsMode,
  trlVllmImportanceSampling,
  trlVllmIsProblem,
} from './trlVllmIs.js';

/** The frameworks whose corrections the table holds. */
export type CorrectionFramework = 'trl' | 'openrlhf';

/** One parameter of a correction mode. */
export interface ExtraCorrectionParam {
  /** The framework's own name: a TRL `GRPOConfig` field, or OpenRLHF's flag without `--algo.advantage.`. */
  name: string;
  /** Other accepted spellings: short forms and the framework's deprecated or older names. */
  aliases: readonly string[];
  /** The framework's default; null is the framework's None (no bound). */
  default: number | null;
  /** Whether null (`null` / `none` on a command line) is accepted. */
  nullable: boolean;
  doc: string;
}

/** A parameter that sets two others at once, like OpenRLHF's `is_correction_threshold LOW HIGH`. */
export interface ExtraCorrectionPairParam {
  name: string;
  aliases: readonly string[];
  /** The two parameters it sets, in order. */
  sets: readonly [string, string];
  doc: string;
}

/** One correction mode of one framework. */
export interface ExtraCorrectionMode {
  /** `framework:name`, e.g. `trl:sequence_mask`, `openrlhf:seq-mask-tis`. */
  id: string;
  framework: CorrectionFramework;
  /** The framework's own name of the mode. */
  name: string;
  /** The framework setting that selects the mode, as written in its config or command line. */
  selectedBy: string;
  /** Whether it is the framework's default mode. */
  isDefault: boolean;
  /** One line: what the mode does. */
  doc: string;
  /** Repository, commit, file and function reproduced. */
  citation: string;
  params: readonly ExtraCorrectionParam[];
  /** Parameters that set two of `params` at once (a value `a_b`, `a b` or `a,b`). */
  pairParams: readonly ExtraCorrectionPairParam[];
  /** The metric names the framework logs for it (the keys of `run(...).metrics`). */
  metricNames: readonly string[];
  /**
   * Applies the mode to a batch; `params` by canonical name or alias (missing ones take the
   * framework's defaults). Throws what {@link resolveExtraCorrectionParams} and the kernel throw.
   */
  run(
    inputs: RolloutLogProbs,
    shape: Shape2,
    params?: Readonly<Record<string, string | number | null>>,
  ): FrameworkCorrectionResult;
}

const TRL_CITATION =
  'huggingface/trl f2cd57710ae345ea6428ae95363267fcf38a3dc8, trl/trainer/grpo_trainer.py ' +
  'GRPOTrainer._generate_and_score_completions (vLLM IS block and sampling/ metrics); trl/trainer/grpo_config.py';
const OPENRLHF_CITATION =
  'OpenRLHF/OpenRLHF 3c3be6234e0cb353e76bb8019947db9dfe99fca7, openrlhf/models/loss.py PolicyLoss.forward; ' +
  'flags in openrlhf/cli/train_ppo_ray.py';

const TRL_PARAMS: readonly ExtraCorrectionParam[] = Object.freeze([
  Object.freeze({
    name: 'vllm_importance_sampling_clip_max',
    aliases: Object.freeze(['clip_max', 'cap', 'vllm_importance_sampling_cap']),
    default: TRL_VLLM_IS_DEFAULTS.clipMax,
    nullable: true,
    doc:
      'C_max: *_truncate clamps ratios above it, *_mask zeroes them; null = no upper bound. ' +
      '`vllm_importance_sampling_cap` is its deprecated name (TRL copies it into clip_max).',
  }),
  Object.freeze({
    name: 'vllm_importance_sampling_clip_min',
    aliases: Object.freeze(['clip_min']),
    default: TRL_VLLM_IS_DEFAULTS.clipMin,
    nullable: true,
    doc: 'C_min: *_truncate clamps ratios below it, *_mask zeroes them; null = no lower bound. Must be < C_max.',
  }),
]);

const TRL_DOCS: Record<TrlVllmIsMode, string> = {
  token_truncate: 'per-token ratio exp(old − rollout) clamped to [C_min, C_max]',
  token_mask: 'per-token ratio, zeroed (token masked) outside [C_min, C_max]',
  sequence_truncate: 'one ratio per row, exp(Σ_t (old − rollout)), clamped to [C_min, C_max]',
  sequence_mask: 'one ratio per row, exp(Σ_t (old − rollout)); rows outside [C_min, C_max] are masked',
};

const OPENRLHF_PARAMS: readonly ExtraCorrectionParam[] = Object.freeze([
  Object.freeze({
    name: 'is_correction_threshold_low',
    aliases: Object.freeze(['low']),
    default: OPENRLHF_IS_DEFAULTS.low,
    nullable: false,
    doc: 'L, the first value of `--algo.advantage.is_correction_threshold` (older `--vllm_is_truncated_threshold`).',
  }),
  Object.freeze({
    name: 'is_correction_threshold_high',
    aliases: Object.freeze(['high']),
    default: OPENRLHF_IS_DEFAULTS.high,
    nullable: false,
    doc: 'H, the second value of `--algo.advantage.is_correction_threshold` (older `--vllm_is_truncated_threshold`).',
  }),
]);

const OPENRLHF_PAIRS: readonly ExtraCorrectionPairParam[] = Object.freeze([
  Object.freeze({
    name: 'is_correction_threshold',
    aliases: Object.freeze(['vllm_is_truncated_threshold']),
    sets: Object.freeze(['is_correction_threshold_low', 'is_correction_threshold_high'] as const),
    doc: 'both thresholds at once, as OpenRLHF takes them: `0.5_5.0` (or `0.5 5.0`, `0.5,5.0`)',
  }),
]);

const OPENRLHF_DOCS: Record<OpenRlhfIsCorrectionType, string> = {
  tis: 'per-token ratio exp(old − rollout) clamped to [L, H] from both sides',
  icepop: 'per-token ratio, zeroed (token masked) outside [L, H]',
  'seq-mask-tis':
    'rows whose geometric-mean ratio exp(mean_t(old − rollout)) is outside [L, H] are masked; kept tokens carry their unclamped ratio',
};

function trlMode(mode: TrlVllmIsMode): ExtraCorrectionMode {
  const m: ExtraCorrectionMode = {
    id: `trl:${mode}`,
    framework: 'trl',
    name: mode,
    selectedBy: `vllm_importance_sampling_mode="${mode}" (with vllm_importance_sampling_correction=True)`,
    isDefault: mode === TRL_VLLM_IS_DEFAULTS.mode,
    doc: TRL_DOCS[mode],
    citation: TRL_CITATION,
    params: TRL_PARAMS,
    pairParams: Object.freeze([]),
    metricNames: Object.freeze([
      'sampling/sampling_logp_difference/mean',
      'sampling/sampling_logp_difference/max',
      'sampling/importance_sampling_ratio/min',
      'sampling/importance_sampling_ratio/mean',
      'sampling/importance_sampling_ratio/max',
    ]),
    run: (inputs, shape, params = {}) => {
      const p = resolveExtraCorrectionParams(m, params);
      return trlVllmImportanceSampling(inputs, shape, {
        mode,
        clipMax: p.vllm_importance_sampling_clip_max ?? null,
        clipMin: p.vllm_importance_sampling_clip_min ?? null,
      });
    },
  };
  return Object.freeze(m);
}

function openrlhfMode(type: OpenRlhfIsCorrectionType): ExtraCorrectionMode {
  const m: ExtraCorrectionMode = {
    id: `openrlhf:${type}`,
    framework: 'openrlhf',
    name: type,
    selectedBy: `--algo.advantage.is_correction_enable --algo.advantage.is_correction_type ${type}`,
    isDefault: type === OPENRLHF_IS_DEFAULTS.type,
    doc: OPENRLHF_DOCS[type],
    citation: OPENRLHF_CITATION,
    params: OPENRLHF_PARAMS,
    pairParams: OPENRLHF_PAIRS,
    metricNames: Object.freeze(['vllm_kl']),
    run: (inputs, shape, params = {}) => {
      const p = resolveExtraCorrectionParams(m, params);
      return openrlhfVllmImportanceSampling(inputs, shape, {
        type,
        low: p.is_correction_threshold_low as number,
        high: p.is_correction_threshold_high as number,
      });
    },
  };
  return Object.freeze(m);
}

/** Every non-verl correction mode, TRL's then OpenRLHF's, each in its framework's order. */
export const EXTRA_CORRECTION_MODES: readonly ExtraCorrectionMode[] = Object.freeze([
  ...TRL_VLLM_IS_MODES.map(trlMode),
  ...OPENRLHF_IS_CORRECTION_TYPES.map(openrlhfMode),
]);

/**
 * The mode with id `framework:name` (e.g. `trl:sequence_mask`, `openrlhf:icepop`). Throws
 * UNKNOWN_MODE naming the id and listing the known ones.
 */
export function findExtraCorrectionMode(id: string): ExtraCorrectionMode {
  const mode = EXTRA_CORRECTION_MODES.find((m) => m.id === id);
  if (!mode) {
    throw new LabError(
      'UNKNOWN_MODE',
      `correction ${JSON.stringify(id)} is not known; expected one of ${EXTRA_CORRECTION_MODES.map((m) => m.id).join(', ')}`,
      { details: { field: 'correction', value: id } },
    );
  }
  return mode;
}

function parseValue(
  mode: ExtraCorrectionMode,
  key: string,
  param: ExtraCorrectionParam,
  raw: string | number | null,
): number | null {
  const bad = (why: string) =>
    new LabError('BAD_OPTION_VALUE', `${mode.id}: ${key}=${String(raw)} ${why}`, {
      details: { field: param.name, value: raw, correction: mode.id },
    });
  const isNull = raw === null || (typeof raw === 'string' && /^(null|none)$/i.test(raw.trim()));
  if (isNull) {
    if (!param.nullable) throw bad('cannot be null');
    return null;
  }
  const v = typeof raw === 'number' ? raw : raw.trim() === '' ? Number.NaN : Number(raw);
  if (!Number.isFinite(v)) throw bad('is not a finite number');
  return v;
}

/**
 * The parameters of `mode`, by canonical name, every one present: the `given` values (by name or
 * alias; numbers, or strings as typed on a command line, `null`/`none` for the framework's None)
 * over the framework's defaults. A pair parameter (`is_correction_threshold=0.5_5.0`) sets both of
 * its parameters. Throws UNKNOWN_OPTION (a key the mode does not take, naming the accepted ones),
 * BAD_OPTION_VALUE (a value that is not a number, null where it is not allowed, a parameter given
 * twice, or a combination the framework refuses, e.g. TRL's C_min ≥ C_max).
 */
export function resolveExtraCorrectionParams(
  mode: ExtraCorrectionMode,
  given: Readonly<Record<string, string | number | null>>,
): Record<string, number | null> {
  const out: Record<string, number | null> = {};
  const setBy: Record<string, string> = {};
  const assign = (param: ExtraCorrectionParam, key: string, raw: string | number | null) => {
    if (param.name in setBy) {
      throw new LabError(
        'BAD_OPTION_VALUE',
        `${mode.id}: ${param.name} is given twice (as ${setBy[param.name]} and as ${key})`,
        { details: { field: param.name, correction: mode.id } },
      );
    }
    setBy[param.name] = key;
    out[param.name] = parseValue(mode, key, param, raw);
  };
  for (const [key, raw] of Object.entries(given)) {
    const param = mode.params.find((p) => p.name === key || p.aliases.includes(key));
    if (param) {
      assign(param, key, raw);
      continue;
    }
    const pair = mode.pairParams.find((p) => p.name === key || p.aliases.includes(key));
    if (pair) {
      const parts = typeof raw === 'string' ? raw.trim().split(/[_\s,]+/) : [];
      if (parts.length !== 2) {
        throw new LabError(
          'BAD_OPTION_VALUE',
          `${mode.id}: ${key}=${String(raw)} needs two numbers, like ${key}=0.5_5.0`,
          { details: { field: pair.name, value: raw, correction: mode.id } },
        );
      }
      pair.sets.forEach((name, k) => {
        const p = mode.params.find((q) => q.name === name) as ExtraCorrectionParam;
        assign(p, key, parts[k] as string);
      });
      continue;
    }
    const accepted = [
      ...mode.params.map((p) => (p.aliases.length ? `${p.name} (${p.aliases.join(', ')})` : p.name)),
      ...mode.pairParams.map((p) => (p.aliases.length ? `${p.name} (${p.aliases.join(', ')})` : p.name)),
    ];
    throw new LabError(
      'UNKNOWN_OPTION',
      `${mode.id}: unknown parameter ${JSON.stringify(key)}; expected one of ${accepted.join(', ')}`,
      { details: { field: key, correction: mode.id } },
    );
  }
  for (const p of mode.params) if (!(p.name in out)) out[p.name] = p.default;
  const problem =
    mode.framework === 'trl'
      ? trlVllmIsProblem({
          mode: mode.name,
          clipMax: out.vllm_importance_sampling_clip_max ?? null,
          clipMin: out.vllm_importance_sampling_clip_min ?? null,
        })
      : openrlhfIsProblem({
          type: mode.name,
          low: out.is_correction_threshold_low as number,
          high: out.is_correction_threshold_high as number,
        });
  if (problem) {
    throw new LabError('BAD_OPTION_VALUE', `${mode.id}: ${problem.field} ${problem.message}`, {
      details: { field: problem.field, correction: mode.id },
    });
  }
  return out;
}

/**
 * A one-line label of a mode with resolved parameters, in the what-if syntax:
 * `trl:sequence_mask,vllm_importance_sampling_clip_max=3,vllm_importance_sampling_clip_min=null`.
 */
export function extraCorrectionLabel(
  mode: ExtraCorrectionMode,
  resolved: Readonly<Record<string, number | null>>,
): string {
  return [mode.id, ...mode.params.map((p) => `${p.name}=${String(resolved[p.name] ?? null)}`)].join(',');
}
