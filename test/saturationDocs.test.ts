/**
 * docs/experiments/saturation.md quotes the paired results that scripts/saturation-results.ts prints
 * from the per-seed rows stored beside it; this checks that every printed line is in the page.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('docs/experiments/saturation.md', () => {
  it('quotes the tables the script prints from docs/experiments/saturation-seeds.json', () => {
    const printed = execFileSync(
      process.execPath,
      ['--import', 'tsx', 'scripts/saturation-results.ts', 'docs/experiments/saturation-seeds.json'],
      { encoding: 'utf8' },
    );
    const page = readFileSync('docs/experiments/saturation.md', 'utf8');
    const lines = printed.split('\n').filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(20);
    for (const line of lines) expect(page).toContain(line);
  });
});
