import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { output } from '../stdout.js';
import { reportCommand } from './report.js';

async function report(record: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'labs-report-cmd-'));
  const file = join(dir, 'record.json');
  await writeFile(file, JSON.stringify(record));
  let out = '';
  const spy = vi.spyOn(output, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await reportCommand({
      command: 'report',
      records: [file],
      html: join(dir, 'r.html'),
      png: null,
      debug: false,
    });
  } finally {
    spy.mockRestore();
  }
  return out;
}

describe('labs report output line', () => {
  it("says 'no plots' for a record without curves, and counts one plot in the singular", async () => {
    expect(await report({ experiment: 'x', seed: 1, metrics: { a: 1 } })).toMatch(/\(no plots\)\n/);
    const one = await report({
      experiment: 'x',
      seed: 1,
      metrics: {},
      curves: { update: [1, 2], 'loss.train': [0.5, 0.25] },
    });
    expect(one).toMatch(/\(1 plot: loss\)\n/);
  });
});
