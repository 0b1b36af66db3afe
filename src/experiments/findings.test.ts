import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseFindings, runSets } from './findings.js';

describe('findings manifests', () => {
  it("docs/scale-out.md's example is a valid manifest", () => {
    const doc = readFileSync('docs/scale-out.md', 'utf8').split('## Findings manifests')[1] ?? '';
    const block = /```json\n([\s\S]*?)```/.exec(doc)?.[1] as string;
    const m = parseFindings(JSON.parse(block), 'docs/scale-out.md');
    expect(m.runs.map((r) => r.name)).toEqual(['mask-table', 'mask-neural', 'mask-lr']);
    expect(m.comparisons[0]?.metrics).toEqual(['eval_success.correct']);
  });

  it('fills defaults, and the command line options come after (and win over) the manifest ones', () => {
    const m = parseFindings(
      {
        format: 'labs-findings/1',
        title: 't',
        seeds: '1..2',
        runs: [{ name: 'a', experiment: 'mask', set: { lr: 0.1, policy: 'table', x: true } }],
      },
      'f.json',
    );
    expect(m.comparisons).toEqual([]);
    expect(runSets(m.runs[0] as never, ['lr=0.2'])).toEqual(['lr=0.1', 'policy=table', 'x=true', 'lr=0.2']);
  });

  it.each([
    [{ format: 'labs-findings/2' }, /f\.json: format: /],
    [{ runs: [] }, /f\.json: runs: /],
    [{ runs: [{ name: 'A B', experiment: 'mask' }] }, /f\.json: runs\[0\]\.name: lower-case/],
    [
      {
        runs: [
          { name: 'a', experiment: 'mask' },
          { name: 'a', experiment: 'agent' },
        ],
      },
      /f\.json: runs\[1\]\.name: 'a' names two runs/,
    ],
    [
      { runs: [{ name: 'a', experiment: 'mask', sweep: 'lr=1,2' }], comparisons: [{ a: 'a', b: 'a' }] },
      /f\.json: comparisons\[0\]\.a: 'a' is a sweep/,
    ],
  ])('refuses %j naming the field', (fields, message) => {
    const base = {
      format: 'labs-findings/1',
      title: 't',
      seeds: '1..2',
      runs: [{ name: 'a', experiment: 'mask' }],
    };
    expect(() => parseFindings({ ...base, ...fields }, 'f.json')).toThrow(message);
  });
});
