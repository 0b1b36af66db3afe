/**
 * reasoning-rl-labs public API: the verl-exact kernels and the lab's building blocks.
 * (Each kernel family adds its exports below.)
 */
export * from './core/batch.js';
export * from './core/errors.js';
export * from './core/stats.js';
export { Rng } from './random.js';
export type * from './experiments/types.js';
export * from './core/aggLoss.js';
export * from './core/policyLoss.js';
export * from './core/policyLosses.js';
export * from './core/kl.js';
export * from './core/entropy.js';
export * from './core/valueLoss.js';
export * from './core/rolloutCorrection.js';
export * from './core/bypassLoss.js';
// Advantage estimators, masked helpers, group utilities, diagnostics and convention presets (H1).
export * from './core/advantage.js';
export * from './core/gae.js';
export * from './core/gpg.js';
export * from './core/groupDiagnostics.js';
export * from './core/groupwise.js';
export * from './core/grpoPassk.js';
export * from './core/klReward.js';
export * from './core/masked.js';
export * from './core/opo.js';
export * from './core/optimalTokenBaseline.js';
export * from './core/presets.js';
export * from './core/reinforcePlusPlus.js';
export * from './core/remax.js';
export * from './core/rloo.js';
export * from './core/rowScores.js';
// HTML reports with Plot-drawn SVG plots (H7).
export { type HtmlReportOptions, type HtmlReportResult, writeHtmlReport } from './report/html.js';
export { type PlotSpec, planPlots } from './report/plotData.js';
// Async rollout (H5): importance weights + Kish ESS, lag statistics, the event simulation, the off-policy learner.
export * from './core/ess.js';
export * from './core/lagStats.js';
export * from './train/asyncLearner.js';
export * from './train/eventSim.js';
export * from './train/generationLength.js';
// Rollout-dump audit (H4): DuckDB is imported only when runAudit runs.
export { AUDIT_DEFAULTS, type AuditOptions, runAudit } from './audit/audit.js';
export { AUDIT_PRESETS, type AuditPresetName, CANONICAL_COLUMNS } from './audit/presets.js';
// Token-level lab (H6): the token env (as a namespace), the context policy, the token PPO learner.
export * as tokenEnv from './envs/tokenArithmetic.js';
export { ContextPolicy, chainLogProbGrad } from './policy/contextPolicy.js';
export { Optimizer, type OptimizerKind, type OptimizerOptions } from './train/adam.js';
export {
  gatherLogProbs,
  groupAdvantages as tokenGroupAdvantages,
  type MaskRule,
  outcomeTokenRewards,
  type PackedBatch,
  packTranscripts,
  ppoUpdate,
  responseMaskFromRoles,
  type Transcript,
  tokenLossAndGrad,
} from './train/tokenLearner.js';
