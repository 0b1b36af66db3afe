import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type FindingsResults,
  formatDiff,
  formatP,
  renderFindingsGoals,
  renderFindingsResults,
  renderFindingsTable,
} from './findingsResults.js';

// A committed results file: the renderers read what labs findings writes.
const results = JSON.parse(readFileSync('docs/findings/filter.results.json', 'utf8')) as FindingsResults;

describe('findings results tables', () => {
  it('one row per claim with both seed sets, status, and the command that rebuilds it', () => {
    const md = renderFindingsResults(results, ['agent-noisy-range.']);
    const rows = md.split('\n').filter((l) => l.startsWith('| agent-noisy-range'));
    expect(rows).toHaveLength(3);
    const claim = results.claims.find((c) => c.id === 'agent-noisy-range.dynamic-per-generated');
    const c = claim?.confirmation;
    expect(c).toBeTruthy();
    if (!c) return;
    expect(md).toContain(`${formatDiff(c.mean)} [${formatDiff(c.ci95[0])}, ${formatDiff(c.ci95[1])}]`);
    expect(md).toContain(`${c.sign.up}/${c.sign.down}, p ${formatP(c.sign.p)}`);
    expect(md).toContain('discovery, 30 seeds');
    expect(md).toContain('confirmation, 60 seeds');
    expect(md).toContain('`npm run findings -- filter`');
  });

  it('refuses a claim prefix or table id that matches nothing (a renamed claim would empty a table)', () => {
    expect(() => renderFindingsResults(results, ['nope.'])).toThrow("no claim id starts with 'nope.'");
    expect(() => renderFindingsTable(results, 'nope')).toThrow("no table 'nope'");
  });

  it('descriptive tables: discovery / confirmation means per cell', () => {
    const md = renderFindingsTable(results, 'agent-binary-arms');
    const keep = md.split('\n').find((l) => l.startsWith('| keep |')) ?? '';
    const cell = results.tables.find((t) => t.id === 'agent-binary-arms')?.rows[0]?.cells[0];
    expect(keep).toContain(
      `${Number(cell?.discovery?.toPrecision(4))} / ${Number(cell?.confirmation?.toPrecision(4))}`,
    );
  });

  it('goals: the measured value and met / not met on each seed set, failing seeds named', () => {
    const goals = JSON.parse(
      readFileSync('docs/findings/warm-start.results.json', 'utf8'),
    ) as FindingsResults;
    const md = renderFindingsGoals(goals);
    const band = md.split('\n').find((l) => l.startsWith("| after pretraining: each level's")) ?? '';
    const g = goals.goals?.find((x) => x.id === 'pretrain-band');
    expect(g?.kind).toBe('seeds');
    const d = g?.discovery as { passing: number; n: number; met: boolean; failing: number[] };
    expect(band).toContain(`${d.passing} of ${d.n}`);
    expect(band).toContain(d.met ? '**met**' : 'not met');
    if (d.failing.length) expect(band).toContain(`fails: seed ${d.failing.join(', ')}`);
    const sd =
      md
        .split('\n')
        .find((l) => l.includes('between-seed sd') && l.includes('| mask-neural-sft-lr0.001 |')) ?? '';
    expect(sd).toMatch(/\d\.\d{3} ÷ \d\.\d{3} = \d\.\d{3}: (\*\*met\*\*|not met)/);
    expect(() => renderFindingsGoals(results)).toThrow('the results have no goals');
  });

  it('prints differences with a true minus sign and p-values without false precision', () => {
    expect(formatDiff(-0.012345)).toBe('−0.0123');
    expect(formatDiff(0)).toBe('0');
    expect(formatDiff(4.2e-5)).toBe('4.2e-5');
    expect(formatP(0.99999)).toBe('1');
    expect(formatP(0.0012345)).toBe('0.0012');
    expect(formatP(1e-5)).toBe('1.0e-5');
  });
});
