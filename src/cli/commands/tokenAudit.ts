/**
 * The token-level side of `labs audit` (`--preset nemo-rl | prime-rl | generic-tokens`) and its
 * `--html` page, kept apart from audit.ts: running the audit from the parsed options, the command
 * line that reproduces it (the page's rerun line), and writing the page.
 */
import type { TokenPresetName } from '../../audit/tokens/presetNames.js';
import type { RunRecord } from '../../experiments/types.js';
import type { ParsedCli } from '../parse.js';
import { output } from '../stdout.js';

type AuditCli = Extract<ParsedCli, { command: 'audit' }>;

/** Runs the token audit of the parsed command (the audit module is loaded only here). */
export async function runTokenAuditCli(
  p: AuditCli,
  onProgress: (done: number, total: number) => void,
): Promise<RunRecord> {
  const { runTokenAudit } = await import('../../audit/tokens/tokenAudit.js');
  const record = await runTokenAudit(p.path, {
    preset: p.preset as TokenPresetName,
    columns: p.tokenExtra.columns,
    skipBadRows: p.skipBadRows,
    whatIf: p.tokenExtra.whatIf,
    byRound: p.tokenExtra.byRound,
    ...(p.tokenExtra.probEdges ? { probEdges: p.tokenExtra.probEdges } : {}),
    ...(p.memoryLimit === null ? {} : { memoryLimit: p.memoryLimit }),
    onProgress,
  });
  // --metrics with prime-rl's token export: its per-env entropy / mismatch_kl means (parse-time
  // checks refuse --metrics for the other token presets)
  if (p.auditExtra.metricsLog !== null && p.preset === 'prime-rl') {
    const { addPrimeEnvLogAudit } = await import('../../audit/metricsLog/primeEnvExport.js');
    await addPrimeEnvLogAudit(record, p.path, p.auditExtra.metricsLog, p.skipBadRows);
  }
  return record;
}

/** Quotes one shell word when it needs it. */
function shellWord(w: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`;
}

/**
 * `labs audit PATH --preset P ...`: the options that shape the numbers, for the page's rerun line
 * (which options: the `rerun` entries of AUDIT_OPTIONS, src/cli/auditOptions.ts).
 */
export function auditRerunLine(p: AuditCli): string {
  return ['labs', 'audit', p.path, '--preset', p.preset, ...p.rerunWords].map(shellWord).join(' ');
}

/** Writes the audit's page (`--html FILE`) and says where, on stderr when stdout carries JSON. */
export async function writeAuditHtml(record: RunRecord, html: string, p: AuditCli): Promise<void> {
  const { writeHtmlReport } = await import('../../report/html.js');
  const result = await writeHtmlReport([record], {
    html,
    png: null,
    sources: [p.path],
    reruns: [auditRerunLine(p)],
  });
  const line = `report: ${result.html} (${result.plotted.length} plot(s): ${result.plotted.join(', ')})\n`;
  if (p.json) process.stderr.write(line);
  else output.write(line);
}
