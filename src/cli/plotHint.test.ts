import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { plotHint } from './plotHint.js';

describe('plotHint', () => {
  it('names labs report with a page beside the record, or --html for a sweep', () => {
    const record = join('runs', 'agent__7__20260101-000000', 'record.json');
    expect(plotHint(record, 'run')).toBe(
      `plots: labs report ${record} --html ${join('runs', 'agent__7__20260101-000000', 'report.html')} (or run again with --html)`,
    );
    // a sweep record is drawn by the sweep's own --html page (src/cli/commands/sweep.test.ts)
    expect(plotHint(record, 'sweep')).toBe(
      'plots: run the sweep again with --html (it writes a dose-response page next to its record)',
    );
  });
});
