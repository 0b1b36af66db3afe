/**
 * reasoning-rl-labs public API: the verl-exact kernels (src/core), seeded streams, the environments,
 * policies and learners of the experiments, the rollout-dump audit and the HTML reports.
 * The agent environment and the token-level environment are exported as namespaces
 * (`toolEnv`, `tokenEnv`) because they share vocabulary names (actions, stages).
 */

export { AUDIT_DEFAULTS, type AuditOptions, runAudit } from './audit/audit.js';
export { AUDIT_PRESETS, type AuditPresetName, CANONICAL_COLUMNS } from './audit/presets.js';
export * from './core/aggLoss.js';
export * from './core/batch.js';
export * from './core/bypassLoss.js';
export * from './core/cispoLoss.js';
export * from './core/covarianceLosses.js';
export * from './core/entropy.js';
export * from './core/errors.js';
export * from './core/ess.js';
export * from './core/gae.js';
export * from './core/gpg.js';
export * from './core/groupDiagnostics.js';
export * from './core/groupwise.js';
export * from './core/grpo.js';
export * from './core/grpoPassk.js';
export * from './core/kl.js';
export * from './core/klReward.js';
export * from './core/lagStats.js';
export * from './core/logProbLosses.js';
export * from './core/masked.js';
export * from './core/opo.js';
export * from './core/optimalTokenBaseline.js';
export * from './core/policyLossInputs.js';
export * from './core/presets.js';
export * from './core/reinforcePlusPlus.js';
export * from './core/remax.js';
export * from './core/rloo.js';
export * from './core/rolloutCorrection.js';
export * from './core/rowScores.js';
export * from './core/sapoLoss.js';
export * from './core/sequenceRatioLosses.js';
export * from './core/stats.js';
export * from './core/vanillaPolicyLoss.js';
export * as tokenEnv from './envs/tokenArithmetic.js';
export * as toolEnv from './envs/toolArithmetic.js';
export type * from './experiments/types.js';
export { ContextPolicy, chainLogProbGrad } from './policy/contextPolicy.js';
export * as tabularPolicy from './policy/tabular.js';
export { Rng } from './random.js';
export { type HtmlReportOptions, type HtmlReportResult, writeHtmlReport } from './report/html.js';
export { type PlotSpec, planPlots } from './report/plotData.js';
export { Optimizer, type OptimizerKind, type OptimizerOptions } from './train/adam.js';
export * from './train/asyncLearner.js';
export * from './train/eventSim.js';
export * from './train/generationLength.js';
export {
  reinforceGradient,
  reinforceGroupAdvantages,
} from './train/groupReinforce.js';
export {
  gatherLogProbs,
  type MaskRule,
  outcomeTokenRewards,
  type PackedBatch,
  packTranscripts,
  ppoUpdate,
  responseMaskFromRoles,
  type Transcript,
  tokenGroupAdvantages,
  tokenLossAndGrad,
} from './train/tokenLearner.js';
