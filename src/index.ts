/**
 * reasoning-rl-labs: the public library entry. A deliberate list, grouped by what a user does with
 * it; every name below is documented where it is defined (formula, shapes, defaults, the verl/TRL
 * name). Anything not listed here (validators, accumulator layouts, unchecked primitives, group-id
 * helpers) is internal and may change without notice. docs/kernels-api.md explains each group.
 *
 * This entry (`.` of the package's exports map) is the pure part: kernels, statistics, environments,
 * policies and learners, which import no Node built-in and so also load in a browser or a worker.
 * What needs Node (files, DuckDB) has its own subpath: `reasoning-rl-labs/experiments`
 * (src/experiments/index.ts), `reasoning-rl-labs/audit` (src/audit/index.ts) and
 * `reasoning-rl-labs/report` (src/report/index.ts, with the prime-rl token-export writer).
 * test/packageExports.test.ts checks that this entry's module graph reaches no `node:` import.
 *
 * Kernels take their `[B,T]` arrays as ONE named object (verl's argument names in camelCase), then
 * the shape, then options: `policyLossVanilla({ oldLogProb, logProb, advantages, responseMask },
 * { rows, cols }, { clipRatio: 0.2 })`. A swapped argument is a type error, not a wrong number.
 */
// biome-ignore-all assist/source/organizeImports: the exports are grouped by topic, not sorted by path

// ── Errors and batch types ─────────────────────────────────────────────────────────────────────
export { isLabError, LabError, type LabErrorCode, type LabErrorOptions } from './core/errors.js';
export type {
  FloatArray,
  GroupLabel,
  GroupLabels,
  MaskArray,
  OutcomeBatch,
  OutOption,
  OutReturnsOption,
  RowOutOption,
  Shape2,
} from './core/batch.js';

// ── Advantages (verl `compute_*_outcome_advantage`, GAE) ───────────────────────────────────────
export {
  type AdvantageReturn,
  GRPO_DEFAULTS,
  type GroupNormOptions,
  type GrpoAdvantageOptions,
  grpoAdvantage,
  grpoScalarAdvantages,
  grpoVectorizedAdvantage,
  type SingletonRule,
  type StdKind,
  type VectorizedGroupNormOptions,
} from './core/grpo.js';
export { rlooAdvantage, rlooVectorizedAdvantage } from './core/rloo.js';
export { opoAdvantage } from './core/opo.js';
export { GPG_DEFAULTS, type GpgOptions, gpgAdvantage } from './core/gpg.js';
export { PASSK_DEFAULTS, type PasskOptions, grpoPasskAdvantage } from './core/grpoPassk.js';
export { type RemaxInputs, remaxAdvantage } from './core/remax.js';
export {
  REINFORCE_PLUS_PLUS_DEFAULTS,
  type ReinforcePlusPlusInputs,
  type ReinforcePlusPlusOptions,
  reinforcePlusPlusAdvantage,
  reinforcePlusPlusBaselineAdvantage,
} from './core/reinforcePlusPlus.js';
export {
  MULTI_TURN_OPTIMAL_TOKEN_BASELINE_DEFAULTS,
  multiTurnOptimalTokenBaselineAdvantage,
  OPTIMAL_TOKEN_BASELINE_DEFAULTS,
  type OptimalTokenBaselineInputs,
  type OptimalTokenBaselineOptions,
  type OptimalTokenBaselineResult,
  optimalTokenBaselineAdvantage,
} from './core/optimalTokenBaseline.js';
export { type GaeInputs, type GaeOptions, type GaeResult, gaeAdvantageReturn } from './core/gae.js';
export {
  CONVENTION_PRESETS,
  type ConventionPreset,
  type ConventionSpec,
  conventionSpec,
  presetAdvantages,
} from './core/presets.js';

