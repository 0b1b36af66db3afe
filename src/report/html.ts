import { LabError } from '../core/errors.js';
import type { MultiSeedRecord, RunRecord } from '../experiments/types.js';

export interface HtmlReportOptions {
  html: string;
  png: string | null;
  /** Where each record came from (shown in the page). */
  sources: string[];
}

// Placeholder until the HTML report lands (issue 7); replaced by the real renderer.
export async function writeHtmlReport(
  _records: (RunRecord | MultiSeedRecord)[],
  _o: HtmlReportOptions,
): Promise<void> {
  throw new LabError('NOT_SUPPORTED', 'HTML reports are not available in this build yet');
}
