/**
 * `reasoning-rl-labs/report`: the HTML report of `labs report` from records, and the writer of
 * prime-rl's token-export layout (a run that leaves a dump the audit can read). A subpath of its
 * own, apart from the pure kernels of the package entry (`.`), because both write files (`node:fs`,
 * `node:path`; docs/architecture.md §2, the exports map).
 */
export { type HtmlReportOptions, type HtmlReportResult, writeHtmlReport } from './html.js';
export { type PlotSpec, planPlots, type ReportPlan } from './plotData.js';
export {
  type BatchExportColumns,
  PRIME_RL_TOKEN_EXPORT_KEYS,
  primeRlTokenExportLine,
  primeRlTokenExportLines,
  type TokenExportOptions,
  type TokenExportSequence,
  tokenExportSequences,
  writePrimeRlTokenExportStep,
} from './primeRlTokenExport.js';