// ── Policy, value and entropy losses (verl `compute_policy_loss_*`, rollout correction) ─────────
export type {
  ClipRatioOptions,
  CommonLossOptions,
  PolicyLossInputs,
  PolicyLossMetrics,
  PolicyLossOutput,
  ReinforceLossInputs,
} from './core/policyLossInputs.js';
export {
  type PolicyLossResult,
  policyLossVanilla,
  policyLossVanillaGrad,
  VANILLA_DEFAULTS,
  type VanillaLossOptions,
} from './core/vanillaPolicyLoss.js';
export {
  type GeoMeanLossOutput,
  GSPO_MAX_LOG_SEQ_RATIO,
  policyLossGeoMean,
  policyLossGspo,
} from './core/sequenceRatioLosses.js';
export { policyLossSapo, type SapoOptions } from './core/sapoLoss.js';
export { policyLossCispo } from './core/cispoLoss.js';
export { policyLossGpg, policyLossReinforce } from './core/logProbLosses.js';
export {
  type ClipCovOptions,
  type KlCovOptions,
  policyLossClipCov,
  policyLossKlCov,
} from './core/covarianceLosses.js';
export {
  type BypassLossOptions,
  type BypassLossResult,
  type BypassLossType,
  policyLossBypass,
} from './core/bypassLoss.js';
export {
  type LogRatioBatch,
  offPolicyMetrics,
  parseRejectionRules,
  type RejectionResult,
  ROLLOUT_IS_DEFAULTS,
  RS_OPTIONS,
  type RolloutCorrectionOptions,
  type RolloutCorrectionResult,
  type RolloutIsLevel,
  type RolloutIsNormalization,
  type RolloutIsOptions,
  type RolloutIsResult,
  type RolloutLogProbs,
  type RolloutMetrics,
  type RsOption,
  type RsRule,
  rolloutCorrection,
  rolloutIsWeights,
  rolloutRejectionMask,
} from './core/rolloutCorrection.js';
// ── Other frameworks' training–inference corrections (TRL, OpenRLHF), one comparable summary ────
export {
  TRL_VLLM_IS_DEFAULTS,
  TRL_VLLM_IS_MODES,
  type TrlVllmIsMode,
  type TrlVllmIsOptions,
  trlVllmImportanceSampling,
} from './core/trlVllmIs.js';
export {
  OPENRLHF_IS_CORRECTION_TYPES,
  OPENRLHF_IS_DEFAULTS,
  type OpenRlhfIsCorrectionType,
  type OpenRlhfIsOptions,
  openrlhfVllmImportanceSampling,
} from './core/openrlhfVllmIs.js';
export {
  type CorrectionOutOptions,
  type CorrectionSummary,
  correctionSummary,
  type FrameworkCorrectionResult,
} from './core/correctionSummary.js';
export {
  type CorrectionFramework,
  EXTRA_CORRECTION_MODES,
  type ExtraCorrectionMode,
  type ExtraCorrectionPairParam,
  type ExtraCorrectionParam,
  extraCorrectionLabel,
  findExtraCorrectionMode,
  resolveExtraCorrectionParams,
} from './core/extraCorrectionModes.js';
export { type ValueLossInputs, type ValueLossResult, valueLoss } from './core/valueLoss.js';
export {
  computeEntropyLoss,
  type EntropyLossInputs,
  entropyFromLogits,
  type Shape3,
} from './core/entropy.js';

// ── Loss aggregation (verl `agg_loss`) ──────────────────────────────────────────────────────────
export {
  type AggDenominator,
  type AggLossInputs,
  type AggOptions,
  aggLoss,
  aggLossDenominator,
  aggLossGrad,
  LOSS_AGG_MODES,
  type LossAggMode,
} from './core/aggLoss.js';

// ── KL (verl `kl_penalty`, `apply_kl_penalty`, `compute_rewards`, the KL controllers) ──────────
export {
  adaptiveKlUpdate,
  applyKlPenalty,
  createKlController,
  K3_LOG_RATIO_CLAMP,
  K3_VALUE_CLAMP,
  KL_PENALTY_NAMES,
  type KlController,
  type KlControllerConfig,
  type KlPenaltyInputs,
  type KlPenaltyName,
  type KlPenaltyOptions,
  type KlRewardInputs,
  type KlRewardResult,
  klPenalty,
} from './core/kl.js';
export { computeRewards, type KlRatioRewardInputs } from './core/klReward.js';

// ── Masked reductions (verl `verl/utils/torch_functional.py`) ──────────────────────────────────
export {
  type MaskedValues,
  type MaskedVarOptions,
  type MaskedWhitenOptions,
  maskedMean,
  maskedRowMeans,
  maskedRowSums,
  maskedSum,
  maskedVar,
  maskedWhiten,
} from './core/masked.js';

