import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { output } from '../stdout.js';
import { conformanceCommand, coverageLines } from './conformance.js';

async function golden(data: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'labs-golden-'));
  const file = join(dir, 'golden.json');
  await writeFile(file, JSON.stringify(data));
  return file;
}

async function run(file: string): Promise<{ code: number; out: string }> {
  let out = '';
  const spy = vi.spyOn(output, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    const code = await conformanceCommand({ command: 'conformance', file, json: false, debug: false });
    return { code, out };
  } finally {
    spy.mockRestore();
  }
}

describe('coverageLines', () => {
  it('counts cases per verl function by status and names the golden commit', () => {
    const lines = coverageLines(
      [
        { fn: 'compute_a', status: 'matched' },
        { fn: 'compute_b', status: 'unsupported' },
        { fn: 'compute_a', status: 'deviation' },
        { fn: 'compute_a', status: 'matched' },
      ],
      { verl_commit: 'abc123' },
    );
    expect(lines[0]).toBe('golden outputs of verl at commit abc123, per function:');
    const text = lines.join('\n');
    // cases, matched, mismatched, deviation, unsupported
    expect(text).toMatch(/^compute_a\s+3\s+2\s+0\s+1\s+0$/m);
    expect(text).toMatch(/^compute_b\s+1\s+0\s+0\s+0\s+1$/m);
  });
});

describe('labs conformance', () => {
  it('refuses a golden file with an empty cases array instead of passing with 0 matched', async () => {
    const file = await golden({ meta: {}, cases: [] });
    await expect(run(file)).rejects.toMatchObject({
      code: 'PARSE_ERROR',
      message: expect.stringContaining(`${file}: the "cases" array is empty`),
    });
  });

  it('exits 1 when every case is unsupported: nothing was compared', async () => {
    const file = await golden({
      cases: [{ name: 'c0', fn: 'compute_not_a_verl_function', inputs: {}, outputs: { y: 1 } }],
    });
    const { code, out } = await run(file);
    expect(code).toBe(1);
    expect(out).toContain('0 matched, 0 mismatched, 0 deviations, 1 unsupported');
    expect(out).toContain('no case was compared');
  });

  it.each([
    [{}, /"outputs" has no compared output, so it checks nothing/],
    [undefined, /has no "outputs", so it checks nothing/],
  ])('a case with outputs %j is an error naming file and case, never a pass', async (outputs, problem) => {
    const good = {
      name: 'ok',
      fn: 'agg_loss',
      inputs: { loss_mat: [[1, 2]], loss_mask: [[1, 1]] },
      config: { args: { loss_agg_mode: 'token-mean' } },
      outputs: { loss: 1.5 },
    };
    const file = await golden({ meta: {}, cases: [good, { ...good, name: 'empty', outputs }] });
    await expect(run(file)).rejects.toMatchObject({
      code: 'PARSE_ERROR',
      message: expect.stringMatching(
        new RegExp(`^${file}: case 1 'empty' \\(agg_loss\\): ${problem.source}`),
      ),
    });
  });

  it('does not flag the repository golden file, whose cases are compared', async () => {
    const { out } = await run('test/golden/verl-core-algos.json');
    const matched = Number(/^(\d+) matched/m.exec(out)?.[1]);
    expect(matched).toBeGreaterThan(0);
    expect(out).not.toContain('no case was compared');
    expect(out).toContain('golden outputs of verl at commit b178a3cd');
    expect(out).toMatch(/^compute_grpo_outcome_advantage\s+\d+\s+\d+/m);
    // The summary stays the last line (scripts read it with tail -1).
    expect(out.trimEnd().split('\n').at(-1)).toMatch(
      /^\d+ matched, \d+ mismatched, \d+ deviations, \d+ unsupported$/,
    );
  });
});
