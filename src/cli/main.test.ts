// The entry point's process-level behaviour, through a real child process.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('labs entry point', () => {
  it('stops quietly when stdout is closed early (labs run --json | head), no EPIPE stack', async () => {
    const out = mkdtempSync(join(tmpdir(), 'labs-epipe-'));
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'src/cli/main.ts',
        'run',
        '-e',
        'agent',
        '--set',
        'eval_tasks=20',
        '--json',
        '--out',
        out,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += String(d);
    });
    // Close the read end before the child writes: its first write to stdout fails with EPIPE.
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).not.toContain('Unhandled');
    expect(code).toBe(0);
  }, 20_000);
});