// ── Diagnostics: zero-variance groups, importance weights and ESS, ratio statistics by lag ─────
export {
  type ClassifyOptions,
  classifyGroups,
  countGroupKinds,
  type GroupKind,
  type GroupKindCounts,
  type GroupSummary,
} from './core/groupDiagnostics.js';
export {
  importanceRatios,
  type KishEss,
  kishEss,
  LOG_RATIO_CLAMP,
  truncateWeights,
} from './core/ess.js';
export {
  DEFAULT_LAG_BUCKETS,
  type LagBucket,
  type RatioStats,
  ratioStats,
  ratioStatsByLag,
} from './core/lagStats.js';

// ── Training–inference mismatch: number formats, truncated sampling, an inference engine ───────
// (the writer of prime-rl's token-export layout writes files: reasoning-rl-labs/report)
export {
  type OverflowMode,
  PRECISION_NAMES,
  PRECISION_SPECS,
  type PrecisionFormat,
  type PrecisionSpec,
  parsePrecision,
  type RoundOptions,
  roundArrayToPrecision,
  roundToPrecision,
} from './core/precision.js';

export {
  sampleTruncated,
  type TruncatedSample,
  type TruncationOptions,
  truncatedLogProbs,
  truncationMask,
} from './policy/truncatedSampling.js';

export {
  EngineAgent,
  EngineWeightSync,
  InferenceEngine,
  type InferenceEngineOptions,
} from './policy/inferenceEngine.js';

// ── Seeded randomness ───────────────────────────────────────────────────────────────────────────
export { Rng } from './random.js';

// ── Statistics over seeds (src/stats: paired comparison, intervals, tests, power) ─────────────
export { bcaInterval } from './stats/bootstrap.js';
export { holmAdjust } from './stats/holm.js';
export { type PairedComparison, pairedComparison } from './stats/paired.js';
export { minimalDetectableDifference } from './stats/power.js';
export { signFlipTest } from './stats/signFlip.js';
export { wilsonInterval } from './stats/wilson.js';

// ── Environments (namespaces: both define actions and stages) ──────────────────────────────────
export * as tokenEnv from './envs/tokenArithmetic.js';
export * as toolEnv from './envs/toolArithmetic.js';

// ── Policies ────────────────────────────────────────────────────────────────────────────────────
export { ContextPolicy, type ContextPolicyInit, chainLogProbGrad } from './policy/contextPolicy.js';
export * as tabularPolicy from './policy/tabular.js';

// ── Learners: group REINFORCE, token-level PPO, the async rollout/trainer simulation ───────────
export { Optimizer, type OptimizerKind, type OptimizerOptions } from './train/adam.js';
export {
  collectGroups,
  type GroupAdvantageOptions,
  type GroupBatch,
  reinforceGradient,
  reinforceGroupAdvantages,
} from './train/groupReinforce.js';
export {
  gatherLogProbs,
  type MaskRule,
  outcomeTokenRewards,
  type PackedBatch,
  packTranscripts,
  responseMaskFromRoles,
  type Transcript,
  tokenGroupAdvantages,
  tokenLossAndGrad,
} from './train/tokenLearner.js';
export {
  type EntropyBonus,
  type PolicyModel,
  sequencePolicyModel,
  tabularModel,
} from './train/policyModel.js';
export {
  type KlLossSpec,
  type PpoBatch,
  type PpoStepStats,
  type PpoUpdateOptions,
  type PpoUpdateStats,
  ppoUpdate,
} from './train/ppoUpdate.js';
export {
  ASYNC_LEARNER_DEFAULTS,
  type AsyncLearnerOptions,
  type AsyncLearnerResult,
  type AsyncLearnerStreams,
  CORRECTIONS,
  type Correction,
  runAsyncLearner,
} from './train/asyncLearner.js';
export {
  EVENT_SIM_DEFAULTS,
  type EventSimOptions,
  type RolloutMode,
  type SimResult,
  simulateRollout,
} from './train/eventSim.js';
export { LENGTH_DEFAULTS, type LengthModel, sampleActionTokens } from './train/generationLength.js';
