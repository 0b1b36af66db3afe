/**
 * The line a run prints after `record: PATH` when it wrote no HTML page, so that a newcomer learns
 * where the plots are: `labs report` draws a record (single- or multi-seed) as a page, and `--html`
 * on the run writes one directly. A sweep record is drawn by its run's `--html` (its own
 * dose-response page), so a sweep's hint names that flag only.
 */
import { dirname, join } from 'node:path';

/** `plots: labs report R --html DIR/report.html (or run again with --html)`, DIR the record's directory. */
export function plotHint(recordPath: string, kind: 'run' | 'sweep'): string {
  if (kind === 'sweep') {
    return 'plots: run the sweep again with --html (it writes a dose-response page next to its record)';
  }
  return `plots: labs report ${recordPath} --html ${join(dirname(recordPath), 'report.html')} (or run again with --html)`;
}
